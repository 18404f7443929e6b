import { BOS_ID, EOS_ID, byteBpeTokenizer, trainByteBpe, type ByteBpeTokenizer } from "@rubric/arco-heads";
import {
  MANAGER_SYSTEM_PROMPT,
  briefTerms,
  simulatedStakeholder,
  writtenCriterionVerifier,
  type GymTask,
  type SftExample,
} from "@rubric/autointeract";
import { approximateTokens, formatZodIssues, type FlatRubric } from "@rubric/core";
import type {
  GymPrompt,
  RolloutGroup,
  SampledSequence,
  SidecarBackend,
  StepMetrics,
  StepOptions,
  TrainerBackend,
} from "@rubric/gspo";
import { z } from "zod";

/**
 * Where a manager episode's questions turn ends and its rubric turn starts, in the sequences the
 * trainer sees: no id of any vocabulary (ids are non-negative), with log-probability 0 under
 * every policy, and never sent to the sidecar.
 */
export const TURN_BREAK = -1;

/** Positions the rubric turn keeps for itself when the dialogue before it is long. */
const MIN_RUBRIC_TOKENS = 96;

/** The questions turn the causal LM writes: `{"questions": [...]}` (none is a valid choice). */
export const QuestionsTurnSchema = z.strictObject({ questions: z.array(z.string().min(1).max(300)).max(8) });
/** The rubric turn: `{"criteria": [{"text", "weight"}]}`, the JSON of `@rubric/autointeract`'s SFT corpus. */
export const RubricTurnSchema = z.strictObject({
  criteria: z
    .array(z.strictObject({ text: z.string().min(1).max(300), weight: z.number().min(1).max(5) }))
    .min(1)
    .max(20),
});

/** How many characters of a task's prompt the manager reads (a small model has few positions), before its key terms. */
const TASK_CHARS = 200;

/** The task as the LLM manager reads it: the start of its prompt, then its salient words (which a brief-term criterion copies). */
export function taskDigest(task: GymTask): string {
  const head = task.prompt.replace(/\s+/g, " ").trim();
  const cut = head.length > TASK_CHARS ? `${head.slice(0, TASK_CHARS)}…` : head;
  return `${cut}\nKey terms: ${briefTerms(task.prompt, 8).join(", ")}`;
}

/** The questions turn's prompt: the manager's instructions and the task. */
export function questionsPrompt(task: GymTask): string {
  return `${MANAGER_SYSTEM_PROMPT}\nTask: ${taskDigest(task)}\nQuestions: `;
}

/** The rubric turn's prompt: the questions turn's, what was asked, what the stakeholder said. */
export function rubricPrompt(
  task: GymTask,
  questionsText: string,
  exchanges: readonly { readonly question: string; readonly answer: string }[],
): string {
  const heard = exchanges.map((e, i) => `Q${i + 1}: ${e.question}\nA${i + 1}: ${e.answer}`).join("\n");
  return `${questionsPrompt(task)}${questionsText}\n${heard === "" ? "(no questions)" : heard}\nRubric: `;
}

/**
 * Text ↔ ids for the manager's model: a byte-level BPE learnt from the teacher dialogues (the
 * sidecar's small transformer, {@link bpeManagerTokenizer}), or a transformers model's own tokenizer
 * in the sidecar ({@link sidecarManagerTokenizer}). Asynchronous because the second is a request.
 */
export interface ManagerTokenizer {
  readonly vocabularySize: number;
  /** The token a prompt starts with, or null when the model has none. */
  readonly bos: number | null;
  /** The token that ends a turn. */
  readonly eos: number;
  /** Each text's ids, no special token added. */
  encode(texts: readonly string[]): Promise<number[][]>;
  /** Each row's text, special tokens left out. */
  decode(ids: readonly (readonly number[])[]): Promise<string[]>;
}

/** A BPE of `@rubric/arco-heads` (see {@link trainManagerTokenizer}) as the manager's tokenizer, with its `<bos>` and `<eos>`. */
export function bpeManagerTokenizer(bpe: ByteBpeTokenizer): ManagerTokenizer {
  return {
    vocabularySize: bpe.vocabularySize,
    bos: BOS_ID,
    eos: EOS_ID,
    encode: async (texts) => texts.map((t) => bpe.encode(t)),
    decode: async (ids) => ids.map((row) => bpe.decode(row.filter((id) => id !== BOS_ID && id !== EOS_ID))),
  };
}

/**
 * A transformers model's own tokenizer, read through the sidecar (`policy.tokenize`): its start
 * token when it has one, its end token (required: a turn must be able to end).
 * @throws RangeError when the sidecar's policy has no tokenizer (the small transformer) or no end token.
 */
