import { fileURLToPath } from "node:url";
import { createRng } from "@rubric/core";
import { gymSftCorpus, gymTask, loadGdpval, simulatedStakeholder } from "@rubric/autointeract";
import { beforeAll, describe, expect, it } from "vitest";
import { gymPrompt, sftSequence, teacherExamples, type GymPrompt } from "../gym-environment/environment.js";
import { featurize, mentions } from "./features.js";
import { PolicySequenceError } from "../errors.js";
import { RubricPolicy } from "./rubric-policy.js";
import { QUESTION_REPERTOIRE } from "./vocabulary.js";
import { InProcessBackend } from "../trainer/in-process.js";
import { sftLoss, trainSftStage, type SftItem } from "../trainer/sft.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;
let train: SftItem<GymPrompt>[];
let heldOut: SftItem<GymPrompt>[];
let prompt: GymPrompt;

async function items(tasks: Parameters<typeof gymTask>[0][], seed: number): Promise<SftItem<GymPrompt>[]> {
  const prompts = await Promise.all(tasks.map((task) => gymPrompt(gymTask(task), seed, QUESTION_REPERTOIRE)));
  return teacherExamples(new RubricPolicy({ dim: 8 }), prompts);
}

beforeAll(async () => {
  const gdpval = await loadGdpval(GDPVAL);
  train = await items(
    gdpval.train.slice(0, 80).map((e) => e.task),
    11,
  );
  heldOut = await items(
    gdpval.eval.slice(0, 20).map((e) => e.task),
    11,
  );
  prompt = train[0]!.prompt;
});

/** Central finite difference of f at params[i]. */
function numeric(f: () => number, params: Float64Array, i: number, h = 1e-6): number {
  const saved = params[i]!;
  params[i] = saved + h;
  const up = f();
  params[i] = saved - h;
  const down = f();
  params[i] = saved;
  return (up - down) / (2 * h);
}

