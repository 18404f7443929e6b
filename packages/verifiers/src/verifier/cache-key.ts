import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
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
 * The stable cache key of a verdict: sha256 over the criterion's digest and the output's parts,
 * versioned so a change to how verdicts are computed can invalidate old caches.
 */
export function verdictCacheKey(parts: VerdictKeyParts): string {
  return verdictCacheKeyFor(criterionDigest(parts), parts);
}

/**
 * The part of a cache key that depends on the criterion alone (spec, text, verifier identity):
 * computed once per criterion, so keying thousands of outputs hashes only what changes.
 */
export function criterionDigest(parts: Pick<VerdictKeyParts, "spec" | "criterionText" | "identity">): string {
  return sha256(canonicalJson({ spec: parts.spec, criterion: parts.criterionText, identity: parts.identity ?? null }));
}

/** The cache key of one output's verdict on a criterion whose digest is known. */
export function verdictCacheKeyFor(
  digest: string,
  parts: Pick<VerdictKeyParts, "input" | "output" | "files" | "sampleIndex">,
): string {
  return sha256(
    JSON.stringify([2, digest, parts.input ?? null, parts.output, parts.files ?? [], parts.sampleIndex ?? 0]),
  );
}
