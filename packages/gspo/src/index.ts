/**
 * @rubric/gspo — package skeleton.
 *
 * This package will hold SFT and GSPO training of the rubric manager and test-time guidance (best-of-N, importance resampling, search). Nothing is exported yet: the implementation lands with
 * issue #5. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
