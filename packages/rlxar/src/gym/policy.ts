import { CandidateTraceSchema, type CandidateTrace, LogLinearPolicy } from "../policy/log-linear/log-linear-policy.js";
import { type GymCandidate, gymCandidates } from "./candidates.js";
import { GYM_FEATURE_NAMES, gymFeatureMatrix } from "./features.js";

export interface GymPolicyOptions {
  /** Default `"gym"`. */
  readonly name?: string;
  /** Starting weights by feature name (`GYM_FEATURE_NAMES`); the rest start at 0, the uniform policy. */
  readonly initialWeights?: Readonly<Record<string, number>>;
}

/** What `act` records so `update` finds the choice again (the log-linear policies' one trace). */
export const GymTraceSchema = CandidateTraceSchema;
export type GymTrace = CandidateTrace;

/**
 * The ARCO gym's trainable policy: π(a | view) = softmax(θ·φ(a, view)) over the view's candidates
 * (`gymCandidates`: searches for every name in view, whole or one word alone, and Finishes with
 * them) with the named features of `GYM_FEATURE_NAMES`. Its features can express the optimal
 * policy, so imitation of the oracle can reach it, and the careless habits of a noisy teacher
 * equally. Its learning is `LogLinearPolicy`'s, the same as the extractive policy's: exact
 * log-probabilities and gradients, `act` at temperature T drawing row i from
 * `createRng(seeds[i])`, `update` one Adam step on −(1/N) Σ A·log π + klCoef·KL(π_ref ‖ π),
 * `sft` one step of cross-entropy, checkpoints (`gym-policy.json`) read through a zod schema.
 *
 * @example
 * const policy = gymPolicy();
 * const episodes = await rollout(arcoGym(), tasks, policy, { temperature: 1, seed: 1 }); // a random policy
 */
export class GymPolicy extends LogLinearPolicy<GymCandidate> {
  constructor(options: GymPolicyOptions = {}) {
    super(
      {
        name: options.name ?? "gym",
        features: GYM_FEATURE_NAMES,
        score(view) {
          const { reading, candidates } = gymCandidates(view);
          return { candidates, features: gymFeatureMatrix(candidates, reading) };
        },
        checkpoint: { file: "gym-policy.json", format: "gym-policy/1" },
      },
      options.initialWeights,
    );
  }
}

/**
 * A new gym policy: all weights 0 unless given, the uniform (random) policy over each view's candidates.
 *
 * @example
 * const random = gymPolicy();
 * const [decision] = await random.act([view], { temperature: 1, seeds: ["run/t0/0/0"] });
 */
export function gymPolicy(options: GymPolicyOptions = {}): GymPolicy {
  return new GymPolicy(options);
}
