import { fileURLToPath } from "node:url";
import { approximateTokens, createRng } from "@rubric/core";
import { gymTask, loadGdpval, simulatedStakeholder, simulatedWorker } from "@rubric/autointeract";
import { beforeAll, describe, expect, it } from "vitest";
import { RubricPolicy } from "../policy/rubric-policy.js";
import { TrainingInputError } from "../errors.js";
import { QUESTION_REPERTOIRE } from "../policy/vocabulary.js";
import {
  gymPrompt,
  gymReward,
  interactionTokens,
  proxyScores,
  teacherSequence,
  trueUtility,
  type GymPrompt,
} from "./environment.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
let prompts: GymPrompt[];
let outputs: string[];

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  prompts = await Promise.all(gdpval.train.slice(0, 6).map((e) => gymPrompt(gymTask(e.task), 4, QUESTION_REPERTOIRE)));
  outputs = (await simulatedWorker().produce(prompts[0]!.task, undefined, 40, { seed: 9 })).map((o) => o.text);
});

describe("proxyScores with a noisy judge", () => {
  it("is the plain score at noise 0 and its complement at noise 1 (every verdict flipped)", async () => {
    const oracle = simulatedStakeholder(prompts[0]!.task, 4).utility;
    const clean = await proxyScores(oracle, prompts[0]!, outputs);
    expect(new Set(clean).size).toBeGreaterThan(3);
    expect(await proxyScores(oracle, prompts[0]!, outputs, { noise: 0, rng: createRng(1) })).toEqual(clean);
    const flipped = await proxyScores(oracle, prompts[0]!, outputs, { noise: 1, rng: createRng(1) });
    flipped.forEach((score, i) => expect(score).toBeCloseTo(1 - clean[i]!, 12));
  });

  it("flips about the stated share of verdicts, reproducibly for a seed", async () => {
    const oracle = simulatedStakeholder(prompts[0]!.task, 4).utility;
    const clean = await proxyScores(oracle, prompts[0]!, outputs);
    const noisy = await proxyScores(oracle, prompts[0]!, outputs, { noise: 0.25, rng: createRng(3) });
    expect(await proxyScores(oracle, prompts[0]!, outputs, { noise: 0.25, rng: createRng(3) })).toEqual(noisy);
    const changed = noisy.filter((s, i) => s !== clean[i]).length;
    // With 6–14 criteria each flipped at 0.25, nearly every output's score moves.
    expect(changed).toBeGreaterThan(30);
    const error = await proxyScores(oracle, prompts[0]!, outputs, { noise: 1.5, rng: createRng(3) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TrainingInputError);
    expect(error).toMatchObject({
      code: "training.input",
      message: "judge.noise must be a probability in [0, 1], got 1.5",
    });
  });
});

describe("gymReward", () => {
  it("is U* of the worker's output less the questions' and the rubric's costs, counted in tokens", async () => {
    const policy = new RubricPolicy({ seed: 5 });
    const worker = simulatedWorker();
    const reward = gymReward({ policy, worker, clarifyCostPerToken: 0.002, computeCostPerToken: 0.001 });
    const prompt = prompts[1]!;
    const tokens = (await teacherSequence(policy, prompt))!;
    const rubric = policy.toRubric(prompt, tokens, `${prompt.task.id}-rubric`);
    const cost = interactionTokens(policy, tokens, rubric);
    const asked = policy.decode(tokens).questions;
    expect(asked.length).toBeGreaterThan(0);
    expect(cost.questions).toBe(asked.reduce((n, q) => n + approximateTokens(QUESTION_REPERTOIRE[q]!), 0));
    expect(cost.rubric).toBe(rubric.criteria.reduce((n, c) => n + approximateTokens(c.text), 0));
    const [output] = await worker.produce(prompt.task, rubric, 1, { seed: 11 });
    const utility = await trueUtility(prompt, output!.text);
    expect(await reward(prompt, tokens, { seed: 11 })).toBeCloseTo(
      utility - 0.002 * cost.questions - 0.001 * cost.rubric,
      12,
    );
  });
});

describe("teacherSequence", () => {
  it("imitates the stakeholder's own utility with reference 'utility', after the same questions, brief terms written", async () => {
    const policy = new RubricPolicy({ seed: 1 });
    for (const prompt of prompts) {
      const elicited = (await teacherSequence(policy, prompt))!;
      const oracle = (await teacherSequence(policy, prompt, { reference: "utility" }))!;
      expect(policy.decode(oracle).questions).toEqual(policy.decode(elicited).questions);
      const utility = simulatedStakeholder(prompt.task, prompt.stakeholderSeed).utility.criteria;
      // Every criterion of U*, its two brief terms included (written by the template, copied from the task).
      const written = policy.toRubric(prompt, oracle, "o").criteria;
      expect(written.map((c) => [c.text, c.weight])).toEqual(utility.map((c) => [c.text, c.weight]));
      expect(written.map((c) => c.verifier)).toEqual(utility.map((c) => c.verifier));
      expect(policy.decode(oracle).criteria.filter((c) => c.term !== undefined)).toHaveLength(2);
    }
    // The bank-only policy leaves the brief terms out.
    const bankOnly = new RubricPolicy({ seed: 1, templates: [] });
    const oracle = (await teacherSequence(bankOnly, prompts[0]!, { reference: "utility" }))!;
    expect(bankOnly.toRubric(prompts[0]!, oracle, "o").criteria.map((c) => c.text)).toEqual(
      simulatedStakeholder(prompts[0]!.task, prompts[0]!.stakeholderSeed)
        .utility.criteria.filter((c) => !c.text.startsWith("Addresses"))
        .map((c) => c.text),
    );
  });
});
