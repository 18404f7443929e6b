// Used only by the policy/ tests and scripts/write-policy-gradient-vectors.ts, never exported from
// the package: a seeded generator for random inputs and a central-finite-difference gradient
// check. It throws plain Errors rather than importing a test runner, so scripts can use it too.

/** mulberry32: a tiny seeded generator of uniform numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform number in [low, high). */
export function uniform(random: () => number, low: number, high: number): number {
  return low + (high - low) * random();
}

/** Rows of the given lengths filled with uniform numbers in [low, high). */
export function randomMatrix(random: () => number, lengths: readonly number[], low: number, high: number): number[][] {
  return lengths.map((n) => Array.from({ length: n }, () => uniform(random, low, high)));
}

/** A 0/1 mask of the given row lengths with roughly `keep` of the tokens kept and at least one per row. */
export function randomMask(random: () => number, lengths: readonly number[], keep = 0.7): number[][] {
  return lengths.map((n) => {
    const row = Array.from({ length: n }, () => (random() < keep ? 1 : 0));
    row[Math.floor(random() * n)] = 1;
    return row;
  });
}

/** ∂loss/∂x[k][t] by central differences with step `step`. */
export function finiteDifferenceGradient(
  loss: (x: number[][]) => number,
  x: readonly (readonly number[])[],
  step = 1e-6,
): number[][] {
  const work = x.map((row) => [...row]);
  return work.map((row) =>
    row.map((value, t) => {
      row[t] = value + step;
      const up = loss(work);
      row[t] = value - step;
      const down = loss(work);
      row[t] = value;
      return (up - down) / (2 * step);
    }),
  );
}

/** Asserts |actual − expected| ≤ rtol·max(|actual|, |expected|) + atol everywhere, naming the first miss. */
export function expectMatrixClose(
  actual: readonly (readonly number[])[],
  expected: readonly (readonly number[])[],
  rtol = 1e-5,
  atol = 1e-9,
): void {
  const shape = (m: readonly (readonly number[])[]) => m.map((row) => row.length).join(",");
  if (shape(actual) !== shape(expected)) {
    throw new Error(`row lengths differ: got [${shape(actual)}], expected [${shape(expected)}]`);
  }
  actual.forEach((row, k) =>
    row.forEach((a, t) => {
      const e = expected[k]![t]!;
      const allowed = rtol * Math.max(Math.abs(a), Math.abs(e)) + atol;
      if (!(Math.abs(a - e) <= allowed)) {
        throw new Error(`[${k}][${t}]: got ${a}, expected ${e} (difference ${Math.abs(a - e)} > ${allowed})`);
      }
    }),
  );
}

/** The gradient check every objective's test runs: analytic vs central differences. */
export function expectGradientMatches(
  loss: (x: number[][]) => number,
  x: readonly (readonly number[])[],
  analytic: readonly (readonly number[])[],
): void {
  expectMatrixClose(analytic, finiteDifferenceGradient(loss, x), 1e-5, 1e-9);
}
