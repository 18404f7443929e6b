import type { VerifierSpec } from "@rubric/core";
import type { z } from "zod";

/** A file that is part of an output (a GDPval deliverable: a workbook, a CSV, a report). */
export interface OutputFile {
  /** The name the output gives it, e.g. `schedule.xlsx`. */
  readonly name: string;
  /** Where it is on disk. Code verifiers see it read-only. */
  readonly path: string;
  /** MIME type when known; otherwise guessed from the extension. */
  readonly mimeType?: string;
}

/** What a verifier judges: the output, the input that produced it, and files it consists of. */
export interface VerificationInput {
  readonly input?: string;
  readonly output: string;
  readonly files?: readonly OutputFile[];
  readonly context?: Readonly<Record<string, unknown>>;
}

/** The criterion a verifier is asked about. */
export interface CriterionToVerify {
  readonly id: string;
  readonly text: string;
  readonly verifier: VerifierSpec;
}

export interface VerifyOptions {
  readonly signal?: AbortSignal;
  /** Which of k samples this is (judges sample several times); part of the cache key. */
  readonly sampleIndex?: number;
}

/**
 * A verifier's answer before the engine adds provenance (criterion id, verifier kind, latency,
 * cache key). `score` is a fraction in [0, 1]; an error carries no score, never a 0.
 */
export type VerdictDraft =
  | {
      readonly status: "ok";
      readonly score: number;
      readonly rationale?: string;
      readonly evidence?: unknown;
      readonly costUsd?: number;
      readonly tokens?: number;
    }
  | {
      readonly status: "error";
      readonly score: null;
      readonly error: string;
      readonly evidence?: unknown;
      readonly costUsd?: number;
      readonly tokens?: number;
    }
  | { readonly status: "skipped"; readonly score: null; readonly rationale?: string };

/**
 * One kind of verifier (`regex`, `python`, `llm-judge`, …). Downstream packages add kinds by
 * registering objects of this shape; the engine validates each spec with `specSchema` first.
 * `kind` must be a `VerifierKind`: a package adding one declares it in core's `VerifierKinds`
 * (see this package's README).
 */
export interface Verifier<S extends VerifierSpec = VerifierSpec> {
  readonly kind: S["kind"];
  readonly specSchema: z.ZodType<S>;
  /**
   * A pure, fast, deterministic check (the rule verifiers): the engine runs it inline, with no
   * permit, no cache entry and no cache key, since hashing the output would cost more than the check.
   */
  readonly cheap?: boolean;
  /**
   * What else decides this verifier's verdict besides spec, criterion, input and output — a
   * judge's model id and sampling parameters — so the cache key changes when they do.
   */
  cacheIdentity?(spec: S): Readonly<Record<string, unknown>>;
  /**
   * The verdict computed synchronously, for a deterministic verifier that needs no I/O (the rule
   * verifiers): the engine's batched rule path (`scoreOutputsSync`, and `scoreOutputs` when every
   * criterion has one) calls it in a plain loop. Must agree with `verify`. A throw is an error verdict.
   */
  check?(spec: S, input: VerificationInput): VerdictDraft;
  verify(
    criterion: CriterionToVerify,
    spec: S,
    input: VerificationInput,
    options: VerifyOptions,
  ): Promise<VerdictDraft>;
  /**
   * Judges several criteria of one output in one go (an LLM judge batches them into one call).
   * Returns drafts in the order of `items`.
   */
  verifyMany?(
    items: readonly { readonly criterion: CriterionToVerify; readonly spec: S }[],
    input: VerificationInput,
    options: VerifyOptions,
  ): Promise<VerdictDraft[]>;
}

/** Shorthand for an `ok` draft with the score clamped to [0, 1]. */
export function okDraft(score: number, rationale?: string, evidence?: unknown): VerdictDraft {
  const draft: { status: "ok"; score: number; rationale?: string; evidence?: unknown } = {
    status: "ok",
    score: score < 0 ? 0 : score > 1 ? 1 : score,
  };
  if (rationale !== undefined) draft.rationale = rationale;
  if (evidence !== undefined) draft.evidence = evidence;
  return draft;
}

/** Shorthand for an `error` draft. */
export function errorDraft(error: string, evidence?: unknown): VerdictDraft {
  return { status: "error", score: null, error, evidence };
}
