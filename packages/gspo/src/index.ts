/**
 * @rubric/gspo — SFT + GSPO training of the rubric manager, and test-time guidance by rubrics.
 * This file is the package's only public door.
 *
 * So far: test-time guidance (best-of-K, importance resampling, beam search), the in-process
 * rubric policy with exact per-token log-probabilities, SFT, and GSPO batches in the gym. The
 * trainer loop (checkpoints, logs), the sidecar backend and the ARCANE reproduction land with issue #5.
 */
export { beamSearch, bestOfK, importanceResample, resampleIndex, scoreCandidates, splitSegments, type GuidanceOptions, type ScoredCandidate } from "./guidance/guidance.js";

// policy: the in-process rubric-writing manager and Stage I (SFT)
export { featurize, type Features } from "./policy/features.js";
export { RubricPolicy, WEIGHT_BINS, type RubricAction } from "./policy/rubric-policy.js";
export { Adam, sftLoss, trainSft, type SftItem } from "./policy/sft.js";

// training: Stage II (GSPO) in the rubric gym
export { expectedReturn, gspoBatch, policyObjective, rubricReturn, type GspoOptions, type Objective, type TrainingTask } from "./training/gspo.js";
