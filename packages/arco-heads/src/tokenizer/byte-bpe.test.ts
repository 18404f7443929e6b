import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import { BOS_ID, byteBpeTokenizer, EOS_ID, PAD_ID, trainByteBpe } from "./byte-bpe.js";

const a = "a".charCodeAt(0) + 3;
const b = "b".charCodeAt(0) + 3;
const c = "c".charCodeAt(0) + 3;
const d = "d".charCodeAt(0) + 3;
const file = (merges: [number, number][]) => ({
  kind: "byte-bpe" as const,
  version: 1 as const,
  specials: ["<pad>", "<bos>", "<eos>"] as ["<pad>", "<bos>", "<eos>"],
  merges,
});

describe("byteBpeTokenizer", () => {
  it("without merges gives byte ids (byte + 3), UTF-8 for what is not ASCII, and decodes them back", () => {
    const tokenizer = byteBpeTokenizer(file([]));
    expect(tokenizer.vocabularySize).toBe(259);
    expect(tokenizer.encode("ab")).toEqual([a, b]);
    expect(tokenizer.encode("é")).toEqual([0xc3 + 3, 0xa9 + 3]);
    expect(tokenizer.decode([BOS_ID, a, b, EOS_ID, PAD_ID])).toBe("ab");
  });

  it("applies merges lowest rank first, left to right: a shared test vector for the sidecar", () => {
    // merge 0: (a, b) → 259 "ab"; merge 1: (259, 259) → 260 "abab".
    const tokenizer = byteBpeTokenizer(
      file([
        [a, b],
        [259, 259],
      ]),
    );
    expect(tokenizer.encode("ababab")).toEqual([260, 259]);
    expect(tokenizer.encode("abxab")).toEqual([259, "x".charCodeAt(0) + 3, 259]);
    expect(tokenizer.decode([260, 259])).toBe("ababab");
  });

  it("refuses a merge naming an id that does not exist yet, and an id out of range when decoding", () => {
    expect(() => byteBpeTokenizer(file([[a, 259]]))).toThrow(ArcoInputError);
    expect(() => byteBpeTokenizer(file([[a, 259]]))).toThrow(/merges\[0\]: merge 0 may join only ids below 259/);
    expect(() => byteBpeTokenizer({ ...file([]), kind: "wordpiece" })).toThrow(/tokenizer: kind/);
    expect(() => byteBpeTokenizer(file([])).decode([259])).toThrow(/ids\[0\]: expected an id in \[0, 259\), got 259/);
  });
});

/** The encoder as its doc specifies it, round by round: the reference the heap-based encoder must equal. */
function referenceEncode(text: string, merges: readonly [number, number][]): number[] {
  let ids = Array.from(new TextEncoder().encode(text), (byte) => byte + 3);
  const rankOf = (x: number, y: number) => merges.findIndex(([p, q]) => p === x && q === y);
  for (;;) {
    let best = -1;
    for (let i = 0; i + 1 < ids.length; i++) {
      const r = rankOf(ids[i]!, ids[i + 1]!);
      if (r !== -1 && (best === -1 || r < best)) best = r;
    }
    if (best === -1) return ids;
    const out: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      if (i + 1 < ids.length && rankOf(ids[i]!, ids[i + 1]!) === best) {
        out.push(259 + best);
        i++;
      } else out.push(ids[i]!);
    }
    ids = out;
  }
}

describe("the encoder", () => {
  it("gives exactly the round-by-round result on any text, with merges learnt from related texts", () => {
    const alphabet = fc.constantFrom("a", "b", "ab", "aa", "ba ", " ", "é", "Search[", "]");
    const text = fc.array(alphabet, { maxLength: 40 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 6 }), text, (corpus, probe) => {
        const merges = trainByteBpe(corpus, 320).merges;
        const tokenizer = byteBpeTokenizer(file(merges));
        for (const sample of [probe, ...corpus])
          expect(tokenizer.encode(sample)).toEqual(referenceEncode(sample, merges));
      }),
      { numRuns: 300, seed: 14 },
    );
  });
});

describe("trainByteBpe", () => {
  it("merges the most frequent pair, ties to the smallest pair, and stops when no pair repeats", () => {
    expect(trainByteBpe(["abab"], 300).merges).toEqual([[a, b]]);
    expect(trainByteBpe(["cd", "ab", "cd", "ab"], 300).merges).toEqual([
      [a, b],
      [c, d],
    ]);
    expect(trainByteBpe(["cd", "ab", "cd", "ab"], 260).merges).toEqual([[a, b]]);
    expect(trainByteBpe(["abcd"], 300).merges).toEqual([]);
    expect(() => trainByteBpe(["ab"], 100)).toThrow(/vocabularySize: expected an integer in \[259, /);
  });

  it("shortens the text it learnt from, and the file loads back to the same tokenizer", () => {
    const corpus = Array.from(
      { length: 20 },
      (_, i) => `Action: Search[museum ${i}]\nObservation: The museum is in Lyon.`,
    );
    const trained = trainByteBpe(corpus, 320);
    const tokenizer = byteBpeTokenizer(JSON.parse(JSON.stringify(trained)));
    // It stops early (54 merges): by then no pair repeats in this corpus.
    expect(tokenizer.vocabularySize).toBe(313);
    const ids = tokenizer.encode(corpus[3]!);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(corpus[3]!).length / 3);
    expect(tokenizer.decode(ids)).toBe(corpus[3]);
    expect(tokenizer.toFile()).toEqual(trained);
  });

  it("round-trips any text, with merges learnt on any corpus", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 30 }), { minLength: 1, maxLength: 6 }),
        fc.string({ unit: "grapheme", maxLength: 60 }),
        fc.integer({ min: 259, max: 300 }),
        (corpus, text, size) => {
          const tokenizer = byteBpeTokenizer(trainByteBpe(corpus, size));
          for (const sample of [...corpus, text]) {
            const ids = tokenizer.encode(sample);
            if (tokenizer.decode(ids) !== sample) return false;
            if (ids.some((id) => id < 3 || id >= tokenizer.vocabularySize)) return false;
          }
          return true;
        },
      ),
      { seed: 14, numRuns: 200 },
    );
  });
});