export function sidecarManagerTokenizer(backend: SidecarBackend): ManagerTokenizer {
  const tokenizer = backend.summary.tokenizer;
  if (tokenizer === null)
    throw new RangeError(
      "the sidecar's policy has no tokenizer of its own (the small transformer): use bpeManagerTokenizer",
    );
  if (tokenizer.eos_token_id === null)
    throw new RangeError("the model's tokenizer has no end token: a manager's turn could never end");
  return {
    vocabularySize: backend.summary.vocab_size,
    bos: tokenizer.bos_token_id,
    eos: tokenizer.eos_token_id,
    encode: (texts) => backend.tokenize(texts),
    decode: (ids) => backend.detokenize(ids),
  };
}

/** A rubric turn read back: the gym rubric (each criterion's rule from its text), or why it is not one. */
export type ReadRubric =
  | { readonly ok: true; readonly rubric: FlatRubric; readonly judged: number }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses and validates a rubric turn: JSON, then `RubricTurnSchema`, then each criterion's
 * verifier as `writtenCriterionVerifier` reads its text. A criterion that reads as no rule would
 * need a judge, which the gym has not: it is left out and counted (`judged`); a rubric with no
 * rule left is not a rubric.
 */
export function readRubricTurn(text: string, id: string): ReadRubric {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = RubricTurnSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: formatZodIssues(parsed.error, { limit: 1 }) };
  const criteria: FlatRubric["criteria"][number][] = [];
  let judged = 0;
  parsed.data.criteria.forEach((c, i) => {
    const read = writtenCriterionVerifier(c.text);
    if (read.kind !== "rule") {
      judged++;
      return;
    }
    criteria.push({ id: `c${i + 1}`, text: c.text, weight: c.weight, polarity: "reward", verifier: read.verifier });
  });
  if (criteria.length === 0) return { ok: false, reason: `none of its ${judged} criteria reads as a rule` };
  return { ok: true, rubric: { id, criteria }, judged };
}

/** One manager episode as text: the questions it asked (parsed, or none when the turn does not parse) and its rubric turn. */
export interface ManagerEpisode {
  readonly questions: readonly string[];
  /** False when the questions turn did not parse (it then asked nothing). */
  readonly questionsParsed: boolean;
  readonly rubricText: string;
}

/**
 * ARCANE's manager as the sidecar's causal LM: a {@link TrainerBackend} over gym prompts whose
 * sequences are whole dialogues. It writes a questions turn (`{"questions": [...]}`) for the
 * task; the task's simulated stakeholder answers each question; it writes the rubric turn
 * (`{"criteria": [...]}`) after reading the answers. A sequence is the questions turn's ids, then
 * {@link TURN_BREAK}, then the rubric turn's, each ending with the end token when the model wrote it.
 *
 * Training goes through `SidecarBackend` (torch): SFT on teacher dialogues and GSPO on the gym's
 * reward. The two turns have different prompts (the second holds the answers), so the sidecar sees
 * each turn as a sequence of its own: the questions turns of a group share the task's prompt, each
 * rubric turn has its own, and both carry the episode's advantage — GSPO's length-normalised ratio
 * and clip apply per turn, not over the dialogue.
 */
export class SidecarManager implements TrainerBackend<GymPrompt> {
  readonly kind = "sidecar-manager";
  readonly #dialogues = new Map<string, Promise<{ ids: number[]; episode: ManagerEpisode }>>();
  readonly #questionsIds = new Map<string, Promise<number[]>>();

  constructor(
    readonly backend: SidecarBackend,
    readonly tokenizer: ManagerTokenizer,
    readonly options: { readonly maxQuestionTokens: number; readonly maxRubricTokens: number },
  ) {}

  /** A prompt's ids: the start token (when the model has one), then the text's. */
  async promptIds(text: string): Promise<number[]> {
    const [ids] = await this.tokenizer.encode([text]);
    return this.tokenizer.bos === null ? ids! : [this.tokenizer.bos, ...ids!];
  }

  /** The questions turn's prompt ids for a task. */
  questionsIds(task: GymTask): Promise<number[]> {
    let found = this.#questionsIds.get(task.id);
    if (found === undefined) {
      found = this.promptIds(questionsPrompt(task));
      this.#questionsIds.set(task.id, found);
    }
    return found;
  }

