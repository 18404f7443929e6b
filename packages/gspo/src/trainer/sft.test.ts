import { fileURLToPath } from "node:url";
import { gymTask, loadGdpval } from "@rubric/autointeract";
import { beforeAll, describe, expect, it } from "vitest";
import { gymPrompt, teacherExamples, teacherSequence, type GymPrompt } from "../gym-environment/environment.js";
import { RubricPolicy } from "../policy/rubric-policy.js";
import { QUESTION_REPERTOIRE } from "../policy/vocabulary.js";
import { TrainingInputError } from "../errors.js";
import { InProcessBackend } from "./in-process.js";
import { sftLoss, trainSftStage, type SftItem } from "./sft.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
let prompts: GymPrompt[];
let examples: SftItem<GymPrompt>[];

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  prompts = await Promise.all(gdpval.train.slice(0, 14).map((e) => gymPrompt(gymTask(e.task), 6, QUESTION_REPERTOIRE)));
  examples = await teacherExamples(new RubricPolicy({ dim: 32 }), prompts);
});

describe("teacherExamples", () => {
  it("pairs each prompt with its teacher's sequence, leaving out prompts without one", async () => {
    const policy = new RubricPolicy({ dim: 32 });
    const expected: SftItem<GymPrompt>[] = [];
    for (const prompt of prompts) {
      const tokens = await teacherSequence(policy, prompt);
      if (tokens) expected.push({ prompt, tokens });
    }
    expect(examples).toEqual(expected);
    expect(examples.length).toBeGreaterThan(10);
  });
});

describe("trainSftStage", () => {
  it("logs per epoch the loss sftLoss measures (mean NLL per token), not a mean over batches", async () => {
    // Batches of unequal token counts: a mean of batch means would differ from the per-token mean.
    const lengths = new Set(examples.map((e) => e.tokens.length));
    expect(lengths.size).toBeGreaterThan(1);
    const policy = new RubricPolicy({ dim: 32, seed: 2 });
    const expected = sftLoss(policy, examples);
    // Learning rate 0: the parameters stay put, so every batch is measured on the same policy.
    const [entry] = await trainSftStage({
      backend: new InProcessBackend(policy),
      examples,
      epochs: 1,
      seed: 1,
      batchSize: 3,
      learningRate: 0,
    });
    expect(entry!.loss).toBeCloseTo(expected, 12);
  });

  it("lowers the loss it logs, and the loss measured afterwards is below the first epoch's", async () => {
    const policy = new RubricPolicy({ dim: 32, seed: 2 });
    const log = await trainSftStage({ backend: new InProcessBackend(policy), examples, epochs: 4, seed: 1 });
    expect(log.map((e) => e.epoch)).toEqual([0, 1, 2, 3]);
    expect(log.at(-1)!.loss).toBeLessThan(log[0]!.loss);
    expect(sftLoss(policy, examples)).toBeLessThan(log[0]!.loss);
  });

  it("refuses an empty set of examples instead of logging NaN", async () => {
    const error = await trainSftStage({
      backend: new InProcessBackend(new RubricPolicy({ dim: 8 })),
      examples: [],
      epochs: 1,
      seed: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrainingInputError);
    expect(error).toMatchObject({
      code: "training.input",
      message: "trainSftStage: options.examples must hold at least one example, got []",
    });
  });
});
