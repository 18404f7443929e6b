import { formatZodIssues } from "@rubric/core";
import { z } from "zod";
import { ArcoInputError } from "../errors.js";
import type { TokenizerOf } from "./contract.js";
import { BinaryHeap } from "./heap.js";

/**
 * The tokenizer of a GGUF llama model (`tokenizer.ggml.model` = "llama"): SentencePiece BPE with
 * byte fallback, giving exactly the ids llama.cpp gives (`llm_tokenizer_spm`, as llama.cpp's
 * `tokenize` calls it with `add_special` and `parse_special` off — no BOS, `<s>` is plain text),
 * so μ can run a llama-format model without llama.cpp and still see the ids it was trained on.
 *
 * Encode: the text is cut at every user-defined piece (type 4; llama.cpp splits them out before
 * SentencePiece, longest first); each stretch of plain text between them gets a leading space if
 * `addSpacePrefix` (an empty text stays empty), has its spaces written "▁", and is split into
 * code points. Then, while some adjacent pair joins into a piece, the pair whose piece scores
 * highest joins, the leftmost on ties. A final symbol that is not a piece becomes the `<0xXX>`
 * pieces of its UTF-8 bytes. Pieces of every type join: llama.cpp looks them up in one map.
 *
 * Decode: normal pieces with "▁" read as a space, byte pieces as their byte, user-defined pieces
 * as their text; control, unknown, unused and undefined pieces give nothing. The bytes are read
 * as UTF-8 (a bad sequence gives U+FFFD). With `addSpacePrefix`, the first id's text loses one
 * leading space — the first id's, as llama.cpp does, so after a leading `<s>` the space stays.
 *
 * `decode(encode(text))` is `text`, except that a lone UTF-16 surrogate comes back as U+FFFD and
 * a "▁" (U+2581) in the text comes back as a space. Not modelled: llama.cpp's retyping of tokens
 * by their text (a normal-typed `<|im_end|>` becomes control) and its per-model strip flags.
 */
