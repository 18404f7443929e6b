import type { Environment } from "../../environment/environment.js";
import type { Policy } from "../../policy/policy.js";
import { type Episode, rollout } from "../../rollout/rollout.js";
import { gymOracle } from "../teachers.js";
import type { GymTask } from "../world.js";

/** One episode of `task` whose first action is `first`, the oracle's after it. */
export async function episodeStarting(
  environment: Environment<GymTask>,
  task: GymTask,
  first: string,
): Promise<Episode> {
  const oracle = gymOracle([task]);
  const scripted: Policy = {
    name: "scripted",
    act: async (views, options) => (views[0]!.history.length === 0 ? [{ text: first }] : oracle.act(views, options)),
  };
  const [episode] = await rollout(environment, [task], scripted, { temperature: 0, seed: 1 });
  return episode!;
}
