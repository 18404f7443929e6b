/**
 * `@rubric/core/effect` — the one bridge from Effect programs to plain promises, shared by every
 * package that runs Effect inside (sandboxes, sidecar, providers, engine, hackbench, dialogue).
 *
 * A subpath of its own, not the main door: `import("effect")` costs ~350 ms cold against ~70 ms
 * for the whole of `@rubric/core` (measured on Node 20 here), and core's main door stays free of
 * Effect for users who only score rubrics.
 */
export { runEffect } from "./run-effect.js";
