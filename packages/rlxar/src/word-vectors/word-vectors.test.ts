import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { byteBpeTokenizer, trainByteBpe } from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RlxarFileError } from "../errors.js";
import { createMu } from "../mu/sidecar-mu.js";
import { readWordVectors, tokenEmbeddings, type WordVectors } from "./word-vectors.js";

const GLOVE = fileURLToPath(new URL("../../../../../shared/models/glove-6b-100d", import.meta.url));
const TIMEOUT_MS = 120_000;

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
};

/** A word-vector directory of `rows` (each a list of numbers), written as float16. */
async function writeVectors(dir: string, words: string[], rows: number[][] | Buffer): Promise<void> {
  await writeFile(join(dir, "words.txt"), `${words.join("\n")}\n`);
  if (Buffer.isBuffer(rows)) {
    await writeFile(join(dir, "vectors.f16"), rows);
    return;
  }
  // Values exactly representable in float16 (multiples of 1/8 under 16), encoded by hand.
  const half = (x: number) => {
    if (x === 0) return 0;
    const sign = x < 0 ? 0x8000 : 0;
    const exponent = Math.floor(Math.log2(Math.abs(x)));
    const fraction = Math.round((Math.abs(x) / 2 ** exponent - 1) * 1024);
    return sign | ((exponent + 15) << 10) | fraction;
  };
  const buffer = Buffer.alloc(rows.flat().length * 2);
  rows.flat().forEach((x, i) => buffer.writeUInt16LE(half(x), 2 * i));
  await writeFile(join(dir, "vectors.f16"), buffer);
}

