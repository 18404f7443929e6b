import { RandomInputError } from "./errors.js";

/*
 * Generator: xoshiro128** 1.0 (Blackman & Vigna, 2018), 32-bit words so it runs on plain JS
 * numbers without BigInt in the hot path. Its 128-bit state is filled from two SplitMix64
 * outputs, as the xoshiro authors recommend, so that similar seeds give unrelated states.
 * Each stream also carries a 64-bit key (the SplitMix64 seed); forks hash the key with their
 * label, so a fork depends only on where it sits in the fork tree, never on how many numbers
 * the parent has drawn. That keeps experiments reproducible when unrelated code adds draws.
 */

const ALGORITHM = "xoshiro128**";
const MASK_64 = (1n << 64n) - 1n;
const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/** Plain, JSON-serialisable snapshot of a stream: resuming from it replays the same numbers and forks. */
export interface RngState {
  readonly algorithm: typeof ALGORITHM;
  /** The four 32-bit state words, unsigned. */
  readonly words: readonly [number, number, number, number];
  /** The stream's 64-bit fork key as 16 hex digits; fixed for the life of the stream. */
  readonly key: string;
}

/** A seeded, reproducible stream of random numbers. Not cryptographically secure. */
export interface Rng {
  /** Uniform in [0, 1) with 53 random bits (consumes two 32-bit outputs). */
  next(): number;
  /** Uniform integer in [0, maxExclusive), without modulo bias; 1 ≤ maxExclusive ≤ 2^53. */
  int(maxExclusive: number): number;
  /** Standard normal (mean 0, sd 1) by Box–Muller. */
  normal(): number;
  /** The raw next 32-bit output of xoshiro128**, unsigned. */
  uint32(): number;
  /** An independent stream determined by this stream's key and `label` alone. */
  fork(label: string): Rng;
  /** A snapshot that `restoreRng` turns back into an identical stream. */
  state(): RngState;
}

/**
 * Creates a seeded generator (xoshiro128**, seeded through SplitMix64).
 * Number seeds must be safe integers; string seeds are hashed (FNV-1a 64 over UTF-8).
 *
 * @example
 * const rng = createRng(42);
 * rng.next(); // same value on every run and platform
 * const dice = rng.int(6) + 1;
 * const perRubric = rng.fork("rubric-7"); // independent of how many draws rng made
 */
export function createRng(seed: number | string): Rng {
  return streamFromKey(seedKey(seed));
}

/**
 * Rebuilds a generator from `rng.state()`, continuing exactly where the snapshot was taken.
 *
 * @example
 * const a = createRng("exp-1");
 * a.next();
 * const b = restoreRng(a.state());
 * a.next() === b.next(); // true
 */
export function restoreRng(state: RngState): Rng {
  if (state.algorithm !== ALGORITHM)
    throw new RandomInputError(`state.algorithm must be "${ALGORITHM}", got ${JSON.stringify(state.algorithm)}`);
  if (!/^[0-9a-f]{16}$/.test(state.key))
    throw new RandomInputError(`state.key must be 16 lowercase hex digits, got ${JSON.stringify(state.key)}`);
  const words = state.words.map((word, index) => {
    if (!Number.isInteger(word) || word < 0 || word >= TWO_POW_32)
      throw new RandomInputError(`state.words[${index}] must be an unsigned 32-bit integer, got ${word}`);
    return word;
  });
  if (words.length !== 4) throw new RandomInputError(`state.words must hold 4 words, got ${words.length}`);
  if (words.every((word) => word === 0))
    throw new RandomInputError("state.words must not be all zero (xoshiro's one fixed point)");
  return new Xoshiro128StarStar(words as [number, number, number, number], BigInt(`0x${state.key}`));
}

/**
 * Returns a shuffled copy (Fisher–Yates); the input is left untouched.
 *
 * @example
 * shuffle([1, 2, 3, 4], createRng(1)); // a permutation of [1, 2, 3, 4], the same one every run
 */
export function shuffle<T>(array: readonly T[], rng: Rng): T[] {
  const result = array.slice();
  for (let i = result.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const held = result[i] as T;
    result[i] = result[j] as T;
    result[j] = held;
  }
  return result;
}

/**
 * Draws `size` indices uniformly from 0..n-1 with replacement (a bootstrap resample of
 * positions); `size` defaults to `n`.
 *
 * @example
 * const values = [3, 1, 4, 1, 5];
 * const resample = sampleWithReplacement(values.length, createRng(7)).map((i) => values[i]!);
 */
