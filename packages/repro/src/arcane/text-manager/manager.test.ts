import { gymSftCorpus, gymTask, loadGdpval, simulatedWorker, type SftExample } from "@rubric/autointeract";
import { approximateTokens } from "@rubric/core";
import { QUESTION_REPERTOIRE, SidecarBackend, gymPrompt, trueUtility, type GymPrompt } from "@rubric/gspo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GDPVAL } from "../__fixtures__/gym.js";
import { SidecarManager } from "./manager.js";
import { UNPARSEABLE_UTILITY, sidecarManagerReward } from "./reward.js";
import { emptyCounts } from "./table.js";
import { bpeManagerTokenizer, sidecarManagerTokenizer, trainManagerTokenizer } from "./tokenizer.js";
import { TURN_BREAK, readRubricTurn, rubricPrompt } from "./turns.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
/** The sidecar's temperature for a greedy draw (it takes T > 0 only). */
const GREEDY = 1e-6;

describe("SidecarManager: an LLM manager in the torch sidecar", () => {
  let prompts: GymPrompt[];
  let teacher: SftExample[];
  let manager: SidecarManager;

  beforeAll(async () => {
    const gdpval = await loadGdpval(GDPVAL);
    prompts = await Promise.all(
      gdpval.train.slice(0, 6).map((e) => gymPrompt(gymTask(e.task), 3, QUESTION_REPERTOIRE)),
    );
    teacher = await gymSftCorpus(
      prompts.map((p) => p.task),
      { seed: 3, questionBudget: 5, reference: "elicited" },
    );
    const tokenizer = bpeManagerTokenizer(trainManagerTokenizer(prompts, teacher, 1500));
    const backend = await SidecarBackend.start({
      threads: 1,
      policy: {
        model: {
          kind: "tiny",
          vocab_size: tokenizer.vocabularySize,
          d_model: 32,
          n_heads: 4,
          n_layers: 1,
          max_seq_len: 384,
        },
        seed: 2,
        eos_token_id: tokenizer.eos,
      },
    });
    manager = new SidecarManager(backend, tokenizer, { maxQuestionTokens: 32, maxRubricTokens: 64 });
  }, TIMEOUT_MS);
  afterAll(async () => {
    await manager?.close();
  }, TIMEOUT_MS);

  it("reads a teacher dialogue back as its questions, the stakeholder's answers and its rubric turn", async () => {
    const [tokens] = await manager.teacherTokens([teacher[0]!]);
    expect(tokens!.filter((t) => t === TURN_BREAK)).toHaveLength(1);
    const episode = await manager.episode(prompts[0]!, tokens!);
    const assistant = teacher[0]!.messages.filter((m) => m.role === "assistant");
    expect(episode.questions).toEqual(assistant.slice(0, -1).map((m) => JSON.parse(m.content).question));
    expect(episode.questionsParsed).toBe(true);
    expect(episode.rubricText).toBe(assistant.at(-1)!.content);
    // The rubric turn's prompt holds the stakeholder's answers as the teacher heard them.
    const answers = teacher[0]!.messages.filter((m) => m.role === "user").slice(1);
    const { ids } = await manager.dialogue(prompts[0]!, manager.split(tokens!).questions);
    expect(ids[0]).toBe(manager.tokenizer.bos);
    expect(await manager.text(ids)).toBe(
      rubricPrompt(
        prompts[0]!.task,
        JSON.stringify({ questions: episode.questions }),
        episode.questions.map((question, i) => ({ question, answer: answers[i]!.content })),
      ),
    );
  });

  it("takes a transformers model's tokenizer through the sidecar, and refuses to where the model has none", async () => {
    // The small transformer reads the ids its client's BPE made: the sidecar has no tokenizer to lend.
    expect(manager.backend.summary.tokenizer).toBeNull();
    expect(() => sidecarManagerTokenizer(manager.backend)).toThrow(/no tokenizer of its own/);
    await expect(manager.backend.tokenize(["a rubric"])).rejects.toMatchObject({
      fault: "unavailable",
      message: expect.stringContaining("policy.tokenize needs a model with a tokenizer"),
    });
  });

  it(
    "scores what it samples: each dialogue's log-probs are recomputed through both turns' prompts, and a seed repeats it",
    async () => {
      const sampled = await manager.sample(prompts[1]!, 3, { seed: 5 });
      expect(await manager.sample(prompts[1]!, 3, { seed: 5 })).toEqual(sampled);
      for (const s of sampled) {
        expect(s.tokens.filter((t) => t === TURN_BREAK)).toHaveLength(1);
        expect(s.logprobs).toHaveLength(s.tokens.length);
      }
      const again = await manager.logprobs(
        prompts[1]!,
        sampled.map((s) => s.tokens),
      );
      sampled.forEach((s, k) => s.logprobs.forEach((lp, t) => expect(again[k]![t]!).toBeCloseTo(lp, 4)));
    },
    TIMEOUT_MS,
  );

  it(
    "learns a teacher's dialogue by SFT until its rubric turn parses; a turn that does not parse gets the floor, counted",
    async () => {
      const worker = simulatedWorker();
      const config = { clarifyCostPerToken: 0.0007, computeCostPerToken: 0.0003 };
      const counts = emptyCounts();
      const reward = sidecarManagerReward(manager, worker, config, counts);
      const greedy = async () => (await manager.sample(prompts[0]!, 1, { seed: 1, temperature: GREEDY }))[0]!.tokens;
      const untrained = await greedy();
      const before = await manager.episode(prompts[0]!, untrained);
      expect(readRubricTurn(before.rubricText, "r").ok).toBe(false);
      const asked = before.questions.reduce((n, q) => n + approximateTokens(q), 0);
      expect(await reward(prompts[0]!, untrained, { seed: 4 })).toBeCloseTo(UNPARSEABLE_UTILITY - 0.0007 * asked, 12);
      expect(counts).toMatchObject({ episodes: 1, unparseable: 1 });

      const tokens = await manager.teacherTokens(teacher.slice(0, 2));
      const examples = [0, 1].map((i) => ({ prompt: prompts[i]!, tokens: tokens[i]! }));
      const losses: number[] = [];
      for (let step = 0; step < 120; step++) losses.push(await manager.sftStep(examples, { learningRate: 1e-2 }));
      expect(losses.at(-1)!).toBeLessThan(losses[0]! / 10);
      const trained = await greedy();
      const after = await manager.episode(prompts[0]!, trained);
      expect(after.rubricText).toBe(teacher[0]!.messages.at(-1)!.content);
      const read = readRubricTurn(after.rubricText, "r");
      expect(read.ok).toBe(true);
      if (!read.ok) return;
      // The reward is U* of the worker's output under the parsed rubric, less the costs in tokens.
      const [output] = await worker.produce(prompts[0]!.task, read.rubric, 1, { seed: 4 });
      const cost =
        0.0007 * after.questions.reduce((n, q) => n + approximateTokens(q), 0) +
        0.0003 * read.rubric.criteria.reduce((n, c) => n + approximateTokens(c.text), 0);
      expect(await reward(prompts[0]!, trained, { seed: 4 })).toBeCloseTo(
        (await trueUtility(prompts[0]!, output!.text)) - cost,
        12,
      );
      expect(counts).toMatchObject({ episodes: 2, unparseable: 1 });
    },
    TIMEOUT_MS,
  );

  it(
    "a GSPO step moves both turns of a dialogue with a positive advantage up, one with a negative down",
    async () => {
      const [up, down] = await manager.sample(prompts[2]!, 2, { seed: 8 });
      const old = await manager.logprobs(prompts[2]!, [up!.tokens, down!.tokens]);
      await manager.resetOptimizer();
      await manager.step(
        [
          {
            prompt: prompts[2]!,
            sequences: [
              { tokens: up!.tokens, logpOld: old[0]!, advantage: 1 },
              { tokens: down!.tokens, logpOld: old[1]!, advantage: -1 },
            ],
          },
        ],
        { objective: "gspo", epsLow: 0.2, epsHigh: 0.28, learningRate: 1e-3, klCoef: 0 },
      );
      const now = await manager.logprobs(prompts[2]!, [up!.tokens, down!.tokens]);
      const turnSums = (lps: number[], tokens: readonly number[]) => {
        const at = tokens.indexOf(TURN_BREAK);
        const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
        return [sum(lps.slice(0, at)), sum(lps.slice(at + 1))];
      };
      const [upBefore, upAfter] = [turnSums(old[0]!, up!.tokens), turnSums(now[0]!, up!.tokens)];
      const [downBefore, downAfter] = [turnSums(old[1]!, down!.tokens), turnSums(now[1]!, down!.tokens)];
      for (const turn of [0, 1]) {
        expect(upAfter[turn]!).toBeGreaterThan(upBefore[turn]!);
        expect(downAfter[turn]!).toBeLessThan(downBefore[turn]!);
      }
    },
    TIMEOUT_MS,
  );
});
