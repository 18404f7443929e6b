export { RandomInputError } from "./errors.js";
export { createRng, restoreRng, sampleWithReplacement, shuffle } from "./rng.js";
export type { Rng, RngState } from "./rng.js";