  /** New tokens a turn may write after `prompt`: its cap, within the model's positions. */
  #budget(prompt: readonly number[], cap: number): number {
    return Math.max(1, Math.min(cap, this.backend.summary.max_seq_len - prompt.length));
  }

  /** Text of a turn's ids (the tokenizer leaves out special tokens: the end token that ended it). */
  async text(ids: readonly number[]): Promise<string> {
    const [text] = await this.tokenizer.decode([ids]);
    return text!;
  }

  /**
   * The dialogue after a questions turn: its questions (none when it does not parse), the
   * stakeholder's answers, and the rubric turn's prompt ids. The gym stakeholder answers a question
   * the same way whenever it is asked, so sampling, scoring and training rebuild the same prompt.
   */
  dialogue(prompt: GymPrompt, questionIds: readonly number[]): Promise<{ ids: number[]; episode: ManagerEpisode }> {
    const key = `${prompt.task.id}:${prompt.stakeholderSeed}:${questionIds.join(",")}`;
    let found = this.#dialogues.get(key);
    if (found === undefined) {
      found = (async () => {
        const questionsText = await this.text(questionIds);
        let parsed: z.infer<typeof QuestionsTurnSchema> | undefined;
        try {
          const result = QuestionsTurnSchema.safeParse(JSON.parse(questionsText));
          if (result.success) parsed = result.data;
        } catch {
          parsed = undefined;
        }
        const stakeholder = simulatedStakeholder(prompt.task, prompt.stakeholderSeed);
        const exchanges: { question: string; answer: string }[] = [];
        for (const question of parsed?.questions ?? []) {
          const answer = await stakeholder.answer(
            { text: question },
            { task: prompt.task, exchanges: [], questionsLeft: 1, turnsLeft: 2 },
          );
          exchanges.push({ question, answer: answer.text });
        }
        // The rubric turn needs positions of its own: answers that would not leave them are not
        // heard (the last first), and the questions asked are those heard.
        const room = this.backend.summary.max_seq_len - MIN_RUBRIC_TOKENS;
        const ids = () => this.promptIds(rubricPrompt(prompt.task, questionsText, exchanges));
        let rubricIds = await ids();
        while (rubricIds.length > room && exchanges.length > 0) {
          exchanges.pop();
          rubricIds = await ids();
        }
        if (rubricIds.length > room)
          rubricIds = [...rubricIds.slice(0, 1), ...rubricIds.slice(rubricIds.length - room + 1)];
        return {
          ids: rubricIds,
          episode: {
            questions: exchanges.map((e) => e.question),
            questionsParsed: parsed !== undefined,
            rubricText: "",
          },
        };
      })();
      this.#dialogues.set(key, found);
      // A long run meets many dialogues; the cache only has to span a batch's sample → step.
      if (this.#dialogues.size > 20_000) this.#dialogues.delete(this.#dialogues.keys().next().value!);
    }
    return found;
  }

  /** A sequence's two turns. @throws RangeError when it has no {@link TURN_BREAK}. */
  split(tokens: readonly number[]): { questions: number[]; rubric: number[] } {
    const at = tokens.indexOf(TURN_BREAK);
    if (at < 0) throw new RangeError("a manager sequence needs its turn break (-1) between the two turns");
    return { questions: tokens.slice(0, at), rubric: tokens.slice(at + 1) };
  }

  /** The episode a sequence spells: questions asked and the rubric turn's text. */
  async episode(prompt: GymPrompt, tokens: readonly number[]): Promise<ManagerEpisode> {
    const { questions, rubric } = this.split(tokens);
    const { episode } = await this.dialogue(prompt, questions);
    return { ...episode, rubricText: await this.text(rubric) };
  }

  /** Teacher dialogues of `@rubric/autointeract`'s SFT corpus as sequences: each one's questions, then its rubric turn. */
  async teacherTokens(examples: readonly SftExample[]): Promise<number[][]> {
    const turns = examples.map(teacherTurns);
    const ids = await this.tokenizer.encode(turns.flatMap((t) => [t.questionsText, t.rubricText]));
    const eos = this.tokenizer.eos;
    return turns.map((_, i) => [...ids[2 * i]!, eos, TURN_BREAK, ...ids[2 * i + 1]!, eos]);
  }

  async sample(
    prompt: GymPrompt,
    n: number,
    options: { readonly seed: number; readonly temperature?: number },
  ): Promise<SampledSequence[]> {
    const first = await this.questionsIds(prompt.task);
    const turns = await this.backend.sample(first, n, {
      ...options,
      maxNewTokens: this.#budget(first, this.options.maxQuestionTokens),
    });
    const out: SampledSequence[] = [];
    for (const [k, turn] of turns.entries()) {
      const { ids } = await this.dialogue(prompt, turn.tokens);
      const [rubric] = await this.backend.sample(ids, 1, {
        seed: (options.seed + 7_919 * (k + 1)) % 2 ** 31,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        maxNewTokens: this.#budget(ids, this.options.maxRubricTokens),
      });
      out.push({
        tokens: [...turn.tokens, TURN_BREAK, ...rubric!.tokens],
        logprobs: [...turn.logprobs, 0, ...rubric!.logprobs],
      });
    }
    return out;
  }

  async logprobs(prompt: GymPrompt, sequences: readonly (readonly number[])[]): Promise<number[][]> {
    const parts = sequences.map((s) => this.split(s));
    const first = await this.backend.logprobs(
      await this.questionsIds(prompt.task),
      parts.map((p) => p.questions),
    );
    const out: number[][] = [];
    for (const [k, part] of parts.entries()) {
      const { ids } = await this.dialogue(prompt, part.questions);
      const [second] = await this.backend.logprobs(ids, [part.rubric]);
      out.push([...first[k]!, 0, ...second!]);
    }
    return out;
  }

  async step(groups: readonly RolloutGroup<GymPrompt>[], options: StepOptions): Promise<StepMetrics> {
    const turns: RolloutGroup<number[]>[] = [];
    for (const group of groups) {
      const parts = group.sequences.map((s) => ({ ...this.split(s.tokens), s }));
      turns.push({
        prompt: await this.questionsIds(group.prompt.task),
        sequences: parts.map(({ questions, s }) => ({
          tokens: questions,
          logpOld: s.logpOld.slice(0, questions.length),
          advantage: s.advantage,
        })),
      });
      for (const { questions, rubric, s } of parts)
        turns.push({
          prompt: (await this.dialogue(group.prompt, questions)).ids,
          sequences: [{ tokens: rubric, logpOld: s.logpOld.slice(questions.length + 1), advantage: s.advantage }],
        });
    }
    return this.backend.step(turns, options);
  }

  async sftStep(
    examples: readonly { readonly prompt: GymPrompt; readonly tokens: readonly number[] }[],
    options: { readonly learningRate: number },
  ): Promise<number> {
    const turns: { prompt: number[]; tokens: number[] }[] = [];
    for (const example of examples) {
      const { questions, rubric } = this.split(example.tokens);
      turns.push({ prompt: await this.questionsIds(example.prompt.task), tokens: questions });
      turns.push({ prompt: (await this.dialogue(example.prompt, questions)).ids, tokens: rubric });
    }
    return this.backend.sftStep(turns, options);
  }

  setReference(): Promise<void> {
    return this.backend.setReference();
  }
  resetOptimizer(): Promise<void> {
    return this.backend.resetOptimizer();
  }
  save(dir: string): Promise<void> {
    return this.backend.save(dir);
  }
  load(dir: string): Promise<void> {
    return this.backend.load(dir);
  }
  close(): Promise<void> {
    return this.backend.close();
  }
}

