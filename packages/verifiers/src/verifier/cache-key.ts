import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

export function sha256(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Everything a verdict depends on. Change any of it and the key changes. */
export interface VerdictKeyParts {
  readonly spec: unknown;
  readonly criterionText: string;
  readonly input: string | undefined;
  readonly output: string;
  /** sha256 of each output file's bytes, with its name. */
  readonly files?: readonly { readonly name: string; readonly sha256: string }[];
  /** Model id, sampling parameters and anything else the verifier reports. */
  readonly identity?: unknown;
  readonly sampleIndex?: number;
}

/**
 * The stable cache key of a verdict: sha256 of the canonical JSON of its parts, versioned so a
 * change to how verdicts are computed can invalidate old caches.
 */
export function verdictCacheKey(parts: VerdictKeyParts): string {
  return sha256(
    canonicalJson({
      v: 1,
      spec: parts.spec,
      criterion: parts.criterionText,
      input: parts.input ?? null,
      output: parts.output,
      files: parts.files ?? [],
      identity: parts.identity ?? null,
      sample: parts.sampleIndex ?? 0,
    }),
  );
}
