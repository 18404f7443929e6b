import { describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { rollout } from "../rollout/rollout.js";
import { arcoGym } from "./environment.js";
import { CARELESS_NOISE, gymNoisyTeacher, gymOracle } from "./teachers.js";
import { generateGymTasks } from "./world.js";

const env = arcoGym();
const tasks = generateGymTasks({ hops: [2, 3, 4], count: 300, seed: 31, split: "eval" });

describe("gymOracle", () => {
  it("succeeds on every task, searching the chain in order and finishing with the answer", async () => {
    const episodes = await rollout(env, tasks, gymOracle(tasks), { temperature: 0, seed: 1 });
    episodes.forEach((episode, i) => {
      const task = tasks[i]!;
      expect(episode.reward).toBe(1);
      expect(episode.steps.map((s) => s.transition.actionText)).toEqual([
        ...task.chain.map((hop) => `Search[${hop.subject}]`),
        `Finish[${task.answer}]`,
      ]);
    });
  });

  it("searches the same entity again after a search that found no gold paragraph", async () => {
    const task = tasks[0]!;
    const episode = env.reset(task);
    episode.step(`Search[${task.lures[0]!.name}]`);
    const [decision] = await gymOracle(tasks).act([episode.view()], { temperature: 0, seeds: ["s"] });
    expect(decision!.text).toBe(`Search[${task.chain[0]!.subject}]`);
  });

  it("refuses a task it was not given", async () => {
    const view = env.reset(tasks[0]!).view();
    await expect(gymOracle(tasks.slice(1)).act([view], { temperature: 0, seeds: ["s"] })).rejects.toThrow(
      RlxarInputError,
    );
  });
});

describe("gymNoisyTeacher", () => {
  it("searches carelessly (the shared first word alone) at its noise rate, from the rollout's seeds", async () => {
    const teacher = gymNoisyTeacher(tasks);
    const episodes = await rollout(env, tasks, teacher, { temperature: 1, seed: "teach" });
    const again = await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "teach" });
    expect(again.map((e) => e.steps.map((s) => s.transition.actionText))).toEqual(
      episodes.map((e) => e.steps.map((s) => s.transition.actionText)),
    );
    const searches = episodes.flatMap((e, i) =>
      e.steps
        .filter((s) => s.transition.kind === "tool")
        .map((s) => ({ task: tasks[i]!, query: s.transition.action!.argument })),
    );
    const careless = searches.filter(({ task, query }) => task.lures.some((l) => l.sharedWord === query));
    const rate = careless.length / searches.length;
    console.log(`careless searches: ${careless.length} of ${searches.length} (${rate.toFixed(3)})`);
    expect(Math.abs(rate - CARELESS_NOISE)).toBeLessThan(0.05);
    const success = episodes.reduce((n, e) => n + e.reward, 0) / episodes.length;
    console.log(`noisy teacher's own success: ${success.toFixed(3)}`);
    // A hop is found by a careful search or by a careless one's one-in-three luck: 0.1 + 0.9 / 3 =
    // 0.4 a hop, about 0.08 over H = 2, 3, 4 (measured when written: 0.103).
    expect(success).toBeGreaterThan(0.05);
    expect(success).toBeLessThan(0.2);
  });

  it("is the oracle at noise 0 and refuses a noise outside [0, 1]", async () => {
    const episodes = await rollout(env, tasks.slice(0, 30), gymNoisyTeacher(tasks, { noise: 0 }), {
      temperature: 1,
      seed: 2,
    });
    expect(episodes.every((e) => e.reward === 1)).toBe(true);
    expect(() => gymNoisyTeacher(tasks, { noise: 1.5 })).toThrow(/options\.noise/u);
  });
});
