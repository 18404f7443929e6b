import { formatZodIssues } from "@rubric/core";
import { z } from "zod";
import { ArcoInputError } from "../errors.js";
import type { TokenizerOf } from "./contract.js";
import { BinaryHeap } from "./heap.js";

/**
 * A byte-level BPE tokenizer small enough to specify in a paragraph, so that the sidecar
 * (Python) and onnxruntime-node (TypeScript) give the same ids from one file that travels with
 * the model. Byte-level means every text encodes (no unknown token) and decoding gives the text
 * back; the merges are what keep μ's sequences short on CPU.
 *
 * Ids: 0 `<pad>`, 1 `<bos>`, 2 `<eos>`; 3 + b for byte b (3…258); 259 + r for merge r.
 * Encode: the text's UTF-8 bytes as byte ids; then, while some adjacent pair is a merge, take
 * the merge of lowest rank among the pairs present and replace its occurrences, left to right
 * and non-overlapping, by its id. Decode: expand every id to its bytes, drop special ids, and
 * read the bytes as UTF-8. Text round-trips exactly, except a lone UTF-16 surrogate, which UTF-8
 * cannot hold and comes back as U+FFFD.
 */
export const SPECIAL_TOKENS = ["<pad>", "<bos>", "<eos>"] as const;
export const PAD_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;
const BYTE_OFFSET = SPECIAL_TOKENS.length;
const FIRST_MERGE_ID = BYTE_OFFSET + 256;
// A pair is keyed as a·2^20 + b in one number; ids stay below 2^20, far beyond any vocabulary μ needs.
const ID_LIMIT = 0x100000;
const MAX_MERGES = ID_LIMIT - FIRST_MERGE_ID;
// The encoder's heap packs (rank, position) into one number: ranks < 2^20 and positions < 2^26
// stay below 2^46, exact in a double. 2^26 bytes is 64 MiB of text in one call.
const POSITION_LIMIT = 2 ** 26;

/** The tokenizer file (`tokenizer.json` in a model directory; `kind` "byte-bpe" in the manifest). */
export const ByteBpeFileSchema = z
  .strictObject({
    kind: z.literal("byte-bpe"),
    version: z.literal(1),
    specials: z.tuple([z.literal("<pad>"), z.literal("<bos>"), z.literal("<eos>")]),
    /** Merge r joins the pair (a, b) into id 259 + r; both must be ids that exist before it. */
    merges: z.array(z.tuple([z.int().min(BYTE_OFFSET), z.int().min(BYTE_OFFSET)])).max(MAX_MERGES),
  })
  .superRefine((file, context) => {
    file.merges.forEach(([a, b], r) => {
      const limit = FIRST_MERGE_ID + r;
      if (a >= limit || b >= limit) {
        context.addIssue({
          code: "custom",
          path: ["merges", r],
          message: `merge ${r} may join only ids below ${limit} (bytes and earlier merges), got [${a}, ${b}]`,
        });
      }
    });
  });
export type ByteBpeFile = z.infer<typeof ByteBpeFileSchema>;

/** A loaded {@link ByteBpeFile}: its ids in use are the specials, the bytes and the merges. */
export type ByteBpeTokenizer = TokenizerOf<"byte-bpe", ByteBpeFile>;

const pairKey = (a: number, b: number) => a * ID_LIMIT + b;

/**
 * The tokenizer of a parsed tokenizer file; an `ArcoInputError` names the faulty field.
 *
 * @example
 * const tokenizer = byteBpeTokenizer(JSON.parse(readInputText("models/mu/v1/tokenizer.json")));
 * tokenizer.decode(tokenizer.encode("Search[Lyon]")); // "Search[Lyon]"
 */
export function byteBpeTokenizer(file: unknown): ByteBpeTokenizer {
  const parsed = ByteBpeFileSchema.safeParse(file);
  if (!parsed.success) throw new ArcoInputError("tokenizer", formatZodIssues(parsed.error, { separator: "; " }));
  const merges = parsed.data.merges;
  const rank = new Map<number, number>();
  merges.forEach(([a, b], r) => {
    if (!rank.has(pairKey(a, b))) rank.set(pairKey(a, b), r);
  });
  const bytesOf: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) bytesOf[BYTE_OFFSET + b] = Uint8Array.of(b);
  merges.forEach(([a, b], r) => {
    const left = bytesOf[a]!;
    const right = bytesOf[b]!;
    const joined = new Uint8Array(left.length + right.length);
    joined.set(left);
    joined.set(right, left.length);
    bytesOf[FIRST_MERGE_ID + r] = joined;
  });
  const vocabularySize = FIRST_MERGE_ID + merges.length;

  return {
    kind: "byte-bpe",
    vocabularySize,
    encode(text) {
      const bytes = new TextEncoder().encode(text);
      if (bytes.length >= POSITION_LIMIT)
        throw new ArcoInputError(
          "text",
          `${bytes.length} bytes; the tokenizer encodes at most ${POSITION_LIMIT - 1} in one call`,
        );
      return applyMerges(
        Array.from(bytes, (b) => b + BYTE_OFFSET),
        rank,
      );
    },
    decode(ids) {
      const parts: Uint8Array[] = [];
      let length = 0;
      ids.forEach((id, i) => {
        if (!Number.isInteger(id) || id < 0 || id >= vocabularySize) {
          throw new ArcoInputError(`ids[${i}]`, `expected an id in [0, ${vocabularySize}), got ${id}`);
        }
        if (id < BYTE_OFFSET) return;
        const bytes = bytesOf[id]!;
        parts.push(bytes);
        length += bytes.length;
      });
      const all = new Uint8Array(length);
      let at = 0;
      for (const part of parts) {
        all.set(part, at);
        at += part.length;
      }
      return new TextDecoder().decode(all);
    },
    toFile: () => ({
      kind: "byte-bpe",
      version: 1,
      specials: [...SPECIAL_TOKENS],
      merges: merges.map(([a, b]) => [a, b]),
    }),
  };
}

