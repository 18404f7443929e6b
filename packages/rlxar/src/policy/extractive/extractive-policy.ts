import { z } from "zod";
import { CheckpointMismatchError } from "../../errors.js";
import {
  CandidateTraceSchema,
  type CandidateTrace,
  type LogLinearObjective,
  LogLinearPolicy,
  type LogLinearSftResult,
} from "../log-linear/log-linear-policy.js";
import {
  type Candidate,
  DEFAULT_CANDIDATE_OPTIONS,
  type ExtractiveCandidateOptions,
  extractiveCandidates,
} from "./candidates.js";
import { FEATURE_NAMES, featureMatrix } from "./features.js";

export interface ExtractivePolicyOptions {
  /** Default `"extractive"`. */
  readonly name?: string;
  readonly candidates?: ExtractiveCandidateOptions;
  /** Starting weights by feature name (see `FEATURE_NAMES`); every other weight starts at 0, the uniform policy. */
  readonly initialWeights?: Readonly<Record<string, number>>;
}

/** What `act` records so `update` can find the choice again (the log-linear policies' one trace). */
export const ExtractiveTraceSchema = CandidateTraceSchema;
export type ExtractiveTrace = CandidateTrace;
/** `sft`'s result: the mean loss before the step, over the examples whose target was a candidate. */
export type ExtractiveSftResult = LogLinearSftResult;
/** The loss of `update` and its exact gradient, at the current weights. */
export type ExtractiveObjective = LogLinearObjective;

/** Beside the weights, a checkpoint keeps the candidate options its traces were made with. */
const CandidateOptionsShape = {
  candidates: z.strictObject({
    maxQuestionQueries: z.int().min(0),
    maxParagraphQueries: z.int().min(0),
    maxAnswers: z.int().min(0),
    maxSpanWords: z.int().min(1),
  }),
};

/**
 * A log-linear policy over extractive candidate actions: π(a | view) = softmax(θ·φ(a, view)) over
 * the view's candidates (`extractiveCandidates`), with named, interpretable features
 * (`FEATURE_NAMES`); its learning is `LogLinearPolicy`'s, shared with the ARCO gym's policy. Log-probabilities are exact; `act` at temperature T draws from
 * softmax(θ·φ / T) and reports `logProb` under π itself (T = 1), the distribution `update`
 * differentiates, with the sampling distribution's log-probability in the trace. It trains on a
 * CPU in seconds.
 *
 * @example
 * const policy = new ExtractivePolicy({ candidates: { maxAnswers: 120 } });
 * await policy.setReference(); // the KL leash's anchor, e.g. after SFT
 * const metrics = await policy.update(samples, { learningRate: 0.05, klCoef: 0.05, maxGradNorm: 1 });
 */
export class ExtractivePolicy extends LogLinearPolicy<Candidate, typeof CandidateOptionsShape> {
  readonly candidateOptions: Required<ExtractiveCandidateOptions>;

  constructor(options: ExtractivePolicyOptions = {}) {
    const candidateOptions = { ...DEFAULT_CANDIDATE_OPTIONS, ...options.candidates };
    super(
      {
        name: options.name ?? "extractive",
        features: FEATURE_NAMES,
        score(view) {
          const { reading, candidates } = extractiveCandidates(view, candidateOptions);
          return { candidates, features: featureMatrix(candidates, reading) };
        },
        checkpoint: {
          file: "extractive-policy.json",
          format: "extractive-policy/1",
          extra: {
            shape: CandidateOptionsShape,
            value: () => ({ candidates: candidateOptions }),
            check(saved, file) {
              const keys = Object.keys(saved.candidates) as (keyof typeof saved.candidates)[];
              const changed = keys.filter((key) => saved.candidates[key] !== candidateOptions[key]);
              if (changed.length > 0)
                throw new CheckpointMismatchError(
                  file,
                  `candidate options differ (${changed.map((k) => `${k}: ${saved.candidates[k]} there, ${candidateOptions[k]} here`).join("; ")}), so its traces would name other candidates`,
                );
            },
          },
        },
      },
      options.initialWeights,
    );
    this.candidateOptions = candidateOptions;
  }
}

/**
 * A new extractive policy (all weights 0 unless given: the uniform policy over each view's
 * candidates).
 *
 * @example
 * const policy = extractivePolicy();
 * const [decision] = await policy.act([view], { temperature: 1, seeds: ["run-1/q1/0/0"] });
 * await policy.update([{ view, decision: decision!, advantage: 1 }], { learningRate: 0.05, klCoef: 0 });
 */
export function extractivePolicy(options: ExtractivePolicyOptions = {}): ExtractivePolicy {
  return new ExtractivePolicy(options);
}
