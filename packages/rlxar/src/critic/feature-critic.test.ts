import { describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { arcoGym } from "../gym/environment.js";
import { GYM_FEATURE_NAMES, GYM_STATE_FEATURE_NAMES, gymStateFeatures, gymStepFeatures } from "../gym/features.js";
import { gymNoisyTeacher, gymOracle } from "../gym/teachers.js";
import { generateGymTasks } from "../gym/world.js";
import { type Episode, rollout } from "../rollout/rollout.js";
import { featureCritic } from "./feature-critic.js";

const env = arcoGym();
const tasks = generateGymTasks({ hops: 2, count: 40, seed: 7, split: "train" });
// The oracle's episodes all succeed by searching whole names; the careless teacher's mostly fail.
const oracle = await rollout(env, tasks, gymOracle(tasks), { temperature: 0, seed: "oracle" });
const careless = await rollout(env, tasks, gymNoisyTeacher(tasks, { noise: 0.9 }), {
  temperature: 1,
  seed: "careless",
  replicas: 2,
});
const episodes = [...oracle, ...careless];
const FULL = GYM_FEATURE_NAMES.indexOf("search:full");
const FIRST = GYM_FEATURE_NAMES.indexOf("search:first-word");

const features = (episode: Episode) => gymStepFeatures(episode);
const critic = (coEvolves = true) => featureCritic({ features, names: GYM_FEATURE_NAMES, coEvolves });

describe("gymStepFeatures", () => {
  it("is φ of the action each step took: the oracle's searches name whole names, a careless search one word", () => {
    for (const episode of oracle) {
      const rows = gymStepFeatures(episode);
      expect(rows).toHaveLength(episode.steps.length);
      episode.steps.forEach((step, t) => {
        if (step.transition.actionText.startsWith("Search[")) expect(rows[t]![FULL]).toBe(1);
      });
    }
    const word = careless.flatMap((e) => gymStepFeatures(e)).filter((row) => row[FIRST] === 1);
    expect(word.length).toBeGreaterThan(10);
  });
});

describe("featureCritic (ARCO's decomposition loss over step features)", () => {
  it("fits Σ_t s_t = R from outcomes alone, by crediting the states that reveal the outcome", async () => {
    const successes = episodes.filter((e) => e.reward > 0.5).length;
    expect(successes).toBeGreaterThan(40);
    expect(episodes.length - successes).toBeGreaterThan(20);
    const learner = critic();
    const fit = learner.fit(episodes, { epochs: 60, seed: 1 });
    expect(fit.at(-1)!.loss).toBeLessThan(fit[0]!.loss);
    expect(fit.at(-1)!.meanAbsoluteGap).toBeLessThan(0.3);
    // What Σ_t s_t = R identifies here: the states that reveal the outcome, not the action that
    // caused it. Finishing with the chain complete and searching after a search that went off the
    // chain carry the credit; a whole-name search and a one-word search weigh alike.
    const { byFeature } = learner.weights();
    expect(byFeature["finish:chainComplete"]!).toBeGreaterThan(0.2);
    expect(byFeature["search:lastOffChain"]!).toBeLessThan(-0.05);
    expect(Math.abs(byFeature["search:full"]! - byFeature["search:first-word"]!)).toBeLessThan(0.05);
    const ratings = await learner.rate(episodes);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const sums = ratings.map((steps) => steps.reduce((sum, r) => sum + r.s, 0));
    const sumWhere = (won: boolean) => mean(sums.filter((_, e) => episodes[e]!.reward > 0.5 === won));
    expect(sumWhere(true)).toBeGreaterThan(sumWhere(false) + 0.5);
    expect(ratings[0]![0]!.scores).toEqual([ratings[0]![0]!.s]);
  });

  it("value-difference: a state value fitted to outcomes credits the careless search with the value it lost", async () => {
    const learner = featureCritic({
      features: gymStateFeatures,
      names: GYM_STATE_FEATURE_NAMES,
      objective: "value-difference",
    });
    const fit = learner.fit(episodes, { epochs: 60, seed: 1 });
    expect(fit.at(-1)!.loss).toBeLessThan(fit[0]!.loss);
    // A complete chain is worth more than an incomplete one with no slack left.
    const { byFeature } = learner.weights();
    expect(byFeature["complete"]!).toBeGreaterThan(byFeature["slack=0"]!);
    const ratings = await learner.rate(episodes);
    const first = ratings.map((steps) => steps[0]!.s);
    const sums = ratings.map((steps) => steps.reduce((total, r) => total + r.s, 0));
    // The sum telescopes, Σ_t s_t = R − V(h_0), and every episode starts from an equal state
    // (nothing found, the same slack): R − Σ_t s_t is one number, V(h_0).
    const starts = episodes.map((episode, e) => episode.reward - sums[e]!);
    expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(1e-9);
    // The first search: a whole-name search that hit gains value; a one-word search that missed loses it.
    const firstSearch = (won: (row: number[]) => boolean) =>
      episodes.flatMap((episode, e) =>
        won(gymStepFeatures(episode)[0]!) && episode.steps.length > 1 ? [first[e]!] : [],
      );
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(firstSearch((row) => row[FULL] === 1))).toBeGreaterThan(mean(firstSearch((row) => row[FIRST] === 1)));
  });

  it("is reproducible under its seed, and an untrained one scores 0 everywhere", async () => {
    const a = critic();
    const b = critic();
    a.fit(careless, { epochs: 3, seed: "s" });
    b.fit(careless, { epochs: 3, seed: "s" });
    expect(a.weights()).toEqual(b.weights());
    const fresh = await critic().rate(careless.slice(0, 2));
    expect(fresh.flat().every((r) => r.s === 0)).toBe(true);
  });

  it("co-evolving: one decomposition step per batch, pulled toward the frozen reference; frozen, update refuses", async () => {
    const learner = critic();
    learner.fit(episodes, { epochs: 5, seed: 2 });
    await learner.freezeReference();
    const before = learner.weights();
    // A batch whose outcomes disagree with the fit: every careless episode relabelled a success.
    const flipped = careless.map((e) => ({ ...e, reward: 1 }));
    const update = await learner.update(flipped);
    expect(update.version).toBe(1);
    expect(learner.version).toBe(1);
    expect(update.metrics).toMatchObject({ pull: 0 });
    const after = learner.weights();
    expect(after.bias).toBeGreaterThan(before.bias);
    const second = await learner.update(flipped);
    expect(second.metrics["pull"]).toBeGreaterThan(0);
    await expect(critic(false).update(careless)).rejects.toThrow(/frozen: it cannot be updated/);
  });

  it("copy: the same weights, reference and optimiser moments, then a life of its own", async () => {
    const original = critic();
    original.fit(episodes, { epochs: 5, seed: 3 });
    await original.freezeReference();
    const frozen = original.copy({ coEvolves: false });
    const twin = original.copy();
    expect(frozen.coEvolves).toBe(false);
    expect(await frozen.rate(careless)).toEqual(await original.rate(careless));
    // Trained on the same batch, the copy and the original move alike (the Adam moments came along)…
    await twin.update(careless);
    await original.update(careless);
    expect(twin.weights()).toEqual(original.weights());
    // …and the frozen copy did not move with them.
    expect(frozen.weights()).not.toEqual(original.weights());
    await expect(frozen.update(careless)).rejects.toThrow(/frozen/);
  });

  it("names an episode whose features do not fit: a row count or a width that is wrong", async () => {
    const short = featureCritic({ features: () => [[1]], names: ["one"] });
    await expect(short.rate([careless.find((e) => e.steps.length > 1)!])).rejects.toThrow(/feature rows for \d+ steps/);
    const wide = featureCritic({ features: (e) => e.steps.map(() => [1, 2]), names: ["one"] });
    await expect(wide.rate([careless[0]!])).rejects.toThrow(/step 0: 2 features, expected 1/);
    expect(() => featureCritic({ features, names: [] })).toThrow(RlxarInputError);
    expect(() => critic().fit([], { epochs: 1 })).toThrow(/nothing to fit/);
  });
});
