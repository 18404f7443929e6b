import {
  checkWeights,
  scoreRubric,
  type ErrorPolicy,
  type FlatRubric,
  type RubricCriterion,
  type RubricScore,
  type ScoreOptions,
  type StagedRubric,
  type Verdict,
  type VerifierSpec,
} from "@rubric/core";
import { Effect } from "effect";
import type { VerdictCache } from "../verifier/cache.js";
import { criterionDigest, verdictCacheKeyFor } from "../verifier/cache-key.js";
import { checkVerifierSpecs } from "../registry/check.js";
import { fileDigest } from "./output-files.js";
import { createVerifierRegistry, type VerifierRegistry } from "../registry/registry.js";
import {
  errorDraft,
  type CriterionToVerify,
  type VerdictDraft,
  type VerificationInput,
  type Verifier,
} from "../verifier/verifier.js";
import { VerificationSetupError } from "./errors.js";
import { confineOutputFiles } from "./output-files.js";
import { PermitPool } from "./permits.js";
import { VerifierOptionsError } from "../errors.js";

/** One output to score: an id of the caller's choosing, plus what verifiers judge. */
export interface OutputToScore extends VerificationInput {
  readonly id: string;
}

export interface ScoreOutputsOptions {
  /**
   * The verifiers by kind. Default `createVerifierRegistry()`: every built-in kind that needs no
   * model (rules, `js`, `python`); a rubric with `llm-judge` criteria needs a registry with a judge.
   */
  readonly registry?: VerifierRegistry;
  /** Verdicts found here are not recomputed; new ok verdicts are stored. */
  readonly cache?: VerdictCache;
  /** Verifier calls in flight at once, across all outputs. Default 8. */
  readonly concurrency?: number;
  /**
   * A pool of permits to share with other calls (the reward server's one limit across requests);
   * verifier calls then wait for its permits instead of a pool of `concurrency` of their own.
   */
  readonly permits?: PermitPool;
  /** How scores treat error verdicts (they are reported either way). Default `fail`: score null. */
  readonly errorsAs?: ErrorPolicy;
  readonly ignoreGates?: boolean;
  /** Weight overrides by criterion id (staged: rule points), as `scoreRubric` takes them: a person's test-time edit. */
  readonly weights?: ScoreOptions["weights"];
  readonly signal?: AbortSignal;
  /** Called after each output is finished. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * The directory outputs' files must resolve under (symlinks followed). A file outside it is
   * never read or mounted: its output gets an error verdict per criterion naming the path
   * (`OutputFileOutsideRootError`). Unset, paths are taken as given: set it whenever the outputs
   * come from someone else (the CLI sets it to the outputs file's directory).
   */
  readonly filesRoot?: string;
  /**
   * The largest output file taken, in bytes (default 1 GiB). Each file is hashed for the cache key
   * before any verifier runs; a larger one is refused by its size, unread, as that output's error
   * verdicts (`OutputFileTooLargeError`).
   */
  readonly maxFileBytes?: number;
}

export interface ScoredOutput {
  readonly id: string;
  /** One verdict per verified criterion (staged: stages after a stopping gate are not verified). */
  readonly verdicts: readonly Verdict[];
  /** Null when the score could not be computed (e.g. an error verdict under `errorsAs: "fail"`). */
  readonly score: RubricScore | null;
  /** Why `score` is null. */
  readonly scoreError?: string;
  readonly errors: number;
}

interface Prepared {
  readonly criterion: RubricCriterion;
  readonly verifier: Verifier;
  readonly spec: VerifierSpec;
  /** The criterion's share of every cache key (undefined for cheap verifiers, which are not cached). */
  readonly digest?: string;
}

/**
 * Checks every criterion's verifier spec against the registry before anything runs, so a
 * misconfigured rubric costs no judge calls. @throws VerificationSetupError listing every problem.
 */
export function prepareCriteria(rubric: FlatRubric | StagedRubric, registry: VerifierRegistry): Prepared[] {
  const problems: { criterionId: string; problem: string }[] = [];
  const prepared: Prepared[] = [];
  for (const check of checkVerifierSpecs(rubric, registry)) {
    const { criterion } = check;
    if (!check.ok || !check.verifier) {
      problems.push({ criterionId: criterion.id, problem: check.ok ? "no verifier" : check.problem });
      continue;
    }
    const { verifier, spec } = check;
    const digest = verifier.cheap
      ? undefined
      : criterionDigest({ spec, criterionText: criterion.text, identity: verifier.cacheIdentity?.(spec) ?? null });
    prepared.push({ criterion, verifier, spec, digest });
  }
  if (problems.length > 0) throw new VerificationSetupError(problems);
  return prepared;
}

