import { BOS_ID, EOS_ID, byteBpeTokenizer, trainByteBpe, type ByteBpeTokenizer } from "@rubric/arco-heads";
import type { SftExample } from "@rubric/autointeract";
import { type GymPrompt, PolicyTemplateError, type SidecarBackend } from "@rubric/gspo";
import { rubricPrompt, teacherTurns } from "./turns.js";

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
 * @throws PolicyTemplateError when the sidecar's policy has no tokenizer (the small transformer) or no end token.
 */
export function sidecarManagerTokenizer(backend: SidecarBackend): ManagerTokenizer {
  const tokenizer = backend.summary.tokenizer;
  if (tokenizer === null)
    throw new PolicyTemplateError(
      "the sidecar's policy has no tokenizer of its own (the small transformer): use bpeManagerTokenizer",
    );
  if (tokenizer.eos_token_id === null)
    throw new PolicyTemplateError("the model's tokenizer has no end token: a manager's turn could never end");
  return {
    vocabularySize: backend.summary.vocab_size,
    bos: tokenizer.bos_token_id,
    eos: tokenizer.eos_token_id,
    encode: (texts) => backend.tokenize(texts),
    decode: (ids) => backend.detokenize(ids),
  };
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
