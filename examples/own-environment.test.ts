import { episodeSteps, rollout } from "@rubric/rlxar";
import { describe, expect, it } from "vitest";
import { chainFollower, keyValueLookup, tasks } from "./own-environment.js";

describe("the own-environment example (rlxar README)", () => {
  it("runs through rollout: two lookups along the chain, then the right answer", async () => {
    const episodes = await rollout(keyValueLookup(), tasks, chainFollower, { temperature: 0, seed: 1 });
    expect(episodes.map((e) => [e.taskId, e.reward])).toEqual([
      ["t1", 1],
      ["t2", 1],
    ]);
    expect(episodes[0]!.steps.map((s) => s.transition.actionText)).toEqual(["Get[ada]", "Get[city-7]", "Answer[Lyon]"]);
    expect(episodeSteps(episodes[0]!)[2]!.history.map((turn) => turn.observation)).toEqual(["city-7", "Lyon"]);
  });

  it("charges an unreadable output a lookup and ends a step past the budget", () => {
    const episode = keyValueLookup(1).reset(tasks[0]!);
    expect(episode.step("hmm").kind).toBe("invalid");
    expect(episode.view()).toMatchObject({ budgetLeft: 0, mustFinish: true });
    expect(episode.step("Get[ada]")).toMatchObject({ kind: "violation", done: true, reward: 0 });
  });
});
