import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama, type Llama, type LlamaModel, LlamaLogLevel, readGgufFileInfo, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import {
  type SentencePieceFile,
  type SentencePieceTokenizer,
  sentencePieceFileOfGguf,
  sentencePieceTokenizer,
} from "./sentencepiece.js";

// The shared 260K-parameter TinyStories model: a llama-format GGUF whose 512-piece vocabulary
// exercises merges and byte fallback alike; llama.cpp (through node-llama-cpp) is the reference.
const MODEL_PATH =
  process.env["RUBRIC_SHARED_DIR"] === undefined
    ? fileURLToPath(new URL("../../../../../shared/models/stories260K.gguf", import.meta.url))
    : join(process.env["RUBRIC_SHARED_DIR"], "models/stories260K.gguf");
// The model is part of the project's shared data: its absence is a failure, not a skip.
if (!existsSync(MODEL_PATH))
  throw new Error(`${MODEL_PATH} is missing: these tests run the real local model from ../shared/models`);

async function fileOfGguf(path: string): Promise<SentencePieceFile> {
  const g = (await readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false })).metadata.tokenizer.ggml;
  return sentencePieceFileOfGguf({
    tokens: g.tokens,
    scores: g.scores ?? [],
    types: g.token_type,
    bos: g.bos_token_id ?? 1,
    eos: g.eos_token_id ?? 2,
    unknown: g.unknown_token_id ?? 0,
    ...(g.add_space_prefix === undefined ? {} : { addSpacePrefix: g.add_space_prefix }),
  });
}

/** llama.cpp's text for ids, which node-llama-cpp types as branded numbers. */
const detokenize = (model: LlamaModel, ids: readonly number[]) => model.detokenize(ids as readonly Token[]);