describe("readWordVectors", () => {
  let glove: WordVectors;
  let dir: string;
  beforeAll(async () => {
    glove = await readWordVectors(GLOVE);
    dir = await mkdtemp(join(tmpdir(), "rlxar-vectors-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reads the shared GloVe subset: 100 dimensions, GloVe's own values, neighbours that make sense", () => {
    expect(glove.dimensions).toBe(100);
    expect(glove.size).toBeGreaterThan(56_000);
    // The vector of "the" begins −0.038194, −0.24487, 0.72812 (float16 within 5e-4).
    const the = glove.vector("the")!;
    expect(the[0]).toBeCloseTo(-0.038194, 3);
    expect(the[1]).toBeCloseTo(-0.24487, 3);
    expect(the[2]).toBeCloseTo(0.72812, 3);
    // Looked up lower-cased, and absent words are undefined (not a zero vector).
    expect(glove.vector("Paris")).toEqual(glove.vector("paris"));
    expect(glove.vector("zorvexlabs")).toBeUndefined();
    const paris = glove.vector("paris")!;
    expect(cosine(paris, glove.vector("france")!)).toBeGreaterThan(cosine(paris, glove.vector("banana")!) + 0.3);
  });

  it("decodes float16 by hand: signs, fractions, subnormal-free values", async () => {
    await writeVectors(
      dir,
      ["a", "b"],
      [
        [1, -2.5],
        [0.125, 0],
      ],
    );
    const vectors = await readWordVectors(dir);
    expect(vectors.dimensions).toBe(2);
    expect(Array.from(vectors.vector("a")!)).toEqual([1, -2.5]);
    expect(Array.from(vectors.vector("b")!)).toEqual([0.125, 0]);
  });

  it("refuses a matrix that is not a whole row per word, an empty word, a missing file or a non-finite value", async () => {
    await writeVectors(dir, ["a", "b"], Buffer.alloc(6));
    await expect(readWordVectors(dir)).rejects.toThrow(/vectors\.f16: 6 bytes is not 2 rows/);
    await writeVectors(dir, ["a", "", "c"], Buffer.alloc(12));
    await expect(readWordVectors(dir)).rejects.toThrow(/words\.txt: line 2: an empty word/);
    const infinity = Buffer.alloc(4);
    infinity.writeUInt16LE(0x7c00, 2);
    await writeVectors(dir, ["a", "b"], infinity);
    await expect(readWordVectors(dir)).rejects.toThrow(/row 2 \("b"\), value 1: not finite/);
    const missing = join(dir, "nowhere");
    const error = await readWordVectors(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RlxarFileError);
    expect((error as RlxarFileError).message).toContain(join(missing, "words.txt"));
  });

  describe("tokenEmbeddings", () => {
    // Words in many orders, so that some become whole tokens; the made-up names never reach GloVe.
    const words = ["capital", "country", "city", "river", "founder", "company", "university", "film"];
    const texts = Array.from(
      { length: 64 },
      (_, i) => `${words.map((_, j) => words[(i * 3 + j * (1 + (i % 5))) % words.length]).join(" ")} Zorvex${i}`,
    );
    const tokenizer = byteBpeTokenizer(trainByteBpe(texts, 400));
    const wordOf = (id: number) => tokenizer.decode([id]).trim();

    it("gives whole words their vectors (same width: the vectors themselves, rescaled) and leaves pieces random", () => {
      const embedded = tokenEmbeddings(tokenizer, glove, { dModel: 100 });
      expect(embedded.matched).toBe(embedded.ids.length);
      expect(embedded.ids.map(wordOf)).toEqual(expect.arrayContaining(["capital", "film"]));
      expect(embedded.matched).toBeLessThan(tokenizer.vocabularySize);
      // Every matched token is a whole word GloVe knows; the special tokens and pieces are not.
      for (const id of embedded.ids) expect(glove.vector(wordOf(id))).toBeDefined();
      expect(embedded.ids).not.toContain(0);
      expect(embedded.ids.map(wordOf).some((w) => w.startsWith("zorvex"))).toBe(false);
      // Same width: the identity up to one scale, so cosines are GloVe's exactly.
      const [a, b] = [0, embedded.ids.length - 1];
      expect(cosine(embedded.rows[a]!, embedded.rows[b]!)).toBeCloseTo(
        cosine(glove.vector(wordOf(embedded.ids[a]!))!, glove.vector(wordOf(embedded.ids[b]!))!),
        6,
      );
      const meanNorm = embedded.rows.reduce((sum, r) => sum + Math.hypot(...r), 0) / embedded.rows.length;
      expect(meanNorm).toBeCloseTo(10, 6);
    });

    it("projects to another width with a seeded projection that keeps the vectors' angles roughly", () => {
      const a = tokenEmbeddings(tokenizer, glove, { dModel: 48, seed: 3 });
      const b = tokenEmbeddings(tokenizer, glove, { dModel: 48, seed: 3 });
      const c = tokenEmbeddings(tokenizer, glove, { dModel: 48, seed: 4 });
      expect(a.rows).toEqual(b.rows);
      expect(a.rows).not.toEqual(c.rows);
      expect(a.rows[0]).toHaveLength(48);
      const pairs = a.ids.flatMap((x, i) => a.ids.slice(i + 1).map((y, j) => [i, i + 1 + j, x, y] as const));
      const errors = pairs.map(([i, j, x, y]) =>
        Math.abs(cosine(a.rows[i]!, a.rows[j]!) - cosine(glove.vector(wordOf(x))!, glove.vector(wordOf(y))!)),
      );
      expect(errors.reduce((s, e) => s + e, 0) / errors.length).toBeLessThan(0.15);
    });
  });
});

describe("createMu with word vectors (the sidecar's mu.embed)", () => {
  let client: SidecarClient;
  let root: string;
  beforeAll(async () => {
    client = await SidecarClient.start({ threads: 1 });
    root = await mkdtemp(join(tmpdir(), "rlxar-mu-vectors-"));
  }, TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await rm(root, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    "sets the matched rows before training, so the same seed gives other weights, and says how many",
    async () => {
      const glove = await readWordVectors(GLOVE);
      const corpus = [
        {
          task: "Which city is the capital of the country?",
          history: [],
          budgetLeft: 3,
          action: "Search[capital city]",
        },
      ];
      const options = {
        k: 3,
        seed: 5,
        shape: { dModel: 32, heads: 4, layers: 1, maxSequence: 512 },
        vocabularySize: 400,
        corpus,
      };
      let told: { matched: number; vocabularySize: number } | undefined;
      const plain = await createMu(client, join(root, "plain"), options);
      const plainPrint = (await plain.mu.fingerprint()).fingerprint;
      const pretrained = await createMu(client, join(root, "glove"), {
        ...options,
        wordVectors: glove,
        onEmbedded: (e) => {
          told = e;
        },
      });
      expect(told!.vocabularySize).toBeLessThanOrEqual(400);
      expect(told!.matched).toBeGreaterThan(10);
      const { fingerprint, steps } = await pretrained.mu.fingerprint();
      expect(fingerprint).not.toBe(plainPrint);
      expect(steps).toBe(0);
    },
    TIMEOUT_MS,
  );
});