export function sampleWithReplacement(n: number, rng: Rng, size: number = n): number[] {
  if (!Number.isSafeInteger(n) || n < 1) throw new RandomInputError(`n must be an integer ≥ 1, got ${n}`);
  if (!Number.isSafeInteger(size) || size < 0) throw new RandomInputError(`size must be an integer ≥ 0, got ${size}`);
  const indices = new Array<number>(size);
  for (let i = 0; i < size; i++) indices[i] = rng.int(n);
  return indices;
}

class Xoshiro128StarStar implements Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(
    words: readonly [number, number, number, number],
    private readonly key: bigint,
  ) {
    [this.s0, this.s1, this.s2, this.s3] = words.map((word) => word | 0) as [number, number, number, number];
  }

  uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9);
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result >>> 0;
  }

  next(): number {
    return this.bits53() / TWO_POW_53;
  }

  int(maxExclusive: number): number {
    if (!Number.isInteger(maxExclusive) || maxExclusive < 1 || maxExclusive > TWO_POW_53)
      throw new RandomInputError(`maxExclusive must be an integer in [1, 2^53], got ${maxExclusive}`);
    // Rejection keeps every residue equally likely: only the largest multiple of
    // maxExclusive below the draw range is accepted.
    if (maxExclusive <= TWO_POW_32) {
      const limit = TWO_POW_32 - (TWO_POW_32 % maxExclusive);
      let draw = this.uint32();
      while (draw >= limit) draw = this.uint32();
      return draw % maxExclusive;
    }
    const limit = TWO_POW_53 - (TWO_POW_53 % maxExclusive);
    let draw = this.bits53();
    while (draw >= limit) draw = this.bits53();
    return draw % maxExclusive;
  }

  normal(): number {
    // One value per call (the sine partner is dropped) so that state() is just the four words.
    const radius = Math.sqrt(-2 * Math.log(1 - this.next())); // 1 - next() ∈ (0, 1]: log never sees 0
    return radius * Math.cos(2 * Math.PI * this.next());
  }

  fork(label: string): Rng {
    return streamFromKey(forkKey(this.key, label));
  }

  state(): RngState {
    return {
      algorithm: ALGORITHM,
      words: [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0],
      key: this.key.toString(16).padStart(16, "0"),
    };
  }

  private bits53(): number {
    const high = this.uint32() >>> 5;
    const low = this.uint32() >>> 6;
    return high * 67108864 + low;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

function streamFromKey(key: bigint): Rng {
  let splitmix = key;
  const draw = (): bigint => {
    splitmix = (splitmix + 0x9e3779b97f4a7c15n) & MASK_64;
    return mix64(splitmix);
  };
  const first = draw();
  const second = draw();
  const words: [number, number, number, number] = [
    Number(first & 0xffffffffn),
    Number(first >> 32n),
    Number(second & 0xffffffffn),
    Number(second >> 32n),
  ];
  // Two consecutive SplitMix64 outputs are never both zero in practice, but the all-zero
  // state would emit zeros forever, so rule it out explicitly.
  if (words.every((word) => word === 0)) words[0] = 1;
  return new Xoshiro128StarStar(words, key);
}

/** SplitMix64's output function (Stafford's "Mix13" variant). */
function mix64(value: bigint): bigint {
  let z = value;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return z ^ (z >> 31n);
}

function seedKey(seed: number | string): bigint {
  if (typeof seed === "string") return fnv1a64(new TextEncoder().encode(seed));
  if (!Number.isSafeInteger(seed)) throw new RandomInputError(`seed must be a safe integer or a string, got ${seed}`);
  return BigInt.asUintN(64, BigInt(seed));
}

function forkKey(parent: bigint, label: string): bigint {
  const labelBytes = new TextEncoder().encode(label);
  const bytes = new Uint8Array(8 + labelBytes.length);
  for (let i = 0; i < 8; i++) bytes[i] = Number((parent >> BigInt(8 * i)) & 0xffn);
  bytes.set(labelBytes, 8);
  // FNV alone avalanches poorly; the SplitMix mixer spreads nearby labels ("a", "b") apart.
  return mix64(fnv1a64(bytes));
}

function fnv1a64(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & MASK_64;
  return hash;
}
