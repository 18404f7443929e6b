import { performance } from "node:perf_hooks";
import { approximateTokens, formatZodIssues, scoreRubric, type FlatRubric, type Rng } from "@rubric/core";
import { gymSftCorpus, simulatedStakeholder, type GymTask, type SftExample, type Worker } from "@rubric/autointeract";
import { z } from "zod";
import { createVerifierRegistry } from "@rubric/verifiers";
import { scoreCandidates } from "../guidance/guidance.js";
import { PolicySequenceError, TrainingInputError } from "../errors.js";
import type { PolicyPrompt } from "../policy/prompt.js";
import type { RubricPolicy } from "../policy/rubric-policy.js";
import type { SftItem } from "../trainer/sft.js";

/** A gym task as the in-process policy sees it, with the world seed its stakeholder was drawn from. */
export interface GymPrompt extends PolicyPrompt {
  readonly task: GymTask;
  readonly stakeholderSeed: number;
}

/**
 * Asks the task's simulated stakeholder every question of the policy's repertoire once. The
 * policy sees only the replies to the questions it chooses; the gym stakeholder's reply to a
 * question does not depend on when it is asked, so asking up front changes nothing it could see.
 */
export async function gymPrompt(
  task: GymTask,
  stakeholderSeed: number,
  questions: readonly string[],
): Promise<GymPrompt> {
  const stakeholder = simulatedStakeholder(task, stakeholderSeed);
  const replies: string[] = [];
  // The gym stakeholder ignores the dialogue state; a fresh one per question says so honestly.
  for (const text of questions)
    replies.push(
      (
        await stakeholder.answer(
          { text },
          { task, exchanges: [], questionsLeft: questions.length, turnsLeft: questions.length + 1 },
        )
      ).text,
    );
  return { task, replies, stakeholderSeed };
}

// Rule verifiers only: the gym's criteria are all rules, and U* must come from the verifiers.
const registry = createVerifierRegistry({ python: false, js: false });

/** U*(y): the stakeholder's true utility of an output, normalised to [0, 1], scored by the real verifiers. */
export async function trueUtility(prompt: GymPrompt, output: string): Promise<number> {
  return (await proxyScores(simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility, prompt, [output]))[0]!;
}

/**
 * A judge that errs: each criterion's verdict ν is read as 1 − ν with probability `noise`, the
 * flips drawn from `rng` — the oracle rubric applied by a judge rather than by U* itself.
 */
export interface JudgeNoise {
  readonly noise: number;
  readonly rng: Rng;
}

/**
 * Scores û of outputs under a rubric (normalised weighted sums of the rubric's verifier
 * verdicts); an empty rubric scores 0. With `judge`, each verdict is flipped with its
 * probability before the sum.
 */
export async function proxyScores(
  rubric: FlatRubric,
  prompt: GymPrompt,
  outputs: readonly string[],
  judge?: JudgeNoise,
): Promise<number[]> {
  if (rubric.criteria.length === 0) return outputs.map(() => 0);
  if (judge !== undefined && !(judge.noise >= 0 && judge.noise <= 1))
    throw new TrainingInputError(`judge.noise must be a probability in [0, 1], got ${judge.noise}`);
  const scored = await scoreCandidates(rubric, prompt.task, outputs, { registry });
  if (judge === undefined || judge.noise === 0) return scored.map((c) => c.score.normalized);
  // The flipped verdicts are scored by core's own scorer, so polarity and normalisation are the
  // plain score's. A criterion without a verdict (skipped) stays out, as it does there.
  return scored.map(({ score }) => {
    const heard: Record<string, number> = {};
    for (const c of score.criteria)
      if (c.fraction !== null) heard[c.criterionId] = judge.rng.next() < judge.noise ? 1 - c.fraction : c.fraction;
    return scoreRubric(rubric, heard, { errorsAs: "renormalize" }).normalized;
  });
}

export interface GymRewardOptions {
  readonly policy: RubricPolicy;
  readonly worker: Worker;
  /** λ_clarify: cost per token of each question asked (`approximateTokens`). Default 0.0007. */
  readonly clarifyCostPerToken?: number;
  /** λ_compute: cost per token of the rubric's criteria (what verifying them costs). Default 0.0003. */
  readonly computeCostPerToken?: number;
  /** Milliseconds spent in the worker and in the verifiers are added here, when given. */
  readonly timings?: { worker: number; verifiers: number };
}

/** C_clarify and C_compute of a sequence, in tokens: its questions' and its rubric's criteria's. */
export function interactionTokens(
  policy: RubricPolicy,
  tokens: readonly number[],
  rubric: FlatRubric,
): { readonly questions: number; readonly rubric: number } {
  return {
    questions: policy.decode(tokens).questions.reduce((n, q) => n + approximateTokens(policy.questions[q] ?? ""), 0),
    rubric: rubric.criteria.reduce((n, c) => n + approximateTokens(c.text), 0),
  };
}

