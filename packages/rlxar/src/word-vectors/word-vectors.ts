// Pretrained word vectors (GloVe's format as `../shared/models/glove-6b-100d/` holds it): the
// inductive bias a pretrained language model gives ARCO's μ, for a small μ trained from scratch.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { createRng } from "@rubric/core";
import type { ByteBpeTokenizer } from "@rubric/arco-heads";
import { RlxarFileError, RlxarInputError } from "../errors.js";

/** The files of a word-vector directory: one word per line, and the matrix as little-endian float16. */
export const WORD_VECTOR_FILES = { words: "words.txt", vectors: "vectors.f16" } as const;

/** Lower-cased words and their vectors. */
export interface WordVectors {
  readonly directory: string;
  readonly dimensions: number;
  readonly size: number;
  /** The vector of `word` (looked up lower-cased), or undefined when the file has none. */
  vector(word: string): Float32Array | undefined;
}

/** IEEE 754 half precision to a number (Node 20 has no Float16Array). */
function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/**
 * Reads a word-vector directory (`words.txt`, `vectors.f16`): the matrix must hold a whole row of
 * float16 values per word, every value finite. A word listed twice keeps its first (most
 * frequent) row, as GloVe's order is by frequency.
 *
 * @example
 * const glove = await readWordVectors("../shared/models/glove-6b-100d");
 * glove.vector("paris")?.length; // 100
 */
export async function readWordVectors(directory: string): Promise<WordVectors> {
  const wordsPath = join(directory, WORD_VECTOR_FILES.words);
  const vectorsPath = join(directory, WORD_VECTOR_FILES.vectors);
  const read = async (path: string) => {
    try {
      await stat(path);
      return await readFile(path);
    } catch (error) {
      throw new RlxarFileError(path, [`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`]);
    }
  };
  // One after the other, so a directory missing both names the word list, every time.
  const wordsBuffer = await read(wordsPath);
  const bytes = await read(vectorsPath);
  const words = wordsBuffer.toString("utf8").split("\n");
  if (words.at(-1) === "") words.pop();
  const blank = words.findIndex((word) => word.trim() === "");
  if (blank !== -1) throw new RlxarFileError(wordsPath, [`line ${blank + 1}: an empty word`]);
  if (words.length === 0) throw new RlxarFileError(wordsPath, ["no words"]);
  const values = bytes.length / 2;
  if (bytes.length % 2 !== 0 || values % words.length !== 0 || values === 0)
    throw new RlxarFileError(vectorsPath, [
      `${bytes.length} bytes is not ${words.length} rows (one per word of ${WORD_VECTOR_FILES.words}) of float16 values`,
    ]);
  const dimensions = values / words.length;
  const matrix = new Float32Array(values);
  for (let i = 0; i < values; i++) {
    const value = halfToNumber(bytes.readUInt16LE(2 * i));
    if (!Number.isFinite(value))
      throw new RlxarFileError(vectorsPath, [
        `row ${Math.floor(i / dimensions) + 1} (${JSON.stringify(words[Math.floor(i / dimensions)])}), value ${(i % dimensions) + 1}: not finite`,
      ]);
    matrix[i] = value;
  }
  const rows = new Map<string, number>();
  words.forEach((word, row) => {
    const key = word.toLowerCase();
    if (!rows.has(key)) rows.set(key, row);
  });
  return {
    directory,
    dimensions,
    size: rows.size,
    vector(word) {
      const row = rows.get(word.toLowerCase());
      return row === undefined ? undefined : matrix.subarray(row * dimensions, (row + 1) * dimensions);
    },
  };
}

/** The word a token stands for when it is a whole word: its text without spaces, letters (and digits) only. */
function tokenWord(text: string): string | undefined {
  const word = text.trim();
  return /^[\p{L}\p{N}]+$/u.test(word) ? word : undefined;
}

/** Token embeddings from word vectors: which ids, their rows, and how many of the vocabulary got one. */
export interface TokenEmbeddings {
  readonly ids: readonly number[];
  readonly rows: readonly (readonly number[])[];
  /** Tokens that are whole words the vectors know, of `vocabularySize`. */
  readonly matched: number;
  readonly vocabularySize: number;
}

/**
 * The rows `mu.embed` sets for a byte-level BPE vocabulary: every token whose text is a whole
 * word the vectors know (" paris", "Founded") gets that word's vector, carried to `dModel`
 * dimensions by a seeded Gaussian projection (the identity when the widths agree; a random
 * projection keeps the vectors' angles, Johnson–Lindenstrauss) and scaled so the rows' mean norm
 * is √dModel, the norm of the N(0, 1) rows the rest of the embedding starts from. Sub-word
 * pieces, names the vectors do not know and special tokens keep their random rows.
 */
export function tokenEmbeddings(
  tokenizer: ByteBpeTokenizer,
  vectors: WordVectors,
  options: { readonly dModel: number; readonly seed?: number | string },
): TokenEmbeddings {
  const { dModel } = options;
  if (!Number.isInteger(dModel) || dModel < 1)
    throw new RlxarInputError("dModel", `expected an integer ≥ 1, got ${dModel}`);
  const found: { id: number; vector: Float32Array }[] = [];
  for (let id = 0; id < tokenizer.vocabularySize; id++) {
    const word = tokenWord(tokenizer.decode([id]));
    const vector = word === undefined ? undefined : vectors.vector(word);
    if (vector !== undefined) found.push({ id, vector });
  }
  const from = vectors.dimensions;
  let projection: Float64Array | undefined;
  if (from !== dModel) {
    const rng = createRng(options.seed ?? 0).fork("word-vector-projection");
    projection = new Float64Array(from * dModel);
    for (let i = 0; i < projection.length; i++) projection[i] = rng.normal() / Math.sqrt(dModel);
  }
  const projected = found.map(({ vector }) => {
    if (projection === undefined) return Array.from(vector);
    const row = new Array<number>(dModel).fill(0);
    for (let i = 0; i < from; i++) {
      const x = vector[i]!;
      for (let j = 0; j < dModel; j++) row[j]! += x * projection[i * dModel + j]!;
    }
    return row;
  });
  const norms = projected.map((row) => Math.hypot(...row));
  const meanNorm = norms.reduce((a, b) => a + b, 0) / Math.max(1, norms.length);
  const scale = meanNorm > 0 ? Math.sqrt(dModel) / meanNorm : 1;
  return {
    ids: found.map((f) => f.id),
    rows: projected.map((row) => row.map((x) => x * scale)),
    matched: found.length,
    vocabularySize: tokenizer.vocabularySize,
  };
}