/**
 * The manager's text in teacher dialogues: each one's rubric prompt (instructions, task, questions
 * turn, answers) and its rubric turn. What a tokenizer for the manager is learnt from.
 */
export function managerCorpus(prompts: readonly GymPrompt[], examples: readonly SftExample[]): string[] {
  return examples.flatMap((example, i) => {
    const turns = teacherTurns(example);
    return [rubricPrompt(prompts[i]!.task, turns.questionsText, turns.exchanges), turns.rubricText];
  });
}

/**
 * A byte-level BPE for the manager's text, learnt from the teacher dialogues ({@link managerCorpus}):
 * its merges make the fixed instructions, the bank's phrases and the JSON frame a few tokens each,
 * which a small model with few positions needs.
 */
export function trainManagerTokenizer(
  prompts: readonly GymPrompt[],
  examples: readonly SftExample[],
  vocabularySize: number,
): ByteBpeTokenizer {
  return byteBpeTokenizer(trainByteBpe(managerCorpus(prompts, examples), vocabularySize));
}

/**
 * A teacher dialogue's two turns as the LLM manager writes them: the questions (assistant turns
 * `{"question"}`) as one questions turn, the stakeholder's answers, and the final rubric turn.
 */
export function teacherTurns(example: SftExample): {
  questionsText: string;
  exchanges: { question: string; answer: string }[];
  rubricText: string;
} {
  const assistant = example.messages.filter((m) => m.role === "assistant");
  const answers = example.messages.filter((m) => m.role === "user").slice(1);
  const questions = assistant.slice(0, -1).map((m) => (JSON.parse(m.content) as { question: string }).question);
  return {
    questionsText: JSON.stringify({ questions }),
    exchanges: questions.map((question, q) => ({ question, answer: answers[q]?.content ?? "" })),
    rubricText: assistant.at(-1)!.content,
  };
}

/** What an episode costs in tokens: the questions asked, and the rubric's criteria (as `gymReward` counts them). */
export function episodeTokens(episode: ManagerEpisode, rubric: FlatRubric | undefined) {
  return {
    questions: episode.questions.reduce((n, q) => n + approximateTokens(q), 0),
    rubric: (rubric?.criteria ?? []).reduce((n, c) => n + approximateTokens(c.text), 0),
  };
}
