import { fileURLToPath } from "node:url";
import { loadHotpotQa } from "@rubric/rlxar";
import { describe, expect, it } from "vitest";
import { arcoConfig, splitTrainingQuestions, TUNE_QUESTIONS } from "./config.js";
import { arcoQuestions } from "./experiment.js";
import { arcoMarkdown } from "./table.js";

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

describe("arcoQuestions", () => {
  const paths = { trainPath: `${HOTPOT}/train.jsonl`, evalPath: `${HOTPOT}/dev.jsonl` };

  it("evaluates on the dev file by default, and on the 69 held-out training questions with evalSplit tune", () => {
    const dev = arcoQuestions(arcoConfig(paths));
    expect(dev.evalPath).toBe(paths.evalPath);
    expect(dev.evaluation).toHaveLength(400);
    const tune = arcoQuestions(arcoConfig({ ...paths, evalSplit: "tune" }));
    expect(tune.evalPath).toBe(paths.trainPath);
    const held = splitTrainingQuestions(loadHotpotQa(paths.trainPath)).tune.map((q) => q.id);
    expect(tune.evaluation.map((q) => q.id)).toEqual(held);
    // Never a question it trains on, whatever the sample sizes.
    const small = arcoQuestions(arcoConfig({ ...paths, evalSplit: "tune", trainQuestions: 48, evalQuestions: 20 }));
    expect(small.evaluation).toHaveLength(20);
    const trained = new Set(tune.train.map((q) => q.id));
    expect(small.evaluation.filter((q) => trained.has(q.id))).toEqual([]);
    expect(small.evaluation.every((q) => held.includes(q.id))).toBe(true);
  });

  it("says in table.md that a tune-split table is for choosing settings, not a dev result", () => {
    const table = (evalSplit?: "tune") =>
      arcoMarkdown({
        config: {
          ...arcoConfig(paths),
          ...(evalSplit === undefined ? {} : { evalSplit }),
          trainQuestions: 400,
          evalQuestions: 69,
        },
        warmup: [],
        methods: {},
        ablations: {},
        diagnostics: {},
        timing: { totalMs: 1000, rolloutsPerSecond: 1, shares: {} },
      } as unknown as Parameters<typeof arcoMarkdown>[0]);
    expect(table("tune")).toContain("69 held-out training (tune) questions");
    expect(table("tune")).toContain("not a result to report");
    expect(table("tune")).not.toContain("Nothing was selected on dev");
    expect(table()).toContain("69 dev questions");
    expect(table()).toContain("Nothing was selected on dev");
  });
});
