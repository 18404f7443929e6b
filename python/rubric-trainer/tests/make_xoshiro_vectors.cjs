// Writes xoshiro_vectors.json from the built @rubric/core, the reference that rubric_trainer.xoshiro must match:
//   pnpm exec turbo run build --filter @rubric/core && node python/rubric-trainer/tests/make_xoshiro_vectors.cjs
const { writeFileSync } = require("node:fs");
const { join } = require("node:path");
const { createRng, restoreRng } = require(join(__dirname, "../../../packages/core/dist/index.cjs"));

const draw = (state, method) => {
  const rng = restoreRng(state);
  return Array.from({ length: 8 }, () => rng[method]());
};
const states = [0, 1, 42, "mu-generate", 9007199254740991].map((seed) => ({ seed, state: createRng(seed).state() }));
// Top bits set in every word, where JavaScript's signed 32-bit arithmetic differs from naive unsigned code.
states.push({
  seed: null,
  state: { algorithm: "xoshiro128**", words: [0xffffffff, 0x80000000, 0xfffffffe, 0x80000001], key: "0000000000000001" },
});
const cases = states.map(({ seed, state }) => ({ seed, state, uint32: draw(state, "uint32"), next: draw(state, "next") }));
const text = `${JSON.stringify({ source: "tests/make_xoshiro_vectors.cjs", cases })
  .replace(/\{"seed"/g, '\n{"seed"')
  .replace(/\]\}$/, "\n]}")}\n`;
writeFileSync(join(__dirname, "xoshiro_vectors.json"), text);