describe("RubricPolicy", () => {
  it("has exact per-token gradients in every head — questions, phrases, copy, weights, slot (finite differences)", () => {
    const policy = new RubricPolicy({ dim: 32, seed: 1 });
    for (let i = 0; i < policy.U.length; i++) policy.U[i] = 0.3 * Math.sin(i);
    for (let i = 0; i < policy.Q.length; i++) policy.Q[i] = 0.5 * Math.cos(i);
    for (let i = 0; i < policy.S.length; i++) policy.S[i] = 0.4 * Math.sin(3 * i);
    for (let i = 0; i < policy.C.length; i++) policy.C[i] = 0.2 * Math.cos(i);
    // A sequence that asks three questions (the brief's among them), writes three bank criteria
    // and two brief terms (one from the task's words, one heard), and stops.
    const terms = policy.terms(prompt, [5, 4, 2]);
    const tokens = policy.encode(prompt, [5, 4, 2], {
      id: "r",
      criteria: [
        ...[0, 7, 20].map((k, j) => ({ text: policy.vocab[k]!.text, weight: j + 2 })),
        { text: `Addresses "${terms[0]!.text}" from the brief`, weight: 4 },
        { text: `Addresses "${terms[3]!.text}" from the brief`, weight: 1 },
      ],
    });
    expect(policy.decode(tokens).questions).toEqual([5, 4, 2]);
    expect(policy.decode(tokens).criteria.map((c) => c.term)).toEqual([undefined, undefined, undefined, 0, 3]);
    const coefs = tokens.map((_, t) => 1.3 - 0.4 * t);
    const objective = () => policy.tokenLogProbs(prompt, tokens).reduce((s, lp, t) => s + coefs[t]! * lp, 0);
    const grads = policy.parameters.map((p) => new Float64Array(p.length));
    policy.accumulateGradient(prompt, tokens, coefs, grads);
    const rng = createRng(9);
    policy.parameters.forEach((params, b) => {
      const grad = grads[b]!;
      let nonZero = 0;
      for (let probe = 0; probe < 30; probe++) {
        // Probe where the gradient lives (features present) as well as at random.
        const i = probe % 2 === 0 ? grad.findIndex((g, k) => g !== 0 && k % 13 === probe % 13) : rng.int(params.length);
        if (i < 0) continue;
        if (grad[i] !== 0) nonZero++;
        expect(grad[i]!).toBeCloseTo(numeric(objective, params, i), 6);
      }
      expect(nonZero).toBeGreaterThan(3);
    });
  });

  it("samples valid, reproducible sequences that respect the grammar and the exclusive groups", () => {
    const policy = new RubricPolicy({ seed: 2 });
    let templated = 0;
    for (let s = 0; s < 20; s++) {
      const tokens = policy.sample(prompt, createRng(s));
      expect(policy.sample(prompt, createRng(s))).toEqual(tokens);
      expect(tokens.at(-1)).toBe(policy.stop);
      const { questions, criteria } = policy.decode(tokens);
      expect(new Set(questions).size).toBe(questions.length);
      const groups = criteria.map((c) => policy.vocab[c.criterion]?.group).filter(Boolean);
      expect(new Set(groups).size).toBe(groups.length);
      // A template writes each term at most once, and only the terms it may copy.
      const written = criteria.filter((c) => policy.isTemplate(c.criterion)).map((c) => c.term!);
      expect(new Set(written).size).toBe(written.length);
      expect(written.every((i) => i >= 0 && i < policy.terms(prompt, questions).length)).toBe(true);
      templated += written.length;
      expect(criteria.every((c) => c.weight >= 1 && c.weight <= 5)).toBe(true);
      // Re-encoding the decoded rubric gives the same tokens.
      expect(policy.encode(prompt, questions, policy.toRubric(prompt, tokens, "r"))).toEqual(tokens);
      expect(policy.tokenLogProbs(prompt, tokens).every((lp) => lp <= 0 && Number.isFinite(lp))).toBe(true);
    }
    expect(templated).toBeGreaterThan(0);
  });

  it("rejects sequences its grammar cannot produce, naming the token", () => {
    const policy = new RubricPolicy({ seed: 2 });
    expect(() => policy.tokenLogProbs(prompt, [0, 0, policy.done, policy.stop])).toThrow(PolicySequenceError);
    expect(() => policy.tokenLogProbs(prompt, [policy.done, policy.criterionToken(0)])).toThrow(/ended at token 2/);
    // "stop" before any criterion is not allowed: a rubric has at least one.
    expect(() => policy.tokenLogProbs(prompt, [policy.done, policy.stop])).toThrow(/token 1/);
  });

  it("reads @rubric/autointeract's chat-format SFT examples as token sequences, and names what it cannot read", async () => {
    const policy = new RubricPolicy({ dim: 8 });
    const [example] = await gymSftCorpus([prompt.task], { seed: 11, reference: "elicited" });
    const tokens = sftSequence(policy, prompt, example!)!;
    expect(tokens).toEqual(train[0]!.tokens);
    expect(policy.decode(tokens).questions).toEqual([0, 1, 2, 3, 4]);
    const rubricTurn = JSON.parse(example!.messages.at(-1)!.content) as {
      criteria: { text: string; weight: number }[];
    };
    // Every criterion of the teacher's rubric: the bank's, and its brief terms written by the template.
    expect(policy.toRubric(prompt, tokens, "r").criteria.map((c) => c.text)).toEqual(
      rubricTurn.criteria.map((c) => c.text),
    );
    const foreign = {
      ...example!,
      messages: example!.messages.map((m, i) =>
        i === 2 ? { ...m, content: JSON.stringify({ question: "What is your budget?" }) } : m,
      ),
    };
    expect(() => sftSequence(policy, prompt, foreign)).toThrow(/question 1 is not in the policy's repertoire/);
    const broken = {
      ...example!,
      messages: [
        ...example!.messages.slice(0, -1),
        { role: "assistant" as const, content: JSON.stringify({ rubric: [] }) },
      ],
    };
    expect(() => sftSequence(policy, prompt, broken)).toThrow(PolicySequenceError);
  });

  it("SFT lowers the loss on training and held-out sequences, and learns to write what it heard", async () => {
    const policy = new RubricPolicy({ seed: 3 });
    const before = { train: sftLoss(policy, train), held: sftLoss(policy, heldOut) };
    await trainSftStage({ backend: new InProcessBackend(policy), examples: train, epochs: 12, seed: 4 });
    expect(sftLoss(policy, train)).toBeLessThan(before.train * 0.6);
    expect(sftLoss(policy, heldOut)).toBeLessThan(before.held);
    // Low-temperature samples on held-out tasks overlap the teacher's rubric more than an untrained policy's do.
    const overlap = (p: RubricPolicy) =>
      heldOut.reduce((sum, item, k) => {
        const rubric = p.toRubric(item.prompt, p.sample(item.prompt, createRng(k), 0.3), "r");
        const reference = new Set(p.toRubric(item.prompt, item.tokens, "ref").criteria.map((c) => c.id));
        return sum + rubric.criteria.filter((c) => reference.has(c.id)).length / Math.max(1, rubric.criteria.length);
      }, 0) / heldOut.length;
    expect(overlap(policy)).toBeGreaterThan(overlap(new RubricPolicy({ seed: 3 })) + 0.1);
  });

  it("learns from oracle rubrics to copy the brief terms the stakeholder named, not the task's most frequent words", async () => {
    const oracle = async (from: SftItem<GymPrompt>[]) =>
      teacherExamples(
        new RubricPolicy({ dim: 8 }),
        from.map((item) => item.prompt),
        { reference: "utility" },
      );
    const policy = new RubricPolicy({ seed: 5 });
    await trainSftStage({ backend: new InProcessBackend(policy), examples: await oracle(train), epochs: 12, seed: 6 });
    // Share of written terms that are the stakeholder's own, on held-out tasks.
    const hits = (p: RubricPolicy) => {
      let written = 0;
      let own = 0;
      heldOut.forEach((item, k) => {
        const wanted = new Set(
          simulatedStakeholder(item.prompt.task, item.prompt.stakeholderSeed)
            .utility.criteria.filter((c) => c.text.startsWith("Addresses"))
            .map((c) => c.text),
        );
        for (let draw = 0; draw < 4; draw++)
          for (const c of p.toRubric(item.prompt, p.sample(item.prompt, createRng(100 * k + draw), 0.5), "r").criteria)
            if (c.text.startsWith("Addresses")) {
              written++;
              if (wanted.has(c.text)) own++;
            }
      });
      return { written, share: own / Math.max(1, written) };
    };
    const trained = hits(policy);
    const untrained = hits(new RubricPolicy({ seed: 5 }));
    expect(trained.written).toBeGreaterThan(heldOut.length);
    // Two of the task's eight candidate words are the stakeholder's: chance is about 1/4.
    expect(untrained.share).toBeLessThan(0.4);
    // Not all: a vague stakeholder names no term, an average one forgets some, and then the term is a guess.
    expect(trained.share).toBeGreaterThan(Math.max(0.45, untrained.share + 0.2));
  });
});

describe("mentions", () => {
  it("reads each criterion's share of words from the reply sentence that says the most of them, and keeps that sentence", () => {
    const criteria = ["Cites at least two sources", "Cites at least one source", "Has no tables"];
    const replies = ["Essential: it cites at least two sources. Nice to have: a summary.", "Nothing else."];
    const [two, one, tables] = mentions(criteria, replies, 64);
    expect(two!.share).toBe(1);
    // "one" and "source" are not in the sentence; "cites" and "least" are.
    expect(one!.share).toBe(0.5);
    expect(tables!.share).toBe(0);
    expect(tables!.context.indices).toHaveLength(0);
    // The context is the mentioning sentence alone, not the other one.
    expect(two!.context).toEqual(featureOf("Essential: it cites at least two sources."));
  });
});

function featureOf(sentence: string) {
  return featurize({ id: "", prompt: "" }, [sentence], 64);
}
