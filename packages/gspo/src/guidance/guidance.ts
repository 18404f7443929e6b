import { createRng, type FlatRubric, type FlatScore } from "@rubric/core";
import type { TaskBrief, Worker } from "@rubric/autointeract";
import { scoreOutputs, type ScoreOutputsOptions } from "@rubric/verifiers";
import { GuidanceInputError, GuidanceScoringError } from "../errors.js";

/** A candidate output with its rubric score û (and every verdict behind it). */
export interface ScoredCandidate {
  readonly text: string;
  readonly score: FlatScore;
}

export interface GuidanceOptions extends Omit<ScoreOutputsOptions, "errorsAs"> {
  readonly seed: number;
  /** Give the worker the rubric as instructions too (default true): guidance steers generation, not only selection. */
  readonly guideWorker?: boolean;
}

/** Scores texts under a rubric; an output whose score cannot be computed (an error verdict) is refused loudly (`GuidanceScoringError`). */
export async function scoreCandidates(
  rubric: FlatRubric,
  task: TaskBrief,
  texts: readonly string[],
  options: Omit<ScoreOutputsOptions, "errorsAs">,
): Promise<ScoredCandidate[]> {
  const results = await scoreOutputs(
    rubric,
    texts.map((text, i) => ({ id: String(i), input: task.prompt, output: text })),
    { ...options, errorsAs: "fail" },
  );
  return results.map((r, i) => {
    if (!r.score) throw new GuidanceScoringError(`texts[${i}] could not be scored: ${r.scoreError}`);
    return { text: texts[i]!, score: r.score as FlatScore };
  });
}

async function sample(
  worker: Worker,
  task: TaskBrief,
  rubric: FlatRubric,
  k: number,
  options: GuidanceOptions,
): Promise<ScoredCandidate[]> {
  if (!Number.isInteger(k) || k < 1) throw new GuidanceInputError(`k must be an integer ≥ 1, got ${k}`);
  const outputs = await worker.produce(task, options.guideWorker === false ? undefined : rubric, k, {
    seed: options.seed,
  });
  return scoreCandidates(
    rubric,
    task,
    outputs.map((o) => o.text),
    options,
  );
}

/**
 * Best-of-K: K samples from the worker, the one with the highest û wins (ties → the earliest).
 *
 * @example
 * const { best, candidates } = await bestOfK(worker, task, rubric, 8, { seed: 1, registry });
 */
export async function bestOfK(
  worker: Worker,
  task: TaskBrief,
  rubric: FlatRubric,
  k: number,
  options: GuidanceOptions,
): Promise<{ best: ScoredCandidate; candidates: ScoredCandidate[] }> {
  const candidates = await sample(worker, task, rubric, k, options);
  let best = 0;
  candidates.forEach((c, i) => {
    if (c.score.normalized > candidates[best]!.score.normalized) best = i;
  });
  return { best: candidates[best]!, candidates };
}

/** Picks index i with probability ∝ exp(û_i / τ) (softmax, shifted for stability). */
export function resampleIndex(scores: readonly number[], temperature: number, u: number): number {
  if (!(temperature > 0)) throw new GuidanceInputError(`temperature must be > 0, got ${temperature}`);
  const top = Math.max(...scores);
  const weights = scores.map((s) => Math.exp((s - top) / temperature));
  let r = u * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i]!;
    if (r < 0) return i;
  }
  return weights.length - 1;
}

/**
 * Importance resampling: K samples, one drawn with probability ∝ exp(û/τ). A small τ approaches
 * best-of-K; a large τ approaches a uniform pick. The draw uses the seed's own stream.
 */
export async function importanceResample(
  worker: Worker,
  task: TaskBrief,
  rubric: FlatRubric,
  k: number,
  options: GuidanceOptions & { readonly temperature: number },
): Promise<{ chosen: ScoredCandidate; candidates: ScoredCandidate[] }> {
  const candidates = await sample(worker, task, rubric, k, options);
  const u = createRng(options.seed).fork(`resample:${task.id}`).next();
  return {
    chosen:
      candidates[
        resampleIndex(
          candidates.map((c) => c.score.normalized),
          options.temperature,
          u,
        )
      ]!,
    candidates,
  };
}

/** Splits a document into segments at its second-level headings; the title (preamble) is the first segment. */
export function splitSegments(text: string): string[] {
  const parts = text.split(/\n(?=## )/);
  return parts.length > 0 ? parts : [text];
}

/**
 * Beam search over partial outputs: the worker writes `samples` full drafts; a document is then
 * built segment by segment (sections), each step extending every kept prefix with the next
 * segment of every draft and keeping the `width` prefixes with the highest û of the text so far.
 * Any worker whose outputs have sections works; the result can mix the best parts of drafts.
 */
export async function beamSearch(
  worker: Worker,
  task: TaskBrief,
  rubric: FlatRubric,
  options: GuidanceOptions & { readonly samples: number; readonly width: number },
): Promise<{ best: ScoredCandidate; drafts: ScoredCandidate[]; steps: number }> {
  const drafts = await sample(worker, task, rubric, options.samples, options);
  const segmented = drafts.map((d) => splitSegments(d.text));
  const steps = Math.max(...segmented.map((s) => s.length));
  let beam: string[] = [""];
  for (let step = 0; step < steps; step++) {
    const extended = new Set<string>();
    for (const prefix of beam)
      for (const segments of segmented)
        if (segments[step] !== undefined)
          extended.add(prefix === "" ? segments[step]! : `${prefix}\n${segments[step]}`);
    if (extended.size === 0) break;
    const scored = await scoreCandidates(rubric, task, [...extended], options);
    beam = scored
      .map((c, i) => ({ c, i }))
      .sort((a, b) => b.c.score.normalized - a.c.score.normalized || a.i - b.i)
      .slice(0, options.width)
      .map(({ c }) => c.text);
  }
  // The best complete candidate: the beam's best, or a whole draft if one scores higher.
  const finals = await scoreCandidates(rubric, task, [...new Set([...beam, ...drafts.map((d) => d.text)])], options);
  const best = finals.reduce((a, b) => (b.score.normalized > a.score.normalized ? b : a));
  return { best, drafts, steps };
}