/**
 * Each output file's digest, for the cache key. Streamed, so a file costs no memory (reading a
 * file over 2 GiB whole fails in Node), and capped at `maxFileBytes`, so it costs bounded time; a
 * file that is missing, a directory, unreadable or over the cap is that output's fault, reported
 * as `OutputFileNotFoundError`, `OutputFileUnreadableError` or `OutputFileTooLargeError`.
 */
async function digestFiles(input: VerificationInput, maxFileBytes: number | undefined) {
  if (!input.files || input.files.length === 0) return undefined;
  return Promise.all(input.files.map(async (f) => ({ name: f.name, sha256: await fileDigest(f.path, maxFileBytes) })));
}

/**
 * Verifies every criterion of a rubric on every output, then scores each output. Verifier calls
 * run concurrently (bounded), verifiers that can batch (an LLM judge) get all their criteria of
 * one output in one call, cached verdicts are reused, and a staged rubric's later stages are not
 * verified once a gate has stopped scoring. A verifier that throws yields an error verdict for
 * its criteria; it never stops the batch and never becomes a 0.
 *
 * @example
 * const results = await scoreOutputs(rubric, [{ id: "a", output: "..." }], { registry: rulesRegistry() });
 * results[0].score?.normalized;
 */
export async function scoreOutputs(
  rubric: FlatRubric | StagedRubric,
  outputs: readonly OutputToScore[],
  options: ScoreOutputsOptions = {},
): Promise<ScoredOutput[]> {
  const prepared = prepareCriteria(rubric, options.registry ?? createVerifierRegistry());
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new VerifierOptionsError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
  if (options.maxFileBytes !== undefined && !(Number.isSafeInteger(options.maxFileBytes) && options.maxFileBytes >= 0))
    throw new VerifierOptionsError(`maxFileBytes must be an integer ≥ 0, got ${options.maxFileBytes}`);
  // A weight for no criterion is the caller's mistake, refused before any verifier is called
  // (scoring would only find it output by output, after the calls were paid for).
  if (options.weights !== undefined) checkWeights(rubric, options.weights);
  const stages = stageGroups(rubric, prepared);
  // Every criterion a synchronous check and no file to confine or read: the batched rule path,
  // the same verdicts with none of the per-verdict promises, permits and fibers.
  if (prepared.every((p) => p.verifier.check !== undefined) && outputs.every((o) => !o.files?.length))
    return scoreInBatches(rubric, stages, outputs, options);
  // One pool of permits bounds verifier calls across all outputs; outputs themselves are also
  // taken `concurrency` at a time so that results (and progress) arrive steadily.
  const permits = options.permits ?? new PermitPool(concurrency);
  const gate: Gate = (work) => permits.run(work);
  let done = 0;
  const program = Effect.forEach(
    outputs,
    (output) =>
      Effect.promise(() => scoreOne(rubric, stages, output, options, gate)).pipe(
        Effect.tap(() => Effect.sync(() => options.onProgress?.(++done, outputs.length))),
      ),
    { concurrency },
  );
  return Effect.runPromise(program, options.signal ? { signal: options.signal } : undefined);
}

export interface ScoreOutputsSyncOptions {
  /** The verifiers by kind (default `createVerifierRegistry()`); every criterion's must have a `check`. */
  readonly registry?: VerifierRegistry;
  /** How scores treat error verdicts (they are reported either way). Default `fail`: score null. */
  readonly errorsAs?: ErrorPolicy;
  readonly ignoreGates?: boolean;
  /** Weight overrides by criterion id, as `scoreRubric` takes them. */
  readonly weights?: ScoreOptions["weights"];
}

/**
 * `scoreOutputs` for rubrics whose every criterion is a deterministic, synchronous check (the rule
 * verifiers, `json-schema`): the checks run in a plain loop, output by output, and each output is
 * scored by core's `scoreRubric` — the same verdicts and scores as `scoreOutputs`, at the speed of
 * the checks themselves. Outputs' files are not read (no rule reads them). In this path a verdict's
 * `latencyMs` is its output's checks' time shared equally among them (timing each check would cost
 * as much as a check).
 *
 * @throws VerificationSetupError listing every criterion whose verifier has no synchronous check
 * (an LLM judge, sandboxed code) or whose spec does not parse; use `scoreOutputs` for those.
 * @example
 * const [result] = scoreOutputsSync(rubric, [{ id: "a", output: "Revenue grew 4% in Q3." }]);
 * result.score?.normalized;
 */