const BYTE_TYPE = 6;
const NORMAL_TYPE = 1;
const USER_DEFINED_TYPE = 4;
const SPACE_MARK = "\u2581";
const bytePiece = (byte: number) => `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;
const BYTE_PIECE = /^<0x[0-9A-F]{2}>$/;

/** The tokenizer file: a GGUF's tokenizer metadata, as {@link sentencePieceFileOfGguf} reads it. */
export const SentencePieceFileSchema = z
  .strictObject({
    kind: z.literal("sentencepiece"),
    version: z.literal(1),
    /** Token texts, index = id; llama.cpp renames an empty one `[EMPTY_<id>]`, so none is empty. */
    pieces: z.array(z.string().min(1)),
    /** A merge's priority: the pair whose joined piece scores highest joins first. */
    scores: z.array(z.number()),
    /** GGUF token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte. */
    types: z.array(z.int()),
    bos: z.int(),
    eos: z.int(),
    unknown: z.int(),
    /** llama.cpp's `add_space_prefix`: a space before the text, so a first word reads as any other. */
    addSpacePrefix: z.boolean(),
  })
  .superRefine((file, context) => {
    const n = file.pieces.length;
    const issue = (path: (string | number)[], message: string) => context.addIssue({ code: "custom", path, message });
    for (const key of ["scores", "types"] as const) {
      if (file[key].length !== n) issue([key], `expected ${n} ${key}, one per piece, got ${file[key].length}`);
    }
    for (const key of ["bos", "eos", "unknown"] as const) {
      if (file[key] < 0 || file[key] >= n) issue([key], `expected an id in [0, ${n}), got ${file[key]}`);
    }
    const first = new Map<string, number>();
    file.pieces.forEach((piece, id) => {
      const earlier = first.get(piece);
      if (earlier === undefined) first.set(piece, id);
      else issue(["pieces", id], `${JSON.stringify(piece)} is also id ${earlier}; llama.cpp refuses duplicate pieces`);
      if (file.types[id] === BYTE_TYPE && !BYTE_PIECE.test(piece)) {
        issue(
          ["pieces", id],
          `a byte piece (type 6) must read "<0xXX>" (upper-case hex), got ${JSON.stringify(piece)}`,
        );
      }
    });
    const missing: string[] = [];
    for (let byte = 0; byte < 256; byte++) {
      const id = first.get(bytePiece(byte));
      if (id === undefined || file.types[id] !== BYTE_TYPE) missing.push(bytePiece(byte));
    }
    if (missing.length > 0) {
      issue(
        ["pieces"],
        `byte fallback needs a type-6 piece "<0xXX>" for every byte; ${missing.length} missing: ${missing.slice(0, 4).join(", ")}${missing.length > 4 ? ", …" : ""}`,
      );
    }
  });
export type SentencePieceFile = z.infer<typeof SentencePieceFileSchema>;

/**
 * A loaded {@link SentencePieceFile}: its vocabulary is the pieces; `encode` gives the ids
 * llama.cpp's `llama_tokenize(text, add_special = false, parse_special = false)` gives, `decode`
 * the text its `llama_detokenize(ids, …, unparse_special = false)` gives, `toFile` a copy.
 */
export type SentencePieceTokenizer = TokenizerOf<"sentencepiece", SentencePieceFile>;

/** What a GGUF says about its tokenizer, under the `tokenizer.ggml.*` keys. */
export interface GgufTokenizerMetadata {
  /** `tokenizer.ggml.tokens` */
  readonly tokens: readonly string[];
  /** `tokenizer.ggml.scores` */
  readonly scores: readonly number[];
  /** `tokenizer.ggml.token_type` */
  readonly types: readonly number[];
  /** `tokenizer.ggml.bos_token_id` */
  readonly bos: number;
  /** `tokenizer.ggml.eos_token_id` */
  readonly eos: number;
  /** `tokenizer.ggml.unknown_token_id` */
  readonly unknown: number;
  /** `tokenizer.ggml.add_space_prefix`; llama.cpp's default for an SPM vocabulary is true. */
  readonly addSpacePrefix?: boolean;
}

// The file's fields under the names the metadata gives them, for error paths.
const METADATA_NAMES: Record<string, string> = { pieces: "tokens" };

/**
 * The tokenizer file of a GGUF's metadata, read the way llama.cpp reads it (an empty token text
 * becomes `[EMPTY_<id>]`, `add_space_prefix` defaults to true); an `ArcoInputError` names the
 * faulty metadata field.
 *
 * @example
 * const { tokenizer } = (await readGgufFileInfo(path)).metadata; // node-llama-cpp
 * const g = tokenizer.ggml;
 * const file = sentencePieceFileOfGguf({
 *   tokens: g.tokens, scores: g.scores ?? [], types: g.token_type,
 *   bos: g.bos_token_id ?? 1, eos: g.eos_token_id ?? 2, unknown: g.unknown_token_id ?? 0,
 *   addSpacePrefix: g.add_space_prefix,
 * });
 * sentencePieceTokenizer(file).encode("Once upon a time"); // [403, 407, 261, 378] for stories260K
 */
export function sentencePieceFileOfGguf(metadata: GgufTokenizerMetadata): SentencePieceFile {
  const candidate = {
    kind: "sentencepiece",
    version: 1,
    pieces: metadata.tokens.map((token, id) => (token === "" ? `[EMPTY_${id}]` : token)),
    scores: [...metadata.scores],
    types: [...metadata.types],
    bos: metadata.bos,
    eos: metadata.eos,
    unknown: metadata.unknown,
    addSpacePrefix: metadata.addSpacePrefix ?? true,
  };
  const parsed = SentencePieceFileSchema.safeParse(candidate);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const [head, ...rest] = issue.path;
      return typeof head === "string" ? { ...issue, path: [METADATA_NAMES[head] ?? head, ...rest] } : issue;
    });
    throw new ArcoInputError("metadata", formatZodIssues(issues, { separator: "; " }));
  }
  return parsed.data;
}

/**
 * The tokenizer of a parsed tokenizer file; an `ArcoInputError` names the faulty field.
 *
 * @example
 * const tokenizer = sentencePieceTokenizer(sentencePieceFileOfGguf(metadata));
 * tokenizer.encode("Once upon a time"); // [403, 407, 261, 378] for stories260K: ▁Once ▁upon ▁a ▁time
 * tokenizer.decode(tokenizer.encode("Search[Velmora Castle]")); // "Search[Velmora Castle]"
 */
export function sentencePieceTokenizer(file: unknown): SentencePieceTokenizer {
  const parsed = SentencePieceFileSchema.safeParse(file);
  if (!parsed.success) throw new ArcoInputError("tokenizer", formatZodIssues(parsed.error, { separator: "; " }));
  const source = parsed.data;
  const vocabulary: Vocabulary = {
    idOf: new Map(source.pieces.map((piece, id) => [piece, id])),
    scores: source.scores,
    byteIds: [],
    longestPiece: source.pieces.reduce((longest, piece) => Math.max(longest, piece.length), 0),
  };
  for (let byte = 0; byte < 256; byte++) vocabulary.byteIds.push(vocabulary.idOf.get(bytePiece(byte))!);
  // llama.cpp tries the longest user-defined pieces first; among equal lengths, we take the lower id.
  const userDefined = source.pieces
    .map((piece, id) => ({ piece, id }))
    .filter(({ id }) => source.types[id] === USER_DEFINED_TYPE)
    .sort((a, b) => utf8Length(b.piece) - utf8Length(a.piece) || a.id - b.id);
  const bytesOf = source.pieces.map((piece, id): Uint8Array => {
    switch (source.types[id]) {
      case NORMAL_TYPE:
        return utf8.encode(piece.replaceAll(SPACE_MARK, " "));
      case USER_DEFINED_TYPE:
        return utf8.encode(piece);
      case BYTE_TYPE:
        return Uint8Array.of(Number.parseInt(piece.slice(3, 5), 16));
      default:
        return new Uint8Array(0);
    }
  });
  const vocabularySize = source.pieces.length;

  return {
    kind: "sentencepiece",
    vocabularySize,
    encode(text) {
      const ids: number[] = [];
      // llama.cpp prefixes a stretch that opens the text or follows a user-defined piece: every stretch.
      for (const fragment of splitUserDefined(wellFormed(text), userDefined)) {
        if (typeof fragment === "number") {
          ids.push(fragment);
          continue;
        }
        const stretch = source.addSpacePrefix ? ` ${fragment}` : fragment;
        mergeSymbols(stretch.replaceAll(" ", SPACE_MARK), vocabulary, ids);
      }
      return ids;
    },
    decode(ids) {
      const parts: Uint8Array[] = [];
      let length = 0;
      ids.forEach((id, i) => {
        if (!Number.isInteger(id) || id < 0 || id >= vocabularySize) {
          throw new ArcoInputError(`ids[${i}]`, `expected an id in [0, ${vocabularySize}), got ${id}`);
        }
        let bytes = bytesOf[id]!;
        // The dummy prefix: llama.cpp strips it from the first id only, whatever that id reads as.
        if (i === 0 && source.addSpacePrefix && bytes[0] === 0x20) bytes = bytes.subarray(1);
        parts.push(bytes);
        length += bytes.length;
      });
      const all = new Uint8Array(length);
      let at = 0;
      for (const part of parts) {
        all.set(part, at);
        at += part.length;
      }
      // ignoreBOM keeps a leading U+FEFF, which llama.cpp's text keeps too.
      return new TextDecoder("utf-8", { ignoreBOM: true }).decode(all);
    },
    toFile: () => ({
      ...source,
      pieces: [...source.pieces],
      scores: [...source.scores],
      types: [...source.types],
    }),
  };
}

interface Vocabulary {
  readonly idOf: ReadonlyMap<string, number>;
  readonly scores: readonly number[];
  /** The id of `<0xXX>` for byte XX. */
  readonly byteIds: number[];
  /** In UTF-16 units: a longer pair cannot be a piece, so it is never looked up. */
  readonly longestPiece: number;
}

const utf8 = new TextEncoder();
const utf8Length = (text: string) => utf8.encode(text).length;

/** Lone surrogates as U+FFFD: what UTF-8 (and so llama.cpp, through node's string conversion) sees. */
const wellFormed = (text: string) =>
  text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");

/**
 * The text cut at every occurrence of a user-defined piece, as llama.cpp's
 * `tokenizer_st_partition` cuts it: piece by piece in the given order, each splitting every
 * stretch of plain text that earlier pieces left, left to right. A piece is given as its id.
 */
function splitUserDefined(text: string, pieces: readonly { piece: string; id: number }[]): (string | number)[] {
  let fragments: (string | number)[] = text === "" ? [] : [text];
  for (const { piece, id } of pieces) {
    const next: (string | number)[] = [];
    for (const fragment of fragments) {
      if (typeof fragment === "number") {
        next.push(fragment);
        continue;
      }
      let from = 0;
      for (let at = fragment.indexOf(piece); at >= 0; at = fragment.indexOf(piece, from)) {
        if (at > from) next.push(fragment.slice(from, at));
        next.push(id);
        from = at + piece.length;
      }
      if (from < fragment.length) next.push(fragment.slice(from));
    }
    fragments = next;
  }
  return fragments;
}

interface Bigram {
  readonly score: number;
  readonly left: number;
  readonly right: number;
  /** The joined length when queued: a symbol that has grown since makes the entry stale. */
  readonly size: number;
}

/**
 * llama.cpp's SPM merge loop over the code points of `text`, appending the ids to `out`, in
 * O(n log n): every adjacent pair that joins into a piece waits in a heap ordered by (score
 * descending, left position ascending). A merge folds the right symbol into the left one, so a
 * popped entry is current exactly when both symbols are alive and their lengths still add up to
 * the length it was queued with; other entries are skipped. Among current entries that order is
 * total, so the result does not depend on the heap's tie-breaking.
 */
function mergeSymbols(text: string, vocabulary: Vocabulary, out: number[]): void {
  const start: number[] = [];
  for (let at = 0; at < text.length; at += text.codePointAt(at)! > 0xffff ? 2 : 1) start.push(at);
  const n = start.length;
  const length = new Int32Array(n);
  const prev = new Int32Array(n);
  const next = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    length[i] = (i + 1 < n ? start[i + 1]! : text.length) - start[i]!;
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  const queue = new BinaryHeap<Bigram>((a, b) => a.score > b.score || (a.score === b.score && a.left < b.left));
  const tryPair = (left: number, right: number) => {
    if (left < 0 || right < 0) return;
    const size = length[left]! + length[right]!;
    if (size > vocabulary.longestPiece) return;
    const id = vocabulary.idOf.get(text.slice(start[left]!, start[left]! + size));
    if (id !== undefined) queue.push({ score: vocabulary.scores[id]!, left, right, size });
  };
  for (let i = 1; i < n; i++) tryPair(i - 1, i);
  while (queue.size > 0) {
    const { left, right, size } = queue.pop();
    if (length[left] === 0 || length[right] === 0 || length[left]! + length[right]! !== size) continue;
    length[left] = size;
    length[right] = 0;
    next[left] = next[right]!;
    if (next[left]! >= 0) prev[next[left]!] = left;
    tryPair(prev[left]!, left);
    tryPair(left, next[left]!);
  }
  for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]!) {
    const symbol = text.slice(start[i]!, start[i]! + length[i]!);
    const id = vocabulary.idOf.get(symbol);
    if (id !== undefined) out.push(id);
    else for (const byte of utf8.encode(symbol)) out.push(vocabulary.byteIds[byte]!);
  }
}