/** A seeded generator (mulberry32), so the random texts are the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// Words the vocabulary merges, the characters it holds alone, and characters only bytes can carry.
const ALPHABET = [
  ..."abcdefghijklmnopqrstuvwxyzTLOS0123456789",
  ...[" ", " ", " ", "  ", "\n", "\t", "\r\n", ".", ",", "!", "?", "'", '"', "[", "]", "(", ")", ":", "-", "<", ">"],
  ...["the", "he", "was", "Once", "upon", "time", "Lily", "ing", "ed", "Search[", "Finish[", "Question:"],
  ...[
    "é",
    "ü",
    "ñ",
    "—",
    "“",
    "’",
    "€",
    "™",
    "\u00a0",
    "\u200a",
    "東",
    "京",
    "🙂",
    "👍🏽",
    "e\u0301",
    "▁",
    "\u0000",
    "\uFEFF",
  ],
];

function randomTexts(count: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    const parts = Array.from({ length: Math.floor(next() * 30) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]);
    return parts.join("");
  });
}

const TEXTS = [
  "Once upon a time",
  "Once upon a time, there was a little girl named Lily. She liked to play with her mom.",
  "The cat sat on the mat.",
  "hello world",
  "Hello World",
  "Tim and Lily went to the park. They saw a big dog!",
  "Search[Velmora Castle]",
  "Finish[yes]",
  "Finish[no]",
  "Lookup[founded]",
  "Question: Who founded the city where Anselm Kroy was born?\nObservation: Velmora: a town on the river Ast, founded in 1187 by Odo the Elder.",
  "Thought 1: I need to search Velmora.\nAction 1: Search[Velmora]\nObservation 1: Velmora is a town.",
  'Answer with {"score": 3, "reason": "ok"}',
  "a\tb\tc",
  "line one\nline two\n\nline four",
  "windows\r\nline",
  "x  y   z    w",
  "   leading spaces",
  " one leading space",
  "trailing spaces   ",
  " ",
  "  ",
  "\n",
  "3.14159 + 2 = 5.14159; 1000000",
  "(a) [b] {c} <d> |e| ~f~ `g` \\h",
  "!?.,;:'\"-–—…",
  "café Zürich — 東京 🙂",
  "naïve façade résumé",
  "Ünïcödé ß ø å æ",
  "日本語のテキスト",
  "emoji 👍🏽 family 👨‍👩‍👧 flag 🇫🇷",
  "e\u0301 vs é",
  "non\u00a0breaking and\u200ahair space",
  "a▁b literal lower one-eighth block",
  "<s> and </s> and <unk> are plain text here",
  "<0x41> is text, not a byte",
  "\uFEFFstarts with a byte order mark",
  "nul\u0000inside",
  "ingingingheheh the the the",
  "a",
  "é",
  "🙂",
];

let llama: Llama;
let model: LlamaModel;
let file: SentencePieceFile;
let tokenizer: SentencePieceTokenizer;

beforeAll(async () => {
  file = await fileOfGguf(MODEL_PATH);
  tokenizer = sentencePieceTokenizer(file);
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
  model = await llama.loadModel({ modelPath: MODEL_PATH, vocabOnly: true });
});

afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
});

describe("sentencePieceTokenizer on stories260K, against llama.cpp", () => {
  it("reads the GGUF's vocabulary: 512 pieces, <unk> <s> </s>, 256 byte pieces, merges scored -0, -1, …", () => {
    expect(tokenizer.vocabularySize).toBe(512);
    expect(file.pieces.slice(0, 5)).toEqual(["<unk>", "<s>", "</s>", "<0x00>", "<0x01>"]);
    expect(file.types.slice(0, 4)).toEqual([2, 3, 3, 6]);
    expect([file.bos, file.eos, file.unknown, file.addSpacePrefix]).toEqual([1, 2, 0, true]);
    expect(file.pieces.slice(259, 261)).toEqual(["▁t", "he"]);
    expect(file.scores.slice(259, 262)).toEqual([-0, -1, -2]);
  });

  it("llama.cpp's tokenize adds no BOS here, so encode is compared with it as is", () => {
    expect(model.tokenize("Once upon a time")[0]).not.toBe(file.bos);
    expect(tokenizer.encode("Once upon a time")).toEqual([403, 407, 261, 378]);
    expect(tokenizer.encode("")).toEqual([]);
  });

  it.each(TEXTS.map((text) => [JSON.stringify(text), text]))("encodes %s as llama.cpp does", (_, text) => {
    expect(tokenizer.encode(text)).toEqual(model.tokenize(text));
  });

  it("encodes 400 random texts over words, spaces, punctuation and non-ASCII as llama.cpp does", () => {
    for (const text of randomTexts(400, 260))
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(model.tokenize(text));
  });

  it("takes a lone UTF-16 surrogate as U+FFFD, as llama.cpp receives it", () => {
    for (const text of ["\ud800x", "a\udc00", "\ud83d", "x\ud83d\ud83d🙂"])
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(model.tokenize(text));
    expect(tokenizer.decode(tokenizer.encode("a\ud800b"))).toBe("a\uFFFDb");
  });

  it("decodes every encoded text as llama.cpp detokenizes it, and gives the text back", () => {
    for (const text of [...TEXTS, ...randomTexts(400, 261)]) {
      const ids = tokenizer.encode(text);
      expect(tokenizer.decode(ids), JSON.stringify(text)).toBe(detokenize(model, ids));
      // A "▁" in the text reads as a space: it is the same piece as an escaped space.
      expect(tokenizer.decode(ids), JSON.stringify(text)).toBe(text.replaceAll("▁", " "));
    }
  });

  it("decodes 300 random id sequences as llama.cpp does: byte runs, bad UTF-8, control ids, the first id's space", () => {
    const next = random(262);
    for (let run = 0; run < 300; run++) {
      const ids = Array.from({ length: 1 + Math.floor(next() * 12) }, () =>
        // Half the ids are byte pieces, so runs of bytes (valid UTF-8 or not) are common.
        next() < 0.5 ? 3 + Math.floor(next() * 256) : Math.floor(next() * 512),
      );
      expect(tokenizer.decode(ids), JSON.stringify(ids)).toBe(detokenize(model, ids));
    }
  });

  it("strips the dummy space from the first id only: after a leading <s> or <unk> the space stays", () => {
    const hi = tokenizer.encode("hi"); // ▁h i
    expect(tokenizer.decode(hi)).toBe("hi");
    expect(tokenizer.decode([file.bos, ...hi])).toBe(" hi");
    expect(tokenizer.decode([file.unknown, ...hi])).toBe(" hi");
    expect(tokenizer.decode([3 + 0x20, ...hi])).toBe(" hi"); // a byte-piece space is stripped too
    expect(tokenizer.decode([...hi, file.eos])).toBe("hi");
    for (const ids of [
      [file.bos, ...hi],
      [file.unknown, ...hi],
      [3 + 0x20, ...hi],
      [...hi, file.eos],
    ])
      expect(tokenizer.decode(ids)).toBe(detokenize(model, ids));
  });

  it("encodes and round-trips a 64 KB text", () => {
    const next = random(263);
    let text = "";
    while (text.length < 64 * 1024) text += `${TEXTS[Math.floor(next() * TEXTS.length)]} `;
    const ids = tokenizer.encode(text);
    expect(ids).toEqual(model.tokenize(text));
    expect(tokenizer.decode(ids)).toBe(text.replaceAll("▁", " "));
  });
});

describe("sentencePieceTokenizer with user-defined pieces, against llama.cpp", () => {
  // stories260K with "he", "é" and "▁the" retyped as user-defined (type 4): llama.cpp cuts the
  // text at them before SentencePiece runs, and writes them back verbatim.
  const RETYPED = ["he", "é", "▁the"];
  let directory: string;
  let patched: LlamaModel;
  let patchedTokenizer: SentencePieceTokenizer;

  beforeAll(async () => {
    const bytes = readFileSync(MODEL_PATH);
    // tokenizer.ggml.token_type: GGUF array of INT32 (type 5), 512 of them, opening 2, 3, 3, 6.
    const header = Buffer.alloc(28);
    header.writeUInt32LE(5, 0);
    header.writeBigUInt64LE(512n, 4);
    [2, 3, 3, 6].forEach((type, i) => header.writeInt32LE(type, 12 + 4 * i));
    const at = bytes.indexOf(header);
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf(header, at + 1)).toBe(-1);
    for (const piece of RETYPED) bytes.writeInt32LE(4, at + 12 + 4 * file.pieces.indexOf(piece));
    directory = mkdtempSync(join(tmpdir(), "sentencepiece-"));
    const path = join(directory, "stories260K-user-defined.gguf");
    writeFileSync(path, bytes);
    const retyped = await fileOfGguf(path);
    expect(RETYPED.map((piece) => retyped.types[retyped.pieces.indexOf(piece)])).toEqual([4, 4, 4]);
    patchedTokenizer = sentencePieceTokenizer(retyped);
    patched = await llama.loadModel({ modelPath: path, vocabOnly: true });
  });

  afterAll(async () => {
    await patched?.dispose();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it("cuts the text at them, with a space prefix after each, and decodes them verbatim", () => {
    const texts = [
      "the hen said hello",
      "he",
      "he is here",
      "café hehe",
      "x▁they▁the",
      "she went home. The end.",
      ...randomTexts(200, 264),
    ];
    for (const text of texts) {
      const ids = patchedTokenizer.encode(text);
      expect(ids, JSON.stringify(text)).toEqual(patched.tokenize(text));
      expect(patchedTokenizer.decode(ids), JSON.stringify(text)).toBe(detokenize(patched, ids));
    }
    const he = file.pieces.indexOf("he");
    expect(patchedTokenizer.encode("the")).toEqual([...tokenizer.encode("t"), he]);
  });
});

/** A handmade vocabulary: <unk> <s> </s>, the 256 byte pieces, then `pieces` with their scores. */
function handmade(pieces: [string, number][], addSpacePrefix = false): SentencePieceFile {
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
  return {
    kind: "sentencepiece",
    version: 1,
    pieces: ["<unk>", "<s>", "</s>", ...bytes, ...pieces.map(([piece]) => piece)],
    scores: [0, 0, 0, ...bytes.map(() => 0), ...pieces.map(([, score]) => score)],
    types: [2, 3, 3, ...bytes.map(() => 6), ...pieces.map(() => 1)],
    bos: 1,
    eos: 2,
    unknown: 0,
    addSpacePrefix,
  };
}

