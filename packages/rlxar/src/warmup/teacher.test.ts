import { decompositionGap } from "@rubric/arco-heads";
import { describe, expect, it } from "vitest";
import { rollout } from "../rollout/rollout.js";
import { RlxarInputError } from "../errors.js";
import { loadHotpotQa } from "../hotpotqa/data.js";
import { HOTPOT_TRAIN } from "../hotpotqa/__fixtures__/shared-data.js";
import { hotpotQa } from "../hotpotqa/environment.js";
import type { AgentView } from "../environment/environment.js";
import { extractiveCandidates } from "../policy/extractive/candidates.js";
import { goldTeacher, teacherAnnotation, warmupData } from "./teacher.js";

const train = loadHotpotQa(HOTPOT_TRAIN, { first: 40 });
const environment = hotpotQa();

describe("goldTeacher on real HotpotQA questions", () => {
  it("searches the gold paragraphs by title and answers right when it makes no mistakes", async () => {
    const episodes = await rollout(environment, train, goldTeacher(train, { noise: 0 }), { temperature: 1, seed: 1 });
    for (const [i, episode] of episodes.entries()) {
      const question = train[i]!;
      expect(episode.reward).toBe(1);
      const queries = episode.steps.flatMap((s) =>
        s.transition.kind === "tool" ? [s.transition.action!.argument] : [],
      );
      expect(queries).toEqual(question.supportingTitles);
      expect(episode.steps.at(-1)!.transition.actionText).toBe(`Finish[${question.answer}]`);
    }
  });

  it("makes seeded mistakes at its noise rate: distractor searches, early finishes, wrong answers", async () => {
    const teacher = goldTeacher(train, { noise: 0.4 });
    const episodes = await rollout(environment, train, teacher, { temperature: 1, seed: 2, replicas: 3 });
    const again = await rollout(environment, train, teacher, { temperature: 1, seed: 2, replicas: 3 });
    expect(again.map((e) => e.steps.map((s) => s.transition.actionText))).toEqual(
      episodes.map((e) => e.steps.map((s) => s.transition.actionText)),
    );
    const rewards = episodes.map((e) => e.reward);
    expect(rewards.filter((r) => r === 1).length).toBeGreaterThan(0);
    expect(rewards.filter((r) => r === 0).length).toBeGreaterThan(0);
    const searches = episodes.flatMap((e) => e.steps.filter((s) => s.transition.kind === "tool"));
    const distractors = searches.filter((s) => s.transition.info["supporting"] === false);
    expect(distractors.length).toBeGreaterThan(0);
    expect(distractors.length).toBeLessThan(searches.length);
  });

  it("speaks the student's language when given its queries: each gold paragraph by a query of the student's that retrieves it", async () => {
    const titled = hotpotQa({ indexTitles: true });
    const queries = (view: AgentView) =>
      extractiveCandidates(view).candidates.flatMap((c) => (c.kind === "search" ? [c.query] : []));
    const teacher = goldTeacher(train, { noise: 0, queries, retrieval: { indexTitles: true } });
    const episodes = await rollout(titled, train, teacher, { temperature: 1, seed: 1 });
    let phrased = 0;
    for (const [i, episode] of episodes.entries()) {
      const question = train[i]!;
      // Still the oracle: both gold paragraphs, then the gold answer, never a search twice.
      expect(episode.reward).toBe(1);
      const searches = episode.steps.filter((s) => s.transition.kind === "tool");
      expect(searches.map((s) => s.transition.info["title"]).sort()).toEqual([...question.supportingTitles].sort());
      for (const step of searches) {
        const query = step.transition.action!.argument;
        // A query the student could write at that view, or the title where none of them retrieves it.
        if (queries(step.view).includes(query)) phrased++;
        else expect(question.supportingTitles).toContain(query);
      }
    }
    // Most searches are the student's own queries (the extractive candidates reach a gold paragraph
    // far more often than they name its title).
    const titles = episodes.flatMap((e) => e.steps.filter((s) => s.transition.kind === "tool")).length;
    expect(phrased / titles).toBeGreaterThan(0.7);
    // Retrieval needs the paragraphs' text: a question with titles only is refused, by path.
    const bare = [{ ...train[0]!, paragraphs: train[0]!.paragraphs.map((p) => ({ title: p.title })) }];
    await expect(
      rollout(titled, train.slice(0, 1), goldTeacher(bare, { noise: 0, queries }), { temperature: 1, seed: 1 }),
    ).rejects.toThrow(/questions\[0\]\.paragraphs\[0\]: the teacher's `queries` option retrieves/u);
  });

  it("knows only the questions it was given", async () => {
    const teacher = goldTeacher(train.slice(0, 1));
    await expect(rollout(environment, train.slice(1, 2), teacher, { temperature: 1, seed: 0 })).rejects.toThrow(
      RlxarInputError,
    );
    expect(() => goldTeacher(train, { noise: 2 })).toThrow(RlxarInputError);
  });
});

describe("teacherAnnotation and warmupData", () => {
  it("writes K criteria per step whose projected scores decompose the outcome, and keeps what ARCO keeps", async () => {
    const episodes = await rollout(environment, train, goldTeacher(train, { noise: 0.3 }), {
      temperature: 1,
      seed: 3,
      replicas: 3,
    });
    for (const k of [1, 3, 5]) {
      const annotations = episodes.map((episode) => teacherAnnotation(episode, k));
      annotations.forEach((annotation, e) => {
        expect(annotation.steps).toHaveLength(episodes[e]!.steps.length);
        for (const step of annotation.steps) {
          expect(step.criteria).toHaveLength(k);
          expect(step.scores.every((x) => x >= -1 && x <= 1)).toBe(true);
        }
        expect(
          decompositionGap(
            annotation.steps.map((s) => s.scores),
            episodes[e]!.reward,
          ),
        ).toBeLessThan(1e-9);
      });
    }
    // a search that found a gold paragraph is scored above one that did not, before the projection
    const annotations = episodes.map((episode) => teacherAnnotation(episode, 3));
    const raw = (supporting: boolean) =>
      episodes.flatMap((episode, e) =>
        episode.steps.flatMap((step, t) =>
          step.transition.kind === "tool" && step.transition.info["supporting"] === supporting
            ? [annotations[e]!.steps[t]!.raw[0]!]
            : [],
        ),
      );
    expect(Math.min(...raw(true))).toBeGreaterThan(Math.max(...raw(false)));
    expect(() => teacherAnnotation(episodes[0]!, 6)).toThrow(RlxarInputError);

    const warm = warmupData(episodes, annotations);
    const kept = episodes.filter((e) => e.reward >= 1 && e.steps.length > 1);
    expect(warm.policy).toHaveLength(kept.reduce((n, e) => n + e.steps.length, 0));
    expect(warm.counts.policyTrajectories).toBe(kept.length);
    const multi = episodes.filter((e) => e.steps.length > 1);
    expect(warm.counts.muTrajectories + warm.counts.notDecomposed).toBe(multi.length);
    expect(warm.counts.singleStep).toBe(episodes.length - multi.length);
    expect(warm.mu).toHaveLength(multi.reduce((n, e) => n + e.steps.length, 0));
    expect(new Set(warm.mu.map((x) => x.id)).size).toBe(warm.mu.length);
  });
});
