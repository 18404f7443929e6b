/**
 * @rubric/hackbench — package skeleton.
 *
 * This package will hold reward-hacking probes with known-positive and known-negative cases for any scorer built from `@rubric/core` and `@rubric/verifiers`. Nothing is exported yet: the implementation lands with
 * issue #7. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