describe("the merge order", () => {
  it("joins the pair of highest score first and the leftmost pair on ties; other symbols fall back to bytes", () => {
    // ids: a 259, b 260, c 261, ab 262, bc 263
    const scored = sentencePieceTokenizer(
      handmade([
        ["a", 0],
        ["b", 0],
        ["c", 0],
        ["ab", -1],
        ["bc", 0],
      ]),
    );
    expect(scored.encode("abc")).toEqual([259, 263]);
    const tied = sentencePieceTokenizer(
      handmade([
        ["a", 0],
        ["b", 0],
        ["c", 0],
        ["ab", 0],
        ["bc", 0],
      ]),
    );
    expect(tied.encode("abc")).toEqual([262, 261]);
    expect(tied.encode("xa")).toEqual([3 + 0x78, 259]);
    expect(tied.encode("é")).toEqual([3 + 0xc3, 3 + 0xa9]);
    expect(tied.decode([3 + 0xc3, 3 + 0xa9, 262])).toBe("éab");
  });

  it("joins a pair only while both halves are what they were when it was queued", () => {
    // "abcd": bc (score 0) joins first; the queued ab (-1) is stale then (its b has grown), and a + bc → abc (-2) joins.
    const tokenizer = sentencePieceTokenizer(
      handmade([
        ["a", 0],
        ["b", 0],
        ["c", 0],
        ["d", 0],
        ["bc", 0],
        ["ab", -1],
        ["abc", -2],
        ["cd", -3],
      ]),
    );
    expect(tokenizer.encode("abcd")).toEqual([265, 262]);
  });

  it("adds the space prefix only when asked, and only to a text that is not empty", () => {
    const pieces: [string, number][] = [
      ["▁", 0],
      ["x", 0],
      ["▁x", 0],
    ];
    expect(sentencePieceTokenizer(handmade(pieces, true)).encode("x")).toEqual([261]);
    expect(sentencePieceTokenizer(handmade(pieces, false)).encode("x")).toEqual([260]);
    expect(sentencePieceTokenizer(handmade(pieces, false)).encode(" x")).toEqual([261]);
    expect(sentencePieceTokenizer(handmade(pieces, true)).encode("")).toEqual([]);
    expect(sentencePieceTokenizer(handmade(pieces, false)).decode([261])).toBe(" x");
    expect(sentencePieceTokenizer(handmade(pieces, true)).decode([261])).toBe("x");
  });
});

