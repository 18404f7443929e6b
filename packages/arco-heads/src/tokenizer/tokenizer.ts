import { ArcoInputError } from "../errors.js";
import { type ByteBpeFile, type ByteBpeTokenizer, byteBpeTokenizer } from "./byte-bpe.js";
import { type SentencePieceFile, type SentencePieceTokenizer, sentencePieceTokenizer } from "./sentencepiece.js";

export type { TokenizerOf } from "./contract.js";

/**
 * The tokenizer of a μ model directory, whatever its kind: the byte-level BPE a small μ trains on
 * its own steps, or the SentencePiece vocabulary of a pretrained llama read from its GGUF file.
 * Both keep the ids μ's sequences are framed with: 0 pads, 1 begins, 2 ends (a llama vocabulary's
 * `<unk>`, `<s>` and `</s>`; padding is masked, so `<unk>` standing for it is never read).
 */
export type MuTokenizer = ByteBpeTokenizer | SentencePieceTokenizer;
/** Its file (`tokenizer.json` in a model directory), its `kind` the manifest's `tokenizer.kind`. */
export type MuTokenizerFile = ByteBpeFile | SentencePieceFile;

/** The tokenizer kinds this version reads. */
export const TOKENIZER_KINDS = ["byte-bpe", "sentencepiece"] as const;
export type TokenizerKind = (typeof TOKENIZER_KINDS)[number];

/** Whether a manifest's `tokenizer.kind` is one this version reads. */
export function isTokenizerKind(kind: string): kind is TokenizerKind {
  return (TOKENIZER_KINDS as readonly string[]).includes(kind);
}

/**
 * The tokenizer of a parsed tokenizer file of `kind`; an `ArcoInputError` names the faulty field,
 * or says the file is of another kind than its manifest states.
 */
export function muTokenizer(kind: TokenizerKind, file: unknown): MuTokenizer {
  const stated = typeof file === "object" && file !== null ? (file as { kind?: unknown }).kind : undefined;
  if (stated !== kind)
    throw new ArcoInputError("tokenizer.kind", `expected a ${kind} tokenizer file, got kind ${JSON.stringify(stated)}`);
  return kind === "byte-bpe" ? byteBpeTokenizer(file) : sentencePieceTokenizer(file);
}
