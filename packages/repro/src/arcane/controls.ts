import { createRng, mean, type FlatRubric } from "@rubric/core";
import {
  type BankCriterion,
  briefCriterion,
  briefTerms,
  CRITERIA_BANK,
  simulatedStakeholder,
  type Worker,
} from "@rubric/autointeract";
import { type GymPrompt, type JudgeNoise, proxyScores } from "@rubric/gspo";

/** The reply every question gets in the "uninformative replies" control. */
export const UNINFORMATIVE_REPLY = "I don't have strong views on that.";

/** A prompt whose stakeholder says nothing useful: every reply is {@link UNINFORMATIVE_REPLY}. */
export function uninformativePrompt(prompt: GymPrompt): GymPrompt {
  return { ...prompt, replies: prompt.replies.map(() => UNINFORMATIVE_REPLY) };
}

/**
 * A criterion of a fixed rubric: a bank criterion, or "the brief's i-th most frequent term" —
 * task-aware but stakeholder-agnostic, what anyone could write from the task text alone.
 */
export type FixedCriterion =
  | { readonly kind: "bank"; readonly criterion: BankCriterion }
  | { readonly kind: "brief"; readonly rank: number };

/** A fixed criterion in words, as the table lists it. */
export function describeFixedCriterion(c: FixedCriterion): string {
  return c.kind === "bank"
    ? c.criterion.text
    : `Addresses the brief's ${c.rank === 0 ? "most" : "second most"} frequent term`;
}

/** The rubric a fixed choice of criteria spells for one task (every weight 1: nothing says otherwise). */
export function fixedRubric(choice: readonly FixedCriterion[], prompt: GymPrompt): FlatRubric {
  const terms = briefTerms(prompt.task.prompt, 2);
  const criteria = choice.flatMap((c) => {
    const bank =
      c.kind === "bank" ? c.criterion : terms[c.rank] === undefined ? undefined : briefCriterion(terms[c.rank]!);
    return bank === undefined
      ? []
      : [{ id: bank.id, text: bank.text, weight: 1, polarity: "reward" as const, verifier: bank.verifier }];
  });
  return { id: `${prompt.task.id}-fixed`, criteria };
}

/** Index of the highest score among the first n (ties → the first). */
export function argmaxPrefix(scores: readonly number[], n: number): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

/**
 * U* of the output `guide` picks among the worker's first n, for each n of `ns`: the worker writes
 * max(ns) outputs under the guide (seeded by `seed`), the guide — through `judge` when given —
 * scores them, and only the picks are scored by U*.
 */
export async function guidedReturns(
  prompt: GymPrompt,
  guide: FlatRubric,
  worker: Worker,
  ns: readonly number[],
  seed: number,
  judge?: JudgeNoise,
): Promise<number[]> {
  const outputs = (await worker.produce(prompt.task, guide, Math.max(...ns), { seed })).map((o) => o.text);
  const proxy = await proxyScores(guide, prompt, outputs, judge);
  const picks = ns.map((n) => argmaxPrefix(proxy, n));
  const scored = [...new Set(picks)];
  const utility = await proxyScores(
    simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility,
    prompt,
    scored.map((i) => outputs[i]!),
  );
  return picks.map((pick) => utility[scored.indexOf(pick)]!);
}

/** Mean U* of best-of-n under a rubric built per task, over `prompts`; outputs are seeded by `seed` and the task. */
export async function bestOfNReturn(
  prompts: readonly GymPrompt[],
  rubricOf: (prompt: GymPrompt) => FlatRubric,
  worker: Worker,
  n: number,
  seed: number,
): Promise<number> {
  const returns: number[] = [];
  for (const [i, prompt] of prompts.entries())
    returns.push((await guidedReturns(prompt, rubricOf(prompt), worker, [n], seed * 7_919 + i))[0]!);
  return mean(returns);
}

export interface FixedRubricChoice {
  readonly criteria: readonly FixedCriterion[];
  /** Mean U* at best-of-n on the tasks it was chosen on, after each criterion was added. */
  readonly trainReturns: readonly number[];
  /** The worker's seed for those returns (`bestOfNReturn`'s), drawn from the choice's seed. */
  readonly outputSeed: number;
}

/**
 * The best stakeholder-agnostic fixed rubric, chosen on training tasks: greedy forward selection
 * over the bank's criteria and the brief's two most frequent terms (one per exclusive group), each
 * step adding the criterion that most raises mean U* at best-of-n over `prompts`, stopping when
 * none does or at `maxCriteria`; after the first step only the `shortlist` best single criteria
 * are tried. What "a rubric written without dialogue" can do at best here —
 * the premise of ARCANE is that it falls well short of one written from the stakeholder's own
 * preferences.
 */
export async function chooseFixedRubric(
  prompts: readonly GymPrompt[],
  worker: Worker,
  options: {
    readonly n: number;
    readonly seed: number;
    readonly maxCriteria?: number;
    /** After the first step only the `shortlist` best single criteria stay candidates (default 12): the search's cost. */
    readonly shortlist?: number;
    readonly onStep?: (done: number, total: number) => void;
  },
): Promise<FixedRubricChoice> {
  const maxCriteria = options.maxCriteria ?? 14;
  let candidates: FixedCriterion[] = [
    ...CRITERIA_BANK.map((criterion) => ({ kind: "bank" as const, criterion })),
    { kind: "brief", rank: 0 },
    { kind: "brief", rank: 1 },
  ];
  const seed = createRng(options.seed).fork("fixed-rubric").int(1_000_000);
  const score = (choice: readonly FixedCriterion[]) =>
    bestOfNReturn(prompts, (p) => fixedRubric(choice, p), worker, options.n, seed);
  const chosen: FixedCriterion[] = [];
  const trainReturns: number[] = [];
  let current = await score(chosen);
  for (let step = 0; step < maxCriteria; step++) {
    options.onStep?.(step, maxCriteria);
    const groups = new Set(chosen.flatMap((c) => (c.kind === "bank" && c.criterion.group ? [c.criterion.group] : [])));
    const open = candidates.filter(
      (c) =>
        !chosen.includes(c) &&
        (c.kind === "brief" || c.criterion.group === undefined || !groups.has(c.criterion.group)),
    );
    let best: { candidate: FixedCriterion; value: number } | undefined;
    const values: { candidate: FixedCriterion; value: number }[] = [];
    for (const candidate of open) {
      const value = await score([...chosen, candidate]);
      values.push({ candidate, value });
      if (best === undefined || value > best.value) best = { candidate, value };
    }
    if (step === 0)
      candidates = values
        .sort((a, b) => b.value - a.value)
        .slice(0, options.shortlist ?? 12)
        .map((v) => v.candidate);
    if (best === undefined || best.value <= current) break;
    chosen.push(best.candidate);
    trainReturns.push(best.value);
    current = best.value;
  }
  options.onStep?.(maxCriteria, maxCriteria);
  return { criteria: chosen, trainReturns, outputSeed: seed };
}