describe("the tokenizer file", () => {
  it("refuses a faulty file, naming the field", () => {
    const good = handmade([["ab", 0]]);
    const fails = (value: unknown, message: RegExp) => {
      expect(() => sentencePieceTokenizer(value)).toThrow(ArcoInputError);
      expect(() => sentencePieceTokenizer(value)).toThrow(message);
    };
    fails({ ...good, scores: good.scores.slice(1) }, /^tokenizer: scores: expected 260 scores, one per piece, got 259/);
    fails({ ...good, types: [...good.types, 1] }, /tokenizer: types: expected 260 types, one per piece, got 261/);
    fails({ ...good, bos: 260 }, /tokenizer: bos: expected an id in \[0, 260\), got 260/);
    fails({ ...good, unknown: -1 }, /tokenizer: unknown: expected an id in \[0, 260\), got -1/);
    const noA = good.pieces.map((piece) => (piece === "<0x41>" ? "A" : piece));
    fails(
      { ...good, pieces: noA },
      /pieces\[68\]: a byte piece \(type 6\) must read "<0xXX>".*; pieces: byte fallback needs .* 1 missing: <0x41>/,
    );
    fails({ ...good, types: good.types.map((type, id) => (id === 3 ? 1 : type)) }, /pieces: .*1 missing: <0x00>$/);
    fails({ ...good, pieces: [...good.pieces.slice(0, -1), "<s>"] }, /pieces\[259\]: "<s>" is also id 1/);
    fails({ ...good, pieces: [...good.pieces.slice(0, -1), ""] }, /pieces\[259\]: Too small/);
    fails({ ...good, kind: "byte-bpe" }, /tokenizer: kind/);
    fails({ ...good, extra: 1 }, /tokenizer: \(root\): Unrecognized key/);
  });

  it("names the GGUF metadata field when the metadata is faulty, and reads an empty token as llama.cpp does", () => {
    const good = handmade([["ab", 0]]);
    const metadata = { tokens: good.pieces, scores: good.scores, types: good.types, bos: 1, eos: 2, unknown: 0 };
    expect(sentencePieceFileOfGguf(metadata).addSpacePrefix).toBe(true);
    expect(sentencePieceFileOfGguf({ ...metadata, addSpacePrefix: false }).addSpacePrefix).toBe(false);
    expect(sentencePieceFileOfGguf({ ...metadata, tokens: [...good.pieces.slice(0, -1), ""] }).pieces.at(-1)).toBe(
      "[EMPTY_259]",
    );
    expect(() => sentencePieceFileOfGguf({ ...metadata, tokens: [...good.pieces.slice(0, -1), "<s>"] })).toThrow(
      /^metadata: tokens\[259\]: "<s>" is also id 1/,
    );
    expect(() => sentencePieceFileOfGguf({ ...metadata, eos: 999 })).toThrow(/metadata: eos: expected an id/);
  });

  it("refuses an id out of range when decoding, naming its index", () => {
    const tokenizer = sentencePieceTokenizer(handmade([]));
    expect(() => tokenizer.decode([3, 259])).toThrow(ArcoInputError);
    expect(() => tokenizer.decode([3, 259])).toThrow(/^ids\[1\]: expected an id in \[0, 259\), got 259/);
    expect(() => tokenizer.decode([-1])).toThrow(/ids\[0\]: expected an id in \[0, 259\), got -1/);
    expect(() => tokenizer.decode([3, 4, 1.5])).toThrow(/ids\[2\]: .* got 1.5/);
  });

  it("gives back, as a copy, the file it was built from", () => {
    const copy = tokenizer.toFile();
    expect(copy).toEqual(file);
    copy.pieces[260] = "zz";
    copy.scores[259] = 5;
    expect(tokenizer.toFile()).toEqual(file);
    const again = sentencePieceTokenizer(tokenizer.toFile());
    for (const text of TEXTS) expect(again.encode(text)).toEqual(tokenizer.encode(text));
  });
});