/**
 * The encode loop, in O(n log n): every adjacent pair that is a merge waits in a heap keyed by
 * (rank, position). This gives exactly the rounds of "merge the lowest-ranked pair present,
 * everywhere, left to right": a merge's new id may pair only with merges of higher rank (merge r
 * joins ids below 259 + r), so ranks come out of the heap in the order the rounds take them, and
 * within a rank the leftmost first. A popped entry whose pair has changed since is skipped.
 */
function applyMerges(ids: number[], rank: ReadonlyMap<number, number>): number[] {
  const n = ids.length;
  if (n < 2) return ids;
  const token = Int32Array.from(ids);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  // (rank, position) packed into one number, rank · 2^26 + position: the lowest is the next merge.
  const heap = new BinaryHeap<number>((a, b) => a < b);
  const consider = (i: number) => {
    const j = next[i]!;
    if (i < 0 || j < 0) return;
    const r = rank.get(pairKey(token[i]!, token[j]!));
    if (r !== undefined) heap.push(r * POSITION_LIMIT + i);
  };
  for (let i = 0; i + 1 < n; i++) consider(i);
  const alive = new Uint8Array(n).fill(1);
  while (heap.size > 0) {
    const top = heap.pop();
    const r = Math.floor(top / POSITION_LIMIT);
    const i = top % POSITION_LIMIT;
    const j = next[i]!;
    if (!alive[i] || j < 0 || rank.get(pairKey(token[i]!, token[j]!)) !== r) continue;
    token[i] = FIRST_MERGE_ID + r;
    alive[j] = 0;
    const after = next[j]!;
    next[i] = after;
    if (after >= 0) prev[after] = i;
    consider(prev[i]!);
    consider(i);
  }
  const out: number[] = [];
  for (let i = 0; i >= 0; i = next[i]!) out.push(token[i]!);
  return out;
}

function mergePair(ids: readonly number[], r: number, rank: ReadonlyMap<number, number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (i + 1 < ids.length && rank.get(pairKey(ids[i]!, ids[i + 1]!)) === r) {
      out.push(FIRST_MERGE_ID + r);
      i++;
    } else out.push(ids[i]!);
  }
  return out;
}

/**
 * Learns merges from `texts` until the vocabulary holds `vocabularySize` ids or no adjacent pair
 * occurs twice: each round merges the most frequent pair (ties: the smallest (a, b)), as the
 * encoder will. Deterministic, so the same corpus gives the same file on both sides.
 *
 * @example
 * const tokenizer = byteBpeTokenizer(trainByteBpe(stepPrompts, 512));
 * tokenizer.vocabularySize; // ≤ 512
 */
export function trainByteBpe(texts: readonly string[], vocabularySize: number): ByteBpeFile {
  if (!Number.isInteger(vocabularySize) || vocabularySize < FIRST_MERGE_ID || vocabularySize > ID_LIMIT) {
    throw new ArcoInputError(
      "vocabularySize",
      `expected an integer in [${FIRST_MERGE_ID}, ${ID_LIMIT}], got ${vocabularySize}`,
    );
  }
  const encoder = new TextEncoder();
  let sequences = texts.map((text) => Array.from(encoder.encode(text), (b) => b + BYTE_OFFSET));
  const merges: [number, number][] = [];
  while (FIRST_MERGE_ID + merges.length < vocabularySize) {
    const counts = new Map<number, number>();
    for (const ids of sequences) {
      for (let i = 0; i + 1 < ids.length; i++) {
        const key = pairKey(ids[i]!, ids[i + 1]!);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    let bestKey = -1;
    let bestCount = 1;
    for (const [key, count] of counts) {
      if (count > bestCount || (count === bestCount && bestKey !== -1 && key < bestKey)) {
        bestKey = key;
        bestCount = count;
      }
    }
    if (bestKey === -1) break;
    const pair: [number, number] = [Math.floor(bestKey / ID_LIMIT), bestKey % ID_LIMIT];
    const rank = new Map([[bestKey, merges.length]]);
    sequences = sequences.map((ids) => mergePair(ids, merges.length, rank));
    merges.push(pair);
  }
  return { kind: "byte-bpe", version: 1, specials: [...SPECIAL_TOKENS], merges };
}
