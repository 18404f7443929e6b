import { describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { hotpotQa } from "../hotpotqa/environment.js";
import type { Policy } from "../policy/policy.js";
import { rollout } from "../rollout/rollout.js";
import { arcoGym } from "./environment.js";
import { generateGymTasks, GYM_MAX_HOPS } from "./world.js";

const env = arcoGym();
const tasks = generateGymTasks({ hops: [2, 3, 4], count: 300, seed: 21, split: "eval" });

/** The paragraph a first search for `query` retrieves (its pool index), or null. */
const retrieve = (task: (typeof tasks)[number], query: string) =>
  env.reset(task).step(`Search[${query}]`).info.paragraph as number | null;

describe("arcoGym", () => {
  it("answers every question: a search for each chain entity's name retrieves its gold paragraph by BM25 top-1", () => {
    for (const task of tasks)
      for (const hop of task.chain)
        expect({ task: task.id, got: retrieve(task, hop.subject) }).toEqual({ task: task.id, got: hop.paragraph });
  });

  it("needs its titles indexed: without them a name's search often finds the paragraph that names it as an object", () => {
    const untitled = hotpotQa({ maxSearches: 5, indexTitles: false, reward: "em" });
    const misses = tasks.flatMap((task) =>
      task.chain.filter((hop) => untitled.reset(task).step(`Search[${hop.subject}]`).info.paragraph !== hop.paragraph),
    );
    const searches = tasks.reduce((n, task) => n + task.hops, 0);
    console.log(`without titles indexed, ${misses.length} of ${searches} gold searches missed`);
    expect(misses.length).toBeGreaterThan(searches / 10);
  });

  it("lets plausible wrong searches find the look-alikes", () => {
    let lure = 0;
    let gold = 0;
    for (const task of tasks) {
      for (const l of task.lures) {
        // The look-alike's whole name always finds it.
        expect(retrieve(task, l.name)).toBe(l.paragraph);
      }
      for (const hop of task.chain.keys()) {
        // The shared first word alone finds a look-alike of the hop or its gold paragraph, nothing else.
        const group = task.lures.filter((l) => l.hop === hop);
        const got = retrieve(task, group[0]!.sharedWord);
        if (group.some((l) => got === l.paragraph)) lure++;
        else if (got === task.chain[hop]!.paragraph) gold++;
        else throw new Error(`task ${task.id}: ${group[0]!.sharedWord} retrieved paragraph ${got}`);
      }
    }
    const share = gold / (lure + gold);
    console.log(`a search for the shared first word found the gold paragraph in ${gold} of ${lure + gold} searches`);
    // Two look-alikes a hop: the gold paragraph one time in three (measured when written: 0.34).
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.42);
  });

  it("gives H + 1 searches: the oracle's path with one spare, then only Finish", () => {
    for (const task of tasks.slice(0, 30)) {
      const episode = env.reset(task);
      expect(episode.view().budgetLeft).toBe(task.hops + 1);
      episode.step(`Search[${task.lures[0]!.name}]`); // a wasted search
      for (const hop of task.chain) expect(episode.step(`Search[${hop.subject}]`).info.supporting).toBe(true);
      expect(episode.view()).toMatchObject({ budgetLeft: 0, mustFinish: true });
      const violation = episode.step(`Search[${task.answer}]`);
      expect(violation).toMatchObject({ kind: "violation", done: true, reward: 0 });
    }
  });

  it("rewards an exact-match Finish, normalised as HotpotQA's EM, and nothing else", () => {
    const task = tasks[0]!;
    const finish = (answer: string) => env.reset(task).step(`Finish[${answer}]`);
    expect(finish(task.answer)).toMatchObject({ kind: "finish", done: true, reward: 1 });
    expect(finish(`the ${task.answer.toUpperCase()}!`).reward).toBe(1);
    expect(finish(task.answer.split(" ")[0]!).reward).toBe(0);
    expect(finish(task.chain[0]!.object).reward).toBe(0);
    expect(env.reset(task).step("I think I should look something up")).toMatchObject({ kind: "invalid", reward: 0 });
  });

  it("says it is a simulation, and bounds every episode", () => {
    expect(env.name).toBe("arco-gym");
    expect(env.description).toMatch(/simulation/u);
    expect(env.description).toContain("Search[query]");
    expect(env.maxSteps).toBe(GYM_MAX_HOPS + 2);
    expect(arcoGym({ spareSearches: 0 }).reset(tasks[0]!).view().budgetLeft).toBe(tasks[0]!.hops);
    expect(() => arcoGym({ spareSearches: -1 })).toThrow(RlxarInputError);
    expect(() => env.reset({ ...tasks[0]!, hops: 9 })).toThrow(/hops/u);
  });

  it("rolls out a batch of 64 episodes in well under a second", async () => {
    const batch = tasks.slice(0, 64);
    // Searches the question's entity until the budget ends: the longest episodes there are.
    const stubborn: Policy = {
      name: "stubborn",
      act: async (views) =>
        views.map((v) => ({ text: v.mustFinish ? "Finish[nobody]" : `Search[${v.task.slice(0, 20)}]` })),
    };
    await rollout(env, batch, stubborn, { temperature: 0, seed: "warm" }); // indexes built once
    const start = performance.now();
    const episodes = await rollout(env, batch, stubborn, { temperature: 0, seed: 1 });
    const ms = performance.now() - start;
    console.log(`64 episodes of ${episodes.reduce((n, e) => n + e.steps.length, 0)} steps: ${ms.toFixed(1)} ms`);
    expect(episodes.every((e) => e.steps.length === e.steps[0]!.view.budgetLeft + 1)).toBe(true);
    expect(ms).toBeLessThan(1000);
  });
});
