import { describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { HOTPOT_TRAIN } from "../hotpotqa/__fixtures__/shared-data.js";
import { loadHotpotQa } from "../hotpotqa/data.js";
import { hotpotQa } from "../hotpotqa/environment.js";
import { rollout } from "../rollout/rollout.js";
import { goldTeacher, teacherAnnotation } from "../warmup/teacher.js";
import { teacherCritic } from "./teacher-critic.js";

const train = loadHotpotQa(HOTPOT_TRAIN, { first: 40 });
const environment = hotpotQa();

describe("teacherCritic", () => {
  it("rates every step with the teacher's projected annotation: Σ_t s_t = R, gold searches above distractors", async () => {
    const episodes = await rollout(environment, train, goldTeacher(train, { noise: 0.4 }), {
      temperature: 1,
      seed: 4,
      replicas: 2,
    });
    const critic = teacherCritic(3);
    const ratings = await critic.rate(episodes);
    expect(ratings.map((r) => r.length)).toEqual(episodes.map((e) => e.steps.length));
    ratings.forEach((steps, e) => {
      const annotation = teacherAnnotation(episodes[e]!, 3);
      steps.forEach((rating, t) => {
        expect(rating.scores).toEqual(annotation.steps[t]!.scores);
        expect(rating.criteria).toEqual(annotation.steps[t]!.criteria);
        expect(rating.s).toBeCloseTo(rating.scores.reduce((a, b) => a + b, 0) / 3, 12);
      });
      expect(steps.reduce((sum, rating) => sum + rating.s, 0)).toBeCloseTo(episodes[e]!.reward, 9);
    });
    // Within one trajectory's projection, a search that found a gold paragraph scores above one that did not.
    let compared = 0;
    episodes.forEach((episode, e) => {
      const searches = episode.steps.flatMap((step, t) =>
        step.transition.kind === "tool"
          ? [{ gold: step.transition.info["supporting"] === true, s: ratings[e]![t]!.s }]
          : [],
      );
      for (const good of searches.filter((x) => x.gold))
        for (const bad of searches.filter((x) => !x.gold)) {
          expect(good.s).toBeGreaterThan(bad.s);
          compared++;
        }
    });
    expect(compared).toBeGreaterThan(0);
    expect(critic.coEvolves).toBe(false);
    expect(critic.rateSteps).toBeUndefined();
    await expect(critic.update(episodes, ratings)).rejects.toThrow(RlxarInputError);
    expect(() => teacherCritic(0)).toThrow(RlxarInputError);
  });
});