export function scoreOutputsSync(
  rubric: FlatRubric | StagedRubric,
  outputs: readonly OutputToScore[],
  options: ScoreOutputsSyncOptions = {},
): ScoredOutput[] {
  const prepared = prepareCriteria(rubric, options.registry ?? createVerifierRegistry());
  const slow = prepared.filter((p) => p.verifier.check === undefined);
  if (slow.length > 0)
    throw new VerificationSetupError(
      slow.map((p) => ({
        criterionId: p.criterion.id,
        problem: `verifier ${p.verifier.kind} has no synchronous check (it waits on a model, a sandbox or I/O): use scoreOutputs`,
      })),
    );
  if (options.weights !== undefined) checkWeights(rubric, options.weights);
  const stages = stageGroups(rubric, prepared);
  const scoreOptions = scoreOptionsOf(options);
  return outputs.map((output) => checkOne(rubric, stages, output, scoreOptions));
}

/** Outputs between two yields to the event loop in `scoreOutputs`' batched path (≈ 1 ms of checks for a 12-criterion rubric). */
const BATCH = 64;

/** `scoreOutputs` over synchronous checks: batches of outputs, yielding between them for signals, progress and other work. */
async function scoreInBatches(
  rubric: FlatRubric | StagedRubric,
  stages: { items: Prepared[]; rubricUpTo: FlatRubric | StagedRubric }[],
  outputs: readonly OutputToScore[],
  options: ScoreOutputsOptions,
): Promise<ScoredOutput[]> {
  const scoreOptions = scoreOptionsOf(options);
  const results: ScoredOutput[] = [];
  for (let start = 0; start < outputs.length; start += BATCH) {
    options.signal?.throwIfAborted();
    for (const output of outputs.slice(start, start + BATCH)) {
      results.push(checkOne(rubric, stages, output, scoreOptions));
      options.onProgress?.(results.length, outputs.length);
    }
    if (start + BATCH < outputs.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return results;
}

/** One output through synchronous checks, stage by stage, stopping where a gate stops scoring. */
function checkOne(
  rubric: FlatRubric | StagedRubric,
  stages: { items: Prepared[]; rubricUpTo: FlatRubric | StagedRubric }[],
  output: OutputToScore,
  scoreOptions: ResolvedScoreOptions,
): ScoredOutput {
  const verdicts: Verdict[] = [];
  for (const stage of stages) {
    const started = performance.now();
    const drafts: VerdictDraft[] = [];
    for (const item of stage.items) {
      try {
        drafts.push(item.verifier.check!(item.spec, output));
      } catch (error) {
        drafts.push(errorDraft(`verifier ${item.verifier.kind} failed: ${(error as Error).message}`));
      }
    }
    const latency = (performance.now() - started) / Math.max(1, drafts.length);
    for (let i = 0; i < drafts.length; i++)
      verdicts.push(toVerdict(stage.items[i]!, drafts[i]!, undefined, latency, false));
    if (stage.rubricUpTo === rubric || scoreOptions.ignoreGates) continue;
    if (gateStops(stage.rubricUpTo as StagedRubric, verdicts, scoreOptions)) break;
  }
  return finish(rubric, output.id, verdicts, scoreOptions);
}

/** Whether a gate in the stages verified so far stops scoring (undecidable — an error verdict under "fail" — verifies on). */
function gateStops(upTo: StagedRubric, verdicts: Verdict[], scoreOptions: ResolvedScoreOptions): boolean {
  try {
    return scoreRubric(upTo, verdicts, scoreOptions).stoppedAt !== null;
  } catch {
    // Not decidable: verify on; the final score reports it.
    return false;
  }
}

/** How every path scores: errors fail the score unless told otherwise, gates count unless ignored. */
/** Score options with every default filled in. */
type ResolvedScoreOptions = ScoreOptions & { readonly errorsAs: ErrorPolicy; readonly ignoreGates: boolean };

function scoreOptionsOf(options: {
  readonly errorsAs?: ErrorPolicy;
  readonly ignoreGates?: boolean;
  readonly weights?: ScoreOptions["weights"];
}): ResolvedScoreOptions {
  return {
    errorsAs: options.errorsAs ?? "fail",
    ignoreGates: options.ignoreGates ?? false,
    ...(options.weights === undefined ? {} : { weights: options.weights }),
  };
}

/** Criteria grouped by stage (a flat rubric is one group), in scoring order. */
function stageGroups(
  rubric: FlatRubric | StagedRubric,
  prepared: Prepared[],
): { items: Prepared[]; rubricUpTo: FlatRubric | StagedRubric }[] {
  if (!("stages" in rubric)) return [{ items: prepared, rubricUpTo: rubric }];
  return rubric.stages.map((_, s) => ({
    items: prepared.filter((p) => p.criterion.stageIndex === s),
    // The rubric cut after stage s tells whether a gate there stops scoring.
    rubricUpTo: { ...rubric, stages: rubric.stages.slice(0, s + 1) },
  }));
}

type Gate = <T>(work: () => Promise<T>) => Promise<T>;

async function scoreOne(
  rubric: FlatRubric | StagedRubric,
  stages: { items: Prepared[]; rubricUpTo: FlatRubric | StagedRubric }[],
  given: OutputToScore,
  options: ScoreOutputsOptions,
  gate: Gate,
): Promise<ScoredOutput> {
  const scoreOptions = scoreOptionsOf(options);
  let output: OutputToScore;
  let files: Awaited<ReturnType<typeof digestFiles>>;
  try {
    output = await confineOutput(given, options.filesRoot);
    files = await digestFiles(output, options.maxFileBytes);
  } catch (error) {
    // The output's fault, not the run's: every criterion of this output is an error verdict.
    const draft = errorDraft(`${(error as Error).name}: ${(error as Error).message}`);
    const verdicts = stages.flatMap((stage) => stage.items.map((item) => toVerdict(item, draft, undefined, 0, false)));
    return finish(rubric, given.id, verdicts, scoreOptions);
  }
  const verdicts: Verdict[] = [];
  for (const stage of stages) {
    verdicts.push(...(await verifyGroup(stage.items, output, files, options, gate)));
    if (stage.rubricUpTo === rubric || scoreOptions.ignoreGates) continue;
    if (gateStops(stage.rubricUpTo as StagedRubric, verdicts, scoreOptions)) break;
  }
  return finish(rubric, output.id, verdicts, scoreOptions);
}

function finish(
  rubric: FlatRubric | StagedRubric,
  id: string,
  verdicts: Verdict[],
  scoreOptions: ResolvedScoreOptions,
): ScoredOutput {
  const errors = verdicts.filter((v) => v.status === "error").length;
  try {
    return { id, verdicts, score: scoreRubric(rubric, verdicts, scoreOptions), errors };
  } catch (error) {
    return { id, verdicts, score: null, scoreError: `${(error as Error).name}: ${(error as Error).message}`, errors };
  }
}

async function confineOutput(output: OutputToScore, filesRoot: string | undefined): Promise<OutputToScore> {
  if (filesRoot === undefined || !output.files || output.files.length === 0) return output;
  return { ...output, files: await confineOutputFiles(output.files, filesRoot) };
}

async function verifyGroup(
  items: Prepared[],
  output: OutputToScore,
  files: { name: string; sha256: string }[] | undefined,
  options: ScoreOutputsOptions,
  gate: Gate,
): Promise<Verdict[]> {
  const results = new Map<string, Verdict>();
  const criterion = (item: Prepared): CriterionToVerify => ({
    id: item.criterion.id,
    text: item.criterion.text,
    verifier: item.spec,
  });
  const expensive: Prepared[] = [];
  for (const item of items) {
    if (!item.verifier.cheap) {
      expensive.push(item);
      continue;
    }
    const started = performance.now();
    let draft: VerdictDraft;
    try {
      draft = await item.verifier.verify(criterion(item), item.spec, output, withSignal(options));
    } catch (error) {
      draft = errorDraft(`verifier ${item.verifier.kind} failed: ${(error as Error).message}`);
    }
    results.set(item.criterion.id, toVerdict(item, draft, undefined, performance.now() - started, false));
  }
  const keyed = expensive.map((item) => ({
    item,
    key: verdictCacheKeyFor(item.digest!, { input: output.input, output: output.output, files }),
  }));
  const pending: typeof keyed = [];
  for (const k of keyed) {
    const cached = await options.cache?.get(k.key);
    if (cached) results.set(k.item.criterion.id, toVerdict(k.item, cached, k.key, 0, true));
    else pending.push(k);
  }
  // Batchable verifiers get all their pending criteria of this output in one call.
  const byVerifier = new Map<Verifier, typeof pending>();
  for (const p of pending) byVerifier.set(p.item.verifier, [...(byVerifier.get(p.item.verifier) ?? []), p]);
  const calls: Promise<void>[] = [];
  for (const [verifier, group] of byVerifier) {
    const run = async (members: typeof group) => {
      const started = performance.now();
      let drafts: VerdictDraft[];
      try {
        drafts = await gate(() =>
          verifier.verifyMany && members.length > 1
            ? verifier.verifyMany(
                members.map((m) => ({ criterion: criterion(m.item), spec: m.item.spec })),
                output,
                withSignal(options),
              )
            : Promise.all(
                members.map((m) => verifier.verify(criterion(m.item), m.item.spec, output, withSignal(options))),
              ),
        );
        if (drafts.length !== members.length)
          throw new Error(
            `verifier ${verifier.kind} returned ${drafts.length} verdicts for ${members.length} criteria`,
          );
      } catch (error) {
        drafts = members.map(() => errorDraft(`verifier ${verifier.kind} failed: ${(error as Error).message}`));
      }
      const latency = (performance.now() - started) / members.length;
      await Promise.all(
        members.map(async (m, i) => {
          const draft = drafts[i]!;
          await options.cache?.set(m.key, draft);
          results.set(m.item.criterion.id, toVerdict(m.item, draft, m.key, latency, false));
        }),
      );
    };
    // One call for a batching verifier; otherwise each criterion is its own call (and permit).
    if (verifier.verifyMany) calls.push(run(group));
    else for (const member of group) calls.push(run([member]));
  }
  await Promise.all(calls);
  return items.map((item) => results.get(item.criterion.id)!);
}

function withSignal(options: ScoreOutputsOptions) {
  return options.signal ? { signal: options.signal } : {};
}

// Built field by field, without conditional spreads: this runs once per verdict, and at rule
// speed the spreads' temporary objects were most of the engine's cost.
function toVerdict(
  item: Prepared,
  draft: VerdictDraft,
  cacheKey: string | undefined,
  latencyMs: number,
  cached: boolean,
): Verdict {
  let verifier: string = item.verifier.kind;
  if (!item.verifier.cheap) {
    const model = item.verifier.cacheIdentity?.(item.spec)?.["model"];
    if (typeof model === "string") verifier = `${verifier}:${model}`;
  }
  const verdict: { -readonly [K in keyof Verdict]: Verdict[K] } = {
    criterionId: item.criterion.id,
    score: draft.score,
    status: draft.status,
    verifier,
    latencyMs: cached ? 0 : latencyMs,
  };
  if (cacheKey !== undefined) verdict.cacheKey = cacheKey;
  if (draft.status === "error") verdict.error = draft.error;
  else if (draft.rationale !== undefined) verdict.rationale = draft.rationale;
  if (draft.status !== "skipped") {
    if (draft.evidence !== undefined) verdict.evidence = draft.evidence;
    if (draft.costUsd !== undefined) verdict.costUsd = cached ? 0 : draft.costUsd;
    if (draft.tokens !== undefined) verdict.tokens = cached ? 0 : draft.tokens;
  }
  return verdict;
}

/** A scored output as plain JSON: what the CLI prints and the reward server answers. */
export interface ScoredOutputJson {
  readonly id: string;
  readonly total: number | null;
  readonly normalized: number | null;
  readonly errors: number;
  readonly scoreError?: string;
  readonly verdicts: readonly {
    criterionId: string;
    score: number | null;
    status: Verdict["status"];
    rationale?: string;
    error?: string;
  }[];
}

export function scoredOutputToJson(result: ScoredOutput): ScoredOutputJson {
  return {
    id: result.id,
    total: result.score?.total ?? null,
    normalized: result.score?.normalized ?? null,
    errors: result.errors,
    scoreError: result.scoreError,
    verdicts: result.verdicts.map((v) => ({
      criterionId: v.criterionId,
      score: v.score,
      status: v.status,
      rationale: v.rationale,
      error: v.error,
    })),
  };
}
