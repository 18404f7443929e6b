import { simulatedStakeholder, type Worker } from "@rubric/autointeract";
import { approximateTokens, createRng, mean, type FlatRubric } from "@rubric/core";
import type { GymPrompt } from "@rubric/gspo";
import { guidedReturns } from "../controls.js";
import type { SidecarManagerConfig } from "./config.js";
import type { SidecarManager } from "./manager.js";
import { emptyCounts, type SidecarManagerTable } from "./table.js";
import { readEpisode, UNPARSEABLE_UTILITY } from "./reward.js";

type Written = SidecarManagerTable["written"]["sft"];

/** Each eval task's episode under the manager's current policy, its rubric's returns per N, and what parsed. */
export async function evaluate(
  manager: SidecarManager,
  prompts: readonly GymPrompt[],
  worker: Worker,
  config: SidecarManagerConfig,
  fork: string,
): Promise<{ returns: number[][]; written: Written }> {
  const counts = emptyCounts();
  const returns: number[][] = [];
  const rubrics: FlatRubric[] = [];
  const parsedReturns: number[][] = [];
  const asked: number[] = [];
  const examples: Written["examples"] = [];
  for (const [i, prompt] of prompts.entries()) {
    const seed = createRng(config.seed)
      .fork(`${fork}:${prompt.task.id}`)
      .int(2 ** 31);
    const [sequence] = await manager.sample(prompt, 1, { seed });
    const episode = await manager.episode(prompt, sequence!.tokens);
    const read = readEpisode(episode, `${prompt.task.id}-${fork}`, counts);
    asked.push(episode.questions.length);
    if (i < 3) examples.push({ taskId: prompt.task.id, questions: [...episode.questions], rubric: episode.rubricText });
    if (!read.ok) {
      returns.push(config.ns.map(() => UNPARSEABLE_UTILITY));
      continue;
    }
    rubrics.push(read.rubric);
    const picked = await guidedReturns(prompt, read.rubric, worker, config.ns, outputSeed(config, prompt));
    returns.push(picked);
    parsedReturns.push(picked);
  }
  const criteria = rubrics.flatMap((r) => r.criteria);
  return {
    returns,
    written: {
      counts,
      criteriaPerRubric: rubrics.length > 0 ? mean(rubrics.map((r) => r.criteria.length)) : 0,
      tokensPerCriterion: criteria.length > 0 ? mean(criteria.map((c) => approximateTokens(c.text))) : 0,
      questionsAsked: mean(asked),
      meanReturnWhenParsed: parsedReturns.length > 0 ? meanOver(parsedReturns, config.ns) : null,
      examples,
    },
  };
}

/** No Rubric and the oracle on the eval tasks, drawn from the same worker outputs as the managers' rows. */
export async function baselineReturns(
  prompts: readonly GymPrompt[],
  worker: Worker,
  config: SidecarManagerConfig,
): Promise<{ noRubric: number[][]; oracle: number[][] }> {
  const noRubric: number[][] = [];
  const oracle: number[][] = [];
  for (const prompt of prompts) {
    // An empty rubric scores every output 0, so the pick is the first: an unguided draw.
    noRubric.push(
      await guidedReturns(prompt, { id: "none", criteria: [] }, worker, config.ns, outputSeed(config, prompt)),
    );
    const utility = simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility;
    oracle.push(await guidedReturns(prompt, utility, worker, config.ns, outputSeed(config, prompt)));
  }
  return { noRubric, oracle };
}

/** The worker's outputs of an eval task: the same draws for every row, so rows differ only by their rubric. */
function outputSeed(config: SidecarManagerConfig, prompt: GymPrompt): number {
  return createRng(config.seed)
    .fork(`outputs:${prompt.task.id}`)
    .int(2 ** 31);
}

export const meanOver = (returns: readonly number[][], ns: readonly number[]) =>
  ns.map((_, j) => mean(returns.map((r) => r[j]!)));
