import { fileURLToPath } from "node:url";
import { gymSftCorpus, gymTask, loadGdpval, simulatedWorker, type SftExample } from "@rubric/autointeract";
import { approximateTokens } from "@rubric/core";
import { QUESTION_REPERTOIRE, SidecarBackend, gymPrompt, trueUtility, type GymPrompt } from "@rubric/gspo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  UNPARSEABLE_UTILITY,
  emptyCounts,
  runSidecarManager,
  sidecarManagerConfig,
  sidecarManagerMarkdown,
  sidecarManagerReward,
} from "./experiment.js";
import {
  SidecarManager,
  TURN_BREAK,
  bpeManagerTokenizer,
  readRubricTurn,
  rubricPrompt,
  sidecarManagerTokenizer,
  trainManagerTokenizer,
} from "./manager.js";

const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../../shared/", import.meta.url));
const GDPVAL = `${SHARED}/data/gdpval`;
const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement
/** The sidecar's temperature for a greedy draw (it takes T > 0 only). */
const GREEDY = 1e-6;

describe("readRubricTurn", () => {
  it("reads each criterion's rule from its text, leaves out (and counts) what only a judge could check, and says why a turn is not a rubric", () => {
    const turn = JSON.stringify({
      criteria: [
        { text: "Includes at least two tables", weight: 4 },
        { text: 'Addresses "pricing" from the brief', weight: 2 },
        { text: "Sounds confident", weight: 3 },
      ],
    });
    const read = readRubricTurn(turn, "r");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.judged).toBe(1);
    expect(read.rubric.criteria.map((c) => [c.text, c.weight, c.verifier])).toEqual([
      ["Includes at least two tables", 4, { kind: "markdown", tables: { min: 2 } }],
      ['Addresses "pricing" from the brief', 2, { kind: "includes", terms: ["pricing"] }],
    ]);
    expect(readRubricTurn('{"criteria": [{"text": "Has no tables", "weight": 3}', "r")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^not JSON/),
    });
    expect(readRubricTurn('{"criteria": [{"text": "Has no tables", "weight": 9}]}', "r")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("criteria[0].weight"),
    });
    expect(readRubricTurn('{"criteria": [{"text": "Sounds confident", "weight": 3}]}', "r")).toEqual({
      ok: false,
      reason: "none of its 1 criteria reads as a rule",
    });
  });
});

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

describe("sidecarManagerConfig", () => {
  it("gives a transformers model a pretrained model's learning rates unless told otherwise", () => {
    const tiny = sidecarManagerConfig({ quick: true });
    expect(tiny).toMatchObject({ transformersModel: null, device: "auto", sftLearningRate: 3e-3, learningRate: 3e-4 });
    expect(sidecarManagerConfig({ quick: true, transformersModel: "Qwen/Qwen2.5-0.5B" })).toMatchObject({
      sftLearningRate: 1e-5,
      learningRate: 1e-6,
    });
    expect(sidecarManagerConfig({ quick: true, transformersModel: "/models/m", sftLearningRate: 3e-3 })).toMatchObject({
      sftLearningRate: 3e-3,
      learningRate: 1e-6,
    });
  });
});

describe("runSidecarManager", () => {
  it(
    "trains and evaluates end to end on a handful of tasks, and counts every episode",
    async () => {
      const config = sidecarManagerConfig({
        quick: true,
        trainTasks: 6,
        evalTasks: 3,
        sftEpochs: 2,
        teacherStakeholders: 2,
        gspoBatches: 1,
        promptsPerBatch: 2,
        groupSize: 2,
        vocabularySize: 1500,
        model: { dModel: 32, heads: 4, layers: 1, maxSequence: 640 },
        threads: 1,
      });
      const table = await runSidecarManager({ gdpvalDir: GDPVAL, config });
      expect(table.tasks).toEqual({ train: 6, eval: 3 });
      expect(table.model).toMatchObject({ name: "sidecar-tiny", device: "cpu" });
      // Printed as a simulation, with the paper's column beside ours.
      const markdown = sidecarManagerMarkdown(table);
      expect(markdown).toContain("> Rubric gym, a simulation");
      expect(markdown).toMatch(/\| LLM manager, GSPO \| [\d.]+ \| [\d.]+ \| 0\.62 \| 0\.74 \|/);
      expect(table.training.sftLoss).toHaveLength(2);
      expect(table.training.sftDialogues).toBe(12);
      expect(table.training.gspo).toHaveLength(1);
      expect(table.training.gspo[0]!.counts.episodes).toBe(4);
      // The KL to the SFT policy after the batch's two steps: logged, small, never negative (k3).
      expect(table.training.gspo[0]!.kl).toBeGreaterThanOrEqual(0);
      expect(markdown).toContain("| GSPO batch | mean reward | clipped | KL to SFT |");
      for (const written of [table.written.sft, table.written.gspo]) {
        expect(written.counts.episodes).toBe(3);
        expect(written.examples).toHaveLength(3);
      }
      for (const row of Object.values(table.rows)) {
        expect(row.n).toEqual([1, 8]);
        for (const r of row.meanReturn) expect(r >= 0 && r <= 1).toBe(true);
      }
      // An episode whose rubric does not parse counts at the floor; the others at their pick's U*.
      for (const m of ["sft", "gspo"] as const) {
        const { counts, meanReturnWhenParsed } = table.written[m];
        const parsed = counts.episodes - counts.unparseable;
        expect(meanReturnWhenParsed === null).toBe(parsed === 0);
        table.rows[m].meanReturn.forEach((r, j) =>
          expect(r * counts.episodes).toBeCloseTo(
            (meanReturnWhenParsed?.[j] ?? 0) * parsed + UNPARSEABLE_UTILITY * counts.unparseable,
            10,
          ),
        );
      }
      expect(table.rows.oracle.meanReturn[1]!).toBeGreaterThan(table.rows.noRubric.meanReturn[1]!);
    },
    TIMEOUT_MS,
  );
});
