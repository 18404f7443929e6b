import { describe, expect, it } from "vitest";
import { gymCandidates, readChain } from "./candidates.js";
import { arcoGym } from "./environment.js";
import { generateGymTasks } from "./world.js";

const env = arcoGym();
const [task] = generateGymTasks({ hops: 3, count: 1, seed: 41 });
const t = task!;

describe("readChain", () => {
  it("follows the chain through the searches that find its next hop, and holds still on any other", () => {
    const episode = env.reset(t);
    expect(readChain(episode.view())).toMatchObject({
      hops: 3,
      found: 0,
      expected: t.chain[0]!.subject,
      lastOnChain: false,
    });
    episode.step(`Search[${t.lures[0]!.name}]`);
    expect(readChain(episode.view())).toMatchObject({ found: 0, expected: t.chain[0]!.subject, lastOnChain: false });
    t.chain.forEach((hop, h) => {
      episode.step(`Search[${hop.subject}]`);
      const reading = readChain(episode.view());
      expect(reading).toMatchObject({ found: h + 1, expected: hop.object, lastOnChain: true });
      expect(reading.last).toEqual({ subject: hop.subject, relation: hop.relation, object: hop.object });
    });
    expect(readChain(episode.view()).expected).toBe(t.answer);
  });
});

describe("gymCandidates", () => {
  it("offers the question entity's searches, whole and by each word, and a Finish with it, before any search", () => {
    const { candidates } = gymCandidates(env.reset(t).view());
    const [first, second] = t.chain[0]!.subject.split(" ");
    expect(candidates.map((c) => c.text)).toEqual([
      `Search[${t.chain[0]!.subject}]`,
      `Search[${first}]`,
      `Search[${second}]`,
      `Finish[${t.chain[0]!.subject}]`,
    ]);
    expect(candidates.every((c) => c.roles.expected && c.roles.question)).toBe(true);
  });

  it("merges a look-alike pair's shared word into one search with both names' roles, and marks repeats", () => {
    const episode = env.reset(t);
    const lure = t.lures[0]!;
    episode.step(`Search[${lure.sharedWord}]`);
    episode.step(`Search[${lure.name}]`);
    const { candidates } = gymCandidates(episode.view());
    const shared = candidates.filter((c) => c.text === `Search[${lure.sharedWord}]`);
    expect(shared).toHaveLength(1);
    expect(shared[0]).toMatchObject({ form: "first-word", repeat: true, roles: { expected: true, retrieved: true } });
    const texts = candidates.map((c) => c.text);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts).toContain(`Finish[${lure.name}]`);
  });

  it("offers only Finishes when the budget is spent", () => {
    const episode = env.reset(t);
    for (let i = 0; i <= t.hops; i++) episode.step(`Search[${t.chain[Math.min(i, t.hops - 1)]!.subject}]`);
    const { reading, candidates } = gymCandidates(episode.view());
    expect(reading.mustFinish).toBe(true);
    expect(candidates.every((c) => c.kind === "finish")).toBe(true);
    expect(candidates.filter((c) => c.roles.expected).map((c) => c.text)).toEqual([`Finish[${t.answer}]`]);
  });
});
