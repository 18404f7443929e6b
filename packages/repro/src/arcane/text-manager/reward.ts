import type { Worker } from "@rubric/autointeract";
import { trueUtility, type GymPrompt } from "@rubric/gspo";
import type { SidecarManagerConfig } from "./config.js";
import type { SidecarManager } from "./manager.js";
import type { SidecarManagerCounts } from "./table.js";
import { episodeTokens, readRubricTurn, type ManagerEpisode, type ReadRubric } from "./turns.js";

/** U* an episode gets when its rubric turn does not parse (or reads as no rule): the lowest utility there is. */
export const UNPARSEABLE_UTILITY = 0;

/**
 * Reads an episode's rubric turn (`readRubricTurn`) and counts it: the episode, a questions turn
 * that did not parse, a rubric turn that is not a rubric, the criteria only a judge could check.
 */
export function readEpisode(episode: ManagerEpisode, id: string, counts: SidecarManagerCounts): ReadRubric {
  const read = readRubricTurn(episode.rubricText, id);
  counts.episodes++;
  if (!episode.questionsParsed) counts.questionsUnparsed++;
  if (read.ok) counts.judgedCriteria += read.judged;
  else counts.unparseable++;
  return read;
}

/**
 * An episode's reward: U* of the worker's output under its rubric less the costs in tokens
 * (`gymReward`'s), or {@link UNPARSEABLE_UTILITY} less the questions' cost when the rubric turn
 * is not a rubric — counted in `counts` either way.
 */
export function sidecarManagerReward(
  manager: SidecarManager,
  worker: Worker,
  config: Pick<SidecarManagerConfig, "clarifyCostPerToken" | "computeCostPerToken">,
  counts: SidecarManagerCounts,
) {
  return async (prompt: GymPrompt, tokens: readonly number[], { seed }: { seed: number }): Promise<number> => {
    const episode = await manager.episode(prompt, tokens);
    const read = readEpisode(episode, `${prompt.task.id}-rubric`, counts);
    const cost = episodeTokens(episode, read.ok ? read.rubric : undefined);
    const clarify = config.clarifyCostPerToken * cost.questions;
    if (!read.ok) return UNPARSEABLE_UTILITY - clarify;
    const [output] = await worker.produce(prompt.task, read.rubric, 1, { seed });
    return (await trueUtility(prompt, output!.text)) - clarify - config.computeCostPerToken * cost.rubric;
  };
}
