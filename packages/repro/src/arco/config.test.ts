import { fileURLToPath } from "node:url";
import { loadHotpotQa } from "@rubric/rlxar";
import { describe, expect, it } from "vitest";
import { arcoConfig, splitTrainingQuestions, TUNE_QUESTIONS } from "./config.js";

const HOTPOT = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/hotpotqa`;

describe("splitTrainingQuestions", () => {
  it("holds 69 of the shared training file's 469 questions out to tune on: disjoint, seeded, in file order", () => {
    const all = loadHotpotQa(`${HOTPOT}/train.jsonl`);
    expect(all).toHaveLength(469);
    const { train, tune } = splitTrainingQuestions(all);
    expect(tune).toHaveLength(TUNE_QUESTIONS);
    expect(train).toHaveLength(400);
    const held = new Set(tune.map((q) => q.id));
    expect(train.some((q) => held.has(q.id))).toBe(false);
    expect(new Set([...train, ...tune].map((q) => q.id)).size).toBe(469);
    const position = new Map(all.map((q, i) => [q.id, i]));
    for (const part of [train, tune])
      expect(part.map((q) => position.get(q.id)!)).toEqual(part.map((q) => position.get(q.id)!).sort((a, b) => a - b));
    // A sample, not a slice: the file's yes/no questions cluster at its end.
    expect(tune.some((q) => position.get(q.id)! < 200) && tune.some((q) => position.get(q.id)! > 400)).toBe(true);
    expect(splitTrainingQuestions(all).tune.map((q) => q.id)).toEqual(tune.map((q) => q.id));
  });
});

describe("arcoConfig", () => {
  it("trains the full run on the whole training part, indexes titles, and keeps the quick run small", () => {
    expect(arcoConfig().trainQuestions).toBeUndefined();
    expect(arcoConfig().indexTitles).toBe(true);
    expect(arcoConfig({ quick: true }).trainQuestions).toBe(48);
    expect(arcoConfig({ indexTitles: false }).indexTitles).toBe(false);
  });
});
