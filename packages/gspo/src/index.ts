/**
 * @rubric/gspo — SFT + GSPO training of the rubric manager, and test-time guidance by rubrics.
 * This file is the package's only public door.
 *
 * So far: test-time guidance (best-of-K, importance resampling, beam search). Training and the
 * ARCANE reproduction land with issue #5.
 */
export { beamSearch, bestOfK, importanceResample, resampleIndex, scoreCandidates, splitSegments, type GuidanceOptions, type ScoredCandidate } from "./guidance/guidance.js";
