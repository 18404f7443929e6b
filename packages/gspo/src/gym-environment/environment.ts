import { performance } from "node:perf_hooks";
import { formatZodIssues, type FlatRubric } from "@rubric/core";
import { gymSftCorpus, simulatedStakeholder, type GymTask, type SftExample, type Worker } from "@rubric/autointeract";
import { z } from "zod";
import { createVerifierRegistry } from "@rubric/verifiers";
import { scoreCandidates } from "../guidance/guidance.js";
import { PolicySequenceError, type PolicyPrompt, type RubricPolicy } from "../policy/rubric-policy.js";
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

/** Scores û of outputs under a rubric (normalised weighted sums of the rubric's verifier verdicts); an empty rubric scores 0. */
export async function proxyScores(
  rubric: FlatRubric,
  prompt: GymPrompt,
  outputs: readonly string[],
): Promise<number[]> {
  if (rubric.criteria.length === 0) return outputs.map(() => 0);
  return (await scoreCandidates(rubric, prompt.task, outputs, { registry })).map((c) => c.score.normalized);
}

export interface GymRewardOptions {
  readonly policy: RubricPolicy;
  readonly worker: Worker;
  /** λ_clarify: cost per question asked. Default 0.01. */
  readonly clarifyCost?: number;
  /** λ_compute: cost per rubric criterion (what verifying it costs). Default 0.002. */
  readonly computeCost?: number;
  /** Milliseconds spent in the worker and in the verifiers are added here, when given. */
  readonly timings?: { worker: number; verifiers: number };
}

/**
 * The Stage II return of a sequence: the worker writes one output under the sequence's rubric and
 * r = U*(y) − λ_clarify·(questions asked) − λ_compute·(criteria in the rubric).
 */
export function gymReward(
  options: GymRewardOptions,
): (prompt: GymPrompt, tokens: readonly number[], context: { seed: number }) => Promise<number> {
  const clarify = options.clarifyCost ?? 0.01;
  const compute = options.computeCost ?? 0.002;
  return async (prompt, tokens, { seed }) => {
    const { questions } = options.policy.decode(tokens);
    const rubric = options.policy.toRubric(tokens, `${prompt.task.id}-rubric`);
    const t0 = performance.now();
    const [output] = await options.worker.produce(prompt.task, rubric, 1, { seed });
    const t1 = performance.now();
    const utility = await trueUtility(prompt, output!.text);
    if (options.timings) {
      options.timings.worker += t1 - t0;
      options.timings.verifiers += performance.now() - t1;
    }
    return utility - clarify * questions.length - compute * rubric.criteria.length;
  };
}

/**
 * A chat-format SFT example of @rubric/autointeract (`gymSftCorpus`, `sftExample`) as the
 * policy's tokens: the manager's questions (assistant turns `{"question"}`, matched to the
 * repertoire), then the final assistant turn's rubric `{"criteria": [{text, weight}]}`.
 * Undefined when none of its criteria is in the policy's vocabulary (nothing to imitate).
 * @throws PolicySequenceError for a question outside the repertoire or a malformed rubric turn.
 */
export function sftSequence(policy: RubricPolicy, example: SftExample): number[] | undefined {
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
  const criteria = final.data.criteria.flatMap((c) => {
    const known = policy.vocab.find((v) => v.text === c.text);
    return known
      ? [{ id: known.id, text: c.text, weight: c.weight, polarity: "reward" as const, verifier: known.verifier }]
      : [];
  });
  return criteria.length > 0
    ? policy.encode(questions, { id: `${example.metadata.taskId}-reference`, criteria })
    : undefined;
}

const QuestionTurnSchema = z.object({ question: z.string() });
const RubricTurnSchema = z.object({ criteria: z.array(z.object({ text: z.string(), weight: z.number() })) });

/**
 * Stage I's target for a prompt, from @rubric/autointeract's SFT corpus: the default policy
 * manager's questions and the rubric it reconstructs from the replies (`reference: "elicited"`)
 * — a teacher's imperfect reconstruction of what the stakeholder values, not the oracle.
 */
export async function teacherSequence(
  policy: RubricPolicy,
  prompt: GymPrompt,
  questionBudget = 5,
): Promise<number[] | undefined> {
  const [example] = await gymSftCorpus([prompt.task], {
    seed: prompt.stakeholderSeed,
    questionBudget,
    reference: "elicited",
  });
  return sftSequence(policy, example!);
}

/**
 * Stage I's examples for `trainSftStage`: each prompt with its {@link teacherSequence}; a prompt
 * whose teacher's rubric has nothing in the policy's vocabulary is left out.
 */
export async function teacherExamples(
  policy: RubricPolicy,
  prompts: readonly GymPrompt[],
  questionBudget?: number,
): Promise<SftItem<GymPrompt>[]> {
  const examples: SftItem<GymPrompt>[] = [];
  for (const prompt of prompts) {
    const tokens = await teacherSequence(policy, prompt, questionBudget);
    if (tokens) examples.push({ prompt, tokens });
  }
  return examples;
}