/**
 * The Stage II return of a sequence: the worker writes one output under the sequence's rubric and
 * r = U*(y) − λ_clarify·C_clarify − λ_compute·C_compute, both costs counted in tokens (the
 * questions asked, the rubric's criteria). The defaults keep a family question (≈ 15 tokens) at
 * about 0.01, the broad one (9) at 0.006, and a criterion (≈ 6 tokens) at about 0.002.
 */
export function gymReward(
  options: GymRewardOptions,
): (prompt: GymPrompt, tokens: readonly number[], context: { seed: number }) => Promise<number> {
  const clarify = options.clarifyCostPerToken ?? 0.0007;
  const compute = options.computeCostPerToken ?? 0.0003;
  return async (prompt, tokens, { seed }) => {
    const rubric = options.policy.toRubric(prompt, tokens, `${prompt.task.id}-rubric`);
    const cost = interactionTokens(options.policy, tokens, rubric);
    const t0 = performance.now();
    const [output] = await options.worker.produce(prompt.task, rubric, 1, { seed });
    const t1 = performance.now();
    const utility = await trueUtility(prompt, output!.text);
    if (options.timings) {
      options.timings.worker += t1 - t0;
      options.timings.verifiers += performance.now() - t1;
    }
    return utility - clarify * cost.questions - compute * cost.rubric;
  };
}

/**
 * A chat-format SFT example of @rubric/autointeract (`gymSftCorpus`, `sftExample`) as the
 * policy's tokens for its prompt (whose task and replies supply the terms a written criterion
 * copies): the manager's questions (assistant turns `{"question"}`, matched to the repertoire),
 * then the final assistant turn's rubric `{"criteria": [{text, weight}]}`. Undefined when the
 * policy can write none of its criteria (nothing to imitate).
 * @throws PolicySequenceError for a question outside the repertoire or a malformed rubric turn.
 */
export function sftSequence(policy: RubricPolicy, prompt: PolicyPrompt, example: SftExample): number[] | undefined {
  const assistant = example.messages.filter((m) => m.role === "assistant");
  const questions = assistant.slice(0, -1).map((m, i) => {
    const q = policy.questions.indexOf(QuestionTurnSchema.parse(JSON.parse(m.content)).question);
    if (q < 0)
      throw new PolicySequenceError(`${example.metadata.taskId}: question ${i + 1} is not in the policy's repertoire`);
    return q;
  });
  const final = RubricTurnSchema.safeParse(JSON.parse(assistant.at(-1)?.content ?? "null"));
  if (!final.success)
    throw new PolicySequenceError(
      `${example.metadata.taskId}: the last assistant turn is not a rubric: ${formatZodIssues(final.error, { limit: 1 })}`,
    );
  try {
    return policy.encode(prompt, questions, {
      id: `${example.metadata.taskId}-reference`,
      criteria: final.data.criteria,
    });
  } catch (error) {
    // The only sequence error of `encode`: no criterion it can write.
    if (error instanceof PolicySequenceError) return undefined;
    throw error;
  }
}

const QuestionTurnSchema = z.object({ question: z.string() });
const RubricTurnSchema = z.object({ criteria: z.array(z.object({ text: z.string(), weight: z.number() })) });

/** What Stage I imitates (see {@link teacherSequence}). */
export interface TeacherOptions {
  /** Questions the teacher asks (default 5: the default manager's five). */
  readonly questionBudget?: number;
  /**
   * The rubric of the target: `"elicited"` (default), the one the teacher reconstructs from the
   * replies; `"utility"`, the stakeholder's own U* after the same questions — SFT on oracle
   * rubrics, the control that says how much a perfect reconstruction would teach.
   */
  readonly reference?: "elicited" | "utility";
}

/**
 * Stage I's target for a prompt, from @rubric/autointeract's SFT corpus: the default policy
 * manager's questions and the rubric it reconstructs from the replies (`reference: "elicited"`)
 * — a teacher's imperfect reconstruction of what the stakeholder values, not the oracle. Criteria
 * the policy cannot write (a brief term it cannot copy, for instance) are left out.
 */
export async function teacherSequence(
  policy: RubricPolicy,
  prompt: GymPrompt,
  options: TeacherOptions = {},
): Promise<number[] | undefined> {
  const [example] = await gymSftCorpus([prompt.task], {
    seed: prompt.stakeholderSeed,
    questionBudget: options.questionBudget ?? 5,
    reference: options.reference ?? "elicited",
  });
  return sftSequence(policy, prompt, example!);
}

/**
 * Stage I's examples for `trainSftStage`: each prompt with its {@link teacherSequence}; a prompt
 * whose target has nothing in the policy's vocabulary is left out.
 */
export async function teacherExamples(
  policy: RubricPolicy,
  prompts: readonly GymPrompt[],
  options: TeacherOptions = {},
): Promise<SftItem<GymPrompt>[]> {
  const examples: SftItem<GymPrompt>[] = [];
  for (const prompt of prompts) {
    const tokens = await teacherSequence(policy, prompt, options);
    if (tokens) examples.push({ prompt, tokens });
  }
  return examples;
}
