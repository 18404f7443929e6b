import { describe, expect, it } from "vitest";
import { RlxarInputError } from "../errors.js";
import { namesIn, questionHops, GYM_RELATIONS, readStatedRelation } from "./relations.js";
import { generateGymTasks, GYM_LOOKALIKES, GYM_MAX_HOPS } from "./world.js";

const tasks = generateGymTasks({ hops: [2, 3, 4], count: 300, seed: 11 });

describe("generateGymTasks", () => {
  it("is deterministic, and task i does not depend on how many tasks are asked for", () => {
    const again = generateGymTasks({ hops: [2, 3, 4], count: 300, seed: 11 });
    expect(again).toEqual(tasks);
    expect(generateGymTasks({ hops: [2, 3, 4], count: 7, seed: 11 })).toEqual(tasks.slice(0, 7));
    const other = generateGymTasks({ hops: [2, 3, 4], count: 20, seed: 12 });
    expect(other.filter((task, i) => task.question === tasks[i]!.question)).toEqual([]);
  });

  it("draws training and evaluation tasks from disjoint streams of one seed", () => {
    const evaluation = generateGymTasks({ hops: [2, 3, 4], count: 300, seed: 11, split: "eval" });
    expect(evaluation.every((task) => task.split === "eval")).toBe(true);
    expect(tasks.every((task) => task.split === "train")).toBe(true);
    const trainIds = new Set(tasks.map((task) => task.id));
    const trainQuestions = new Set(tasks.map((task) => task.question));
    const trainAnswers = new Set(tasks.map((task) => task.answer));
    expect(evaluation.filter((task) => trainIds.has(task.id))).toEqual([]);
    expect(evaluation.filter((task) => trainQuestions.has(task.question))).toEqual([]);
    // Made-up names of ~7 million two-syllable words: a shared answer would mean a shared stream.
    expect(evaluation.filter((task) => trainAnswers.has(task.answer)).length).toBeLessThanOrEqual(1);
  });

  it("gives task i the hop count hops[i mod n], with a chain of distinct relations, each starting where the last ended", () => {
    tasks.forEach((task, i) => {
      expect(task.hops).toBe([2, 3, 4][i % 3]);
      expect(task.chain).toHaveLength(task.hops);
      expect(new Set(task.chain.map((hop) => hop.relation)).size).toBe(task.hops);
      task.chain.forEach((hop, h) => {
        const relation = GYM_RELATIONS.find((r) => r.key === hop.relation)!;
        expect([hop.subjectType, hop.objectType]).toEqual([relation.subject, relation.object]);
        if (h > 0) expect(hop.subject).toBe(task.chain[h - 1]!.object);
      });
      expect(task.answer).toBe(task.chain.at(-1)!.object);
      expect(task.supportingTitles).toEqual(task.chain.map((hop) => hop.subject));
    });
    expect(new Set(generateGymTasks({ hops: 3, count: 5, seed: 1 }).map((task) => task.hops))).toEqual(new Set([3]));
  });

  it("asks a question that names the chain's first entity and chains exactly H relations", () => {
    for (const task of tasks) {
      expect(namesIn(task.question)).toEqual([task.chain[0]!.subject]);
      expect(questionHops(task.question)).toBe(task.hops);
      expect(task.question.endsWith("?")).toBe(true);
    }
    expect(tasks[0]!.question).toMatchInlineSnapshot(
      `"In which country does the city where Nummarei Academy has its campus lie?"`,
    );
  });

  it("writes a pool of 10–20 paragraphs, each titled by its subject and stating one relation first", () => {
    const sizes = new Set<number>();
    for (const task of tasks) {
      sizes.add(task.paragraphs.length);
      expect(task.paragraphs.length).toBeGreaterThanOrEqual(10);
      expect(task.paragraphs.length).toBeLessThanOrEqual(20);
      expect(new Set(task.paragraphs.map((p) => p.title)).size).toBe(task.paragraphs.length);
      for (const paragraph of task.paragraphs) {
        expect(readStatedRelation(paragraph.text)?.subject).toBe(paragraph.title);
        expect(paragraph.text).toBe(paragraph.sentences.join(" "));
      }
      task.chain.forEach((hop) => {
        expect(readStatedRelation(task.paragraphs[hop.paragraph]!.text)).toEqual({
          subject: hop.subject,
          relation: hop.relation,
          object: hop.object,
        });
      });
    }
    expect(Math.min(...sizes)).toBe(10);
    expect(Math.max(...sizes)).toBe(20);
    const small = generateGymTasks({ hops: 4, count: 20, seed: 3, paragraphs: { min: 2, max: 3 } });
    // Never fewer than (1 + look-alikes)·H: 12 with the default two, 8 with one.
    expect(small.every((task) => task.paragraphs.length === 12)).toBe(true);
    const single = generateGymTasks({ hops: 4, count: 20, seed: 3, paragraphs: { min: 2, max: 3 }, lookalikes: 1 });
    expect(single.every((task) => task.paragraphs.length === 8)).toBe(true);
  });

  it("puts look-alikes of every searched chain entity in the pool: same first word, same next relation, another object", () => {
    for (const task of tasks) {
      expect(task.lures).toHaveLength(GYM_LOOKALIKES * task.hops);
      expect(task.lures.map((l) => l.hop)).toEqual(task.chain.flatMap((_, hop) => [hop, hop]));
      task.lures.forEach((lure) => {
        const hop = lure.hop;
        const gold = task.chain[hop]!;
        expect(lure.of).toBe(gold.subject);
        expect(lure.name).not.toBe(gold.subject);
        expect(lure.sharedWord).toBe(gold.subject.split(" ")[0]);
        expect(lure.name.split(" ")[0]).toBe(lure.sharedWord);
        const stated = readStatedRelation(task.paragraphs[lure.paragraph]!.text)!;
        expect(stated.subject).toBe(lure.name);
        expect(stated.relation).toBe(gold.relation);
        expect(stated.object).not.toBe(gold.object);
        // Nothing else in the pool is titled with the shared word, and the group's members all
        // hold it equally often, so BM25 favours none of them.
        const group = [gold.subject, ...task.lures.filter((l) => l.hop === hop).map((l) => l.name)];
        expect(new Set(group).size).toBe(1 + GYM_LOOKALIKES);
        const titled = task.paragraphs.filter((p) => p.title.split(" ")[0] === lure.sharedWord);
        expect(titled.map((p) => p.title).sort()).toEqual([...group].sort());
        const counts = titled.map((p) => p.text.split(lure.sharedWord).length);
        expect(new Set(counts).size).toBe(1);
      });
    }
  });

  it("refuses options it cannot honour", () => {
    expect(() => generateGymTasks({ hops: GYM_MAX_HOPS + 1, count: 1, seed: 1 })).toThrow(RlxarInputError);
    expect(() => generateGymTasks({ hops: [2, 0], count: 1, seed: 1 })).toThrow(/options\.hops\[1\]/u);
    expect(() => generateGymTasks({ hops: [], count: 1, seed: 1 })).toThrow(/options\.hops/u);
    expect(() => generateGymTasks({ hops: 2, count: -1, seed: 1 })).toThrow(/options\.count/u);
    expect(() => generateGymTasks({ hops: 2, count: 1, seed: 1, paragraphs: { min: 12, max: 11 } })).toThrow(
      /options\.paragraphs\.max/u,
    );
    expect(() => generateGymTasks({ hops: 2, count: 1, seed: 1, split: "test" as "eval" })).toThrow(/options\.split/u);
    expect(() => generateGymTasks({ hops: 2, count: 1, seed: 1, lookalikes: 0 })).toThrow(/options\.lookalikes/u);
  });
});

describe("the gym's relations", () => {
  it("give each relation cue words that its phrase and question use and no other relation's do", () => {
    for (const relation of GYM_RELATIONS) {
      for (const text of [
        relation.phrase.replace("{x}", "Kalen Muro"),
        relation.question.replace("{x}", "Kalen Muro"),
      ]) {
        expect(questionHops(text)).toBe(1);
        const words = new Set(text.split(/[^a-z]+/u));
        expect(relation.cues.some((cue) => words.has(cue))).toBe(true);
      }
    }
  });
});
