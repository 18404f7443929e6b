import { describe, expect, it } from "vitest";
import { episodeStarting as scriptedEpisode } from "../gym/__fixtures__/scripted-episode.js";
import type { Episode } from "../rollout/rollout.js";
import { RlxarInputError } from "../errors.js";
import { OPTIMAL_GYM_WEIGHTS } from "../gym/__fixtures__/optimal-weights.js";
import { TRUE_ADVANTAGE_CRITERION, trueAdvantageCritic } from "./true-advantage-critic.js";
import { trueStepAdvantages } from "./true-advantage.js";
import { arcoGym } from "../gym/environment.js";
import { gymPolicy } from "../gym/policy.js";
import { gymOracle } from "../gym/teachers.js";
import { type GymTask, generateGymTasks } from "../gym/world.js";

const env = arcoGym();
// A two-hop task whose look-alike wins the search for the shared first word: that search is a lure.
const task: GymTask = generateGymTasks({ hops: 2, count: 40, seed: 71 }).find(
  (t) => env.reset(t).step(`Search[${t.lures[0]!.sharedWord}]`).info.paragraph === t.lures[0]!.paragraph,
)!;
const gold = `Search[${task.chain[0]!.subject}]`;
const lure = `Search[${task.lures[0]!.sharedWord}]`;

/** A mediocre policy: it follows the chain, but searches by the first word alone about half the time. */
const mediocre = gymPolicy({
  initialWeights: {
    "search:expected": 5,
    "search:first-word": 2,
    "search:full": 2,
    "search:chainComplete": -5,
    "finish:chainComplete": 10,
    "finish:expected": 3,
  },
});

const episodeStarting = (first: string) => scriptedEpisode(env, task, first);

describe("trueStepAdvantages", () => {
  it("credits the gold search above π's average and the lure search below it", async () => {
    const options = { rollouts: 400, seed: "truth" };
    const [onGold] = await trueStepAdvantages(env, task, mediocre, await episodeStarting(gold), options);
    const [onLure] = await trueStepAdvantages(env, task, mediocre, await episodeStarting(lure), options);
    console.log(
      `V(h₀) ${onGold!.v.toFixed(3)}; gold search Q ${onGold!.q.toFixed(3)}, A ${onGold!.advantage.toFixed(3)} ± ${onGold!.standardError.toFixed(3)}; ` +
        `lure search Q ${onLure!.q.toFixed(3)}, A ${onLure!.advantage.toFixed(3)} ± ${onLure!.standardError.toFixed(3)}`,
    );
    expect(onGold!.advantage).toBeGreaterThan(3 * onGold!.standardError);
    expect(onLure!.advantage).toBeLessThan(-3 * onLure!.standardError);
    // V(h₀) is one value, estimated with the same seeds for both episodes.
    expect(onLure!.v).toBe(onGold!.v);
  });

  it("is consistent: V(h) ≈ Σ_a π(a | h) Q(h, a) over the candidates at h", async () => {
    const view = env.reset(task).view();
    const { candidates, logProbs } = mediocre.distribution(view);
    const options = { rollouts: 300, seed: "consistency" };
    let expected = 0;
    let v = 0;
    let se = 0;
    for (const [c, candidate] of candidates.entries()) {
      const [step] = await trueStepAdvantages(env, task, mediocre, await episodeStarting(candidate.text), options);
      expected += Math.exp(logProbs[c]!) * step!.q;
      v = step!.v;
      se = Math.max(se, step!.standardError);
    }
    console.log(
      `V(h₀) ${v.toFixed(3)}, Σ_a π(a | h₀) Q(h₀, a) ${expected.toFixed(3)}, standard error ≤ ${se.toFixed(3)}`,
    );
    expect(Math.abs(expected - v)).toBeLessThan(3 * se);
  });

  it("is exact for a deterministic policy: its own actions have advantage 0, and a finish earns its reward", async () => {
    const episode = await episodeStarting(lure);
    const credit = await trueStepAdvantages(env, task, gymOracle([task]), episode, { rollouts: 3, seed: 2 });
    // The oracle recovers from the lure with its spare search: nothing is lost, so no credit moves.
    expect(credit.map((c) => [c.q, c.v, c.advantage, c.standardError])).toEqual(episode.steps.map(() => [1, 1, 0, 0]));
    const wrongFinish = await episodeStarting(`Finish[${task.chain[0]!.object}]`);
    const [finish] = await trueStepAdvantages(env, task, gymOracle([task]), wrongFinish, { rollouts: 3, seed: 2 });
    expect(finish).toMatchObject({ q: 0, v: 1, advantage: -1 });
  });

  it("refuses another task's episode, a replay that differs, and a bad rollout count", async () => {
    const episode = await episodeStarting(gold);
    const [other] = generateGymTasks({ hops: 2, count: 1, seed: 72 });
    await expect(trueStepAdvantages(env, other!, mediocre, episode, { rollouts: 2, seed: 1 })).rejects.toThrow(
      /taskId/u,
    );
    const forged: Episode = {
      ...episode,
      steps: episode.steps.map((s, i) =>
        i === 0 ? { ...s, transition: { ...s.transition, observation: "forged" } } : s,
      ),
    };
    await expect(trueStepAdvantages(env, task, mediocre, forged, { rollouts: 2, seed: 1 })).rejects.toThrow(
      /steps\[0\].*deterministic/u,
    );
    await expect(trueStepAdvantages(env, task, mediocre, episode, { rollouts: 0, seed: 1 })).rejects.toThrow(
      /options\.rollouts/u,
    );
  });
});

describe("trueAdvantageCritic", () => {
  it("rates each step by its true advantage under the live policy, the same way every time", async () => {
    const policy = gymPolicy({ initialWeights: { ...mediocre.featureWeights() } });
    const critic = trueAdvantageCritic(env, policy, { tasks: [task], rollouts: 200, temperature: 1, seed: "c" });
    const episodes = [await episodeStarting(gold), await episodeStarting(lure)];
    const ratings = await critic.rate(episodes);
    expect(ratings.map((r) => r.length)).toEqual(episodes.map((e) => e.steps.length));
    expect(ratings[0]![0]!.s).toBeGreaterThan(0.05);
    expect(ratings[1]![0]!.s).toBeLessThan(-0.05);
    for (const rating of ratings.flat()) {
      expect(rating.criteria).toEqual([TRUE_ADVANTAGE_CRITERION]);
      expect(rating.scores).toEqual([rating.s]);
    }
    expect(await critic.rate(episodes)).toEqual(ratings);
    // The live policy: once it follows the chain by whole names, the gold search is nearly always
    // its own choice and earns next to no advantage.
    policy.weights.set(gymPolicy({ initialWeights: OPTIMAL_GYM_WEIGHTS }).weights);
    const afterGold = (await critic.rate([episodes[0]!]))[0]![0];
    console.log(
      `gold search's advantage: ${ratings[0]![0]!.s.toFixed(3)} under π, ${afterGold!.s.toFixed(3)} once π is optimal`,
    );
    expect(Math.abs(afterGold!.s)).toBeLessThan(0.05);
  });

  it("refuses an episode of a task it was not given, and does not co-evolve", async () => {
    const [other] = generateGymTasks({ hops: 2, count: 1, seed: 72 });
    const critic = trueAdvantageCritic(env, mediocre, { tasks: [other!], temperature: 1, seed: 1 });
    await expect(critic.rate([await episodeStarting(gold)])).rejects.toThrow(/episodes\[0\]\.taskId/u);
    expect(critic.coEvolves).toBe(false);
    await expect(critic.update([], [])).rejects.toThrow(RlxarInputError);
  });
});
