import { simulatedStakeholder, type GymTask, type SftExample } from "@rubric/autointeract";
import {
  type GymPrompt,
  PolicySequenceError,
  type RolloutGroup,
  type SampledSequence,
  type SidecarBackend,
  type StepMetrics,
  type StepOptions,
  type TrainerBackend,
} from "@rubric/gspo";
import type { z } from "zod";
import type { ManagerTokenizer } from "./tokenizer.js";
import {
  QuestionsTurnSchema,
  TURN_BREAK,
  questionsPrompt,
  rubricPrompt,
  teacherTurns,
  type ManagerEpisode,
} from "./turns.js";

/** Positions the rubric turn keeps for itself when the dialogue before it is long. */
const MIN_RUBRIC_TOKENS = 96;

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

  /** A sequence's two turns. @throws PolicySequenceError when it has no {@link TURN_BREAK}. */
  split(tokens: readonly number[]): { questions: number[]; rubric: number[] } {
    const at = tokens.indexOf(TURN_BREAK);
    if (at < 0) throw new PolicySequenceError("a manager sequence needs its turn break (-1) between the two turns");
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
