import { describe, expect, it } from "vitest";
import { episodeStarting as scriptedEpisode } from "./__fixtures__/scripted-episode.js";
import { rollout } from "../rollout/rollout.js";
import {
  checkGymCriterion,
  criterionValidity,
  GYM_CRITERIA,
  GYM_FIXED_CRITERIA,
  gymFixedAnnotation,
  gymStepCriteria,
  gymTeacherCritic,
  gymTeacherAnnotation,
  readGymCriterion,
} from "./criteria.js";
import { arcoGym } from "./environment.js";
import { gymNoisyTeacher, gymOracle } from "./teachers.js";
import { type GymTask, generateGymTasks } from "./world.js";

const env = arcoGym();
const tasks = generateGymTasks({ hops: [2, 3], count: 40, seed: 81 });
// A task whose first careless search finds a look-alike, not the gold paragraph.
const task: GymTask = tasks.find(
  (t) => env.reset(t).step(`Search[${t.chain[0]!.subject.split(" ")[0]}]`).info.paragraph !== t.chain[0]!.paragraph,
)!;

const episodeStarting = (first: string) => scriptedEpisode(env, task, first);

describe("the gym's criterion grammar", () => {
  it("reads back every criterion it writes, slots and all, and nothing else", async () => {
    const episode = await episodeStarting(`Search[${task.chain[0]!.subject}]`);
    for (const step of episode.steps) {
      const { criteria } = gymStepCriteria(step, 3);
      for (const text of criteria) {
        const read = readGymCriterion(text)!;
        const template = GYM_CRITERIA.find((t) => t.key === read.key)!;
        expect(template.text.replace(/\{(\w+)\}/gu, (_, slot: string) => read.slots[slot]!)).toBe(text);
      }
    }
    expect(readGymCriterion("Searches for zorvex, the entity the question needs next")).toBeUndefined();
    expect(readGymCriterion("The query is specific and relevant to the question")).toBeUndefined();
    expect(readGymCriterion("  Does not repeat an earlier search ")).toEqual({ key: "new-query", slots: {} });
  });

  it("fills slots from the prefix alone: the entity the chain needs next, copied from the question or the last paragraph", async () => {
    const episode = await episodeStarting(`Search[${task.chain[0]!.subject}]`);
    const [first, second] = episode.steps;
    expect(gymStepCriteria(first!, 2).criteria).toEqual([
      `Searches for ${task.chain[0]!.subject}, the entity the question needs next`,
      `Retrieves the paragraph about ${task.chain[0]!.subject}`,
    ]);
    expect(gymStepCriteria(second!, 1).criteria).toEqual([
      `Searches for ${task.chain[1]!.subject}, the entity the question needs next`,
    ]);
    const finish = episode.steps.at(-1)!;
    expect(gymStepCriteria(finish, 3).criteria).toEqual([
      `Answers with ${task.answer}, the last entity the chain reached`,
      `Answers only after all ${task.hops} relations are found`,
      "Answers with a name the retrieved paragraphs hold",
    ]);
    // K = 5 (ARCO's sensitivity) fills every class; more does not.
    expect(gymStepCriteria(finish, 5).criteria.slice(3)).toEqual([
      `Does not answer with ${task.chain[0]!.subject}, the entity the question names`,
      "Answers after at least one search",
    ]);
    expect(() => gymStepCriteria(finish, 6)).toThrow(/k = 6/u);
  });

  it("checks a step for what each criterion says: the oracle meets all, a careless search only some", async () => {
    const oracle = await rollout(env, tasks, gymOracle(tasks), { temperature: 0, seed: 1 });
    for (const episode of oracle)
      for (const step of episode.steps) {
        expect(gymStepCriteria(step, 5).verdicts.every(Boolean)).toBe(true);
      }
    const careless = (await episodeStarting(`Search[${task.chain[0]!.subject.split(" ")[0]}]`)).steps[0]!;
    const entity = task.chain[0]!.subject;
    expect(checkGymCriterion(`Searches for ${entity}, the entity the question needs next`, careless)).toBe(true);
    expect(checkGymCriterion(`Retrieves the paragraph about ${entity}`, careless)).toBe(false);
    expect(checkGymCriterion(`Names ${entity} in full, not by a word a look-alike shares`, careless)).toBe(false);
    // A criterion is checked as written: the right template with the wrong entity is not met, and a
    // Finish criterion is not met by a search.
    const lure = task.lures.find((l) => l.hop === 0)!.name;
    expect(checkGymCriterion(`Searches for ${lure}, the entity the question needs next`, careless)).toBe(false);
    expect(checkGymCriterion(`Answers with ${entity}, the last entity the chain reached`, careless)).toBe(false);
    expect(checkGymCriterion("Keeps the query short", careless)).toBeUndefined();
    // Answering the question's own entity at once: neither a later entity nor after a search.
    const rash = (await episodeStarting(`Finish[${entity}]`)).steps[0]!;
    expect(checkGymCriterion(`Does not answer with ${entity}, the entity the question names`, rash)).toBe(false);
    expect(checkGymCriterion("Answers after at least one search", rash)).toBe(false);
    // An unreadable action: it names an entity, but leaves its bracket open.
    const garbled = (await episodeStarting(`Search[${entity}`)).steps[0]!;
    expect(garbled.transition.kind).not.toBe("tool");
    expect(checkGymCriterion("Names an entity the question or the paragraphs hold", garbled)).toBe(true);
    expect(checkGymCriterion("Closes its action with a bracket", garbled)).toBe(false);
  });

  it("annotates fixed criteria (w/o adaptive) by their checkers: the same K texts on every step, Σ_t s_t = R", async () => {
    const episodes = await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "fixed" });
    for (const episode of episodes) {
      const annotation = gymFixedAnnotation(episode, 3);
      annotation.steps.forEach((step, t) => {
        expect(step.criteria).toEqual(GYM_FIXED_CRITERIA.slice(0, 3));
        const verdicts = step.criteria.map((c) => checkGymCriterion(c, episode.steps[t]!));
        expect(step.raw).toEqual(verdicts.map((met) => (met ? 0.8 : -0.8)));
      });
    }
    // A search step meets the search criterion at most; a finish step the finish one at most.
    const search = episodes.flatMap((e) => e.steps).find((step) => step.transition.kind === "tool")!;
    expect(GYM_FIXED_CRITERIA.slice(0, 3).map((c) => checkGymCriterion(c, search))).toEqual([true, false, false]);
    expect(() => gymFixedAnnotation(episodes[0]!, 6)).toThrow(/5 fixed criteria, got k = 6/u);
  });

  it("annotates an episode as the warm-up's teacher: the checkers' verdicts, projected so that Σ_t s_t = R", async () => {
    const episodes = await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "annotate" });
    for (const episode of episodes) {
      const annotation = gymTeacherAnnotation(episode, 3);
      expect(annotation.outcome).toBe(episode.reward);
      expect(annotation.steps).toHaveLength(episode.steps.length);
      annotation.steps.forEach((step, t) => {
        expect(step.raw).toEqual(gymStepCriteria(episode.steps[t]!, 3).verdicts.map((met) => (met ? 0.8 : -0.8)));
      });
      const sum = annotation.steps.reduce((s, step) => s + step.scores.reduce((a, b) => a + b, 0) / 3, 0);
      // The projection reaches R unless clamping at ±1 stops it (a long failed episode of good steps).
      if (Math.abs(sum - episode.reward) > 1e-9)
        expect(annotation.steps.some((s) => s.scores.some((x) => Math.abs(x) === 1))).toBe(true);
    }
  });

  it("measures criterion validity: the share of scored criteria whose sign agrees with the checker", async () => {
    const episodes = await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "validity" });
    const truthful = episodes.map((e) =>
      e.steps.map((step) => {
        const { criteria, verdicts } = gymStepCriteria(step, 3);
        return { criteria, scores: verdicts.map((met) => (met ? 0.5 : -0.5)) };
      }),
    );
    const all = truthful.flat().length * 3;
    expect(criterionValidity(episodes, truthful)).toEqual({ checked: all, agreed: all, validity: 1, unread: 0 });
    const inverted = truthful.map((steps) => steps.map((s) => ({ ...s, scores: s.scores.map((x) => -x) })));
    expect(criterionValidity(episodes, inverted).validity).toBe(0);
    const freeText = truthful.map((steps) => steps.map(() => ({ criteria: ["Be helpful"], scores: [1] })));
    expect(criterionValidity(episodes, freeText)).toMatchObject({
      checked: 0,
      validity: null,
      unread: truthful.flat().length,
    });
    expect(() => criterionValidity(episodes, truthful.slice(1))).toThrow(/ratings/u);
  });
});

describe("gymTeacherCritic", () => {
  it("rates every step by the teacher's projected scores, s_t their mean, and does not co-evolve", async () => {
    const episodes = await rollout(env, tasks, gymNoisyTeacher(tasks), { temperature: 1, seed: "critic" });
    const critic = gymTeacherCritic(3);
    const ratings = await critic.rate(episodes);
    episodes.forEach((episode, e) => {
      const annotation = gymTeacherAnnotation(episode, 3);
      expect(ratings[e]!.map((r) => r.scores)).toEqual(annotation.steps.map((s) => s.scores));
      for (const rating of ratings[e]!) expect(rating.s).toBeCloseTo(rating.scores.reduce((a, b) => a + b, 0) / 3, 12);
    });
    expect(critic.coEvolves).toBe(false);
    expect(critic.rateSteps).toBeUndefined();
    await expect(critic.update([], [])).rejects.toThrow(/the gym teacher's critic is frozen/u);
  });
});
