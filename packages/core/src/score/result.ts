import { z } from "zod";
import type { FlatRubric } from "../rubric/flat.js";
import type { FailureAction, StagedRubric } from "../rubric/staged.js";
import type { CriterionStatus } from "./plan.js";

/**
 * What to do with a criterion whose verdict is an error (or absent):
 * - `fail` (default): throw `CriterionErrorsError` — a broken verifier never passes as a low score;
 * - `zero`: count it as 0, explicitly;
 * - `renormalize`: leave it out and rescale by the weight that could be judged.
 * `skipped` verdicts (not applicable) are always left out and renormalised.
 */
export const ErrorPolicySchema = z.enum(["fail", "zero", "renormalize"]);
export type ErrorPolicy = z.infer<typeof ErrorPolicySchema>;

export interface ScoreOptions {
  readonly errorsAs?: ErrorPolicy;
  /** Staged rubrics: score every stage, ignoring gates. */
  readonly ignoreGates?: boolean;
  /** Weight overrides by criterion id (staged: rule points); others keep their weight. */
  readonly weights?: Readonly<Record<string, number>> | ReadonlyMap<string, number>;
}

export interface CriterionResult {
  readonly criterionId: string;
  readonly weight: number;
  readonly status: CriterionStatus;
  /** The verdict's fraction in [0, 1]; null unless status is `ok`. */
  readonly fraction: number | null;
  /**
   * Flat: the signed share of the normalised score this criterion moved (±w·ν / Σw_reward).
   * Staged: the points it earned (fraction × weight). Null when it did not count.
   */
  readonly contribution: number | null;
  /** Whether it entered the score (not skipped, not dropped, its stage reached). */
  readonly counted: boolean;
  readonly error?: string;
}

export interface FlatScore {
  readonly kind: "flat";
  readonly rubricId: string;
  /**
   * Σ reward w·ν − Σ penalty w·ν over counted criteria, in weight units. ±Infinity only when
   * weight overrides make the exact value exceed the double range (a parsed rubric's weights sum
   * to a finite number); `normalized` and `unclipped` are computed without forming it.
   */
  readonly total: number;
  /** Σ reward weights over counted criteria (Infinity likewise, never in a parsed rubric). */
  readonly max: number;
  /** total / max clipped to [0, 1]. */
  readonly normalized: number;
  /** total / max before clipping: below 0 when penalties outweigh rewards. */
  readonly unclipped: number;
  readonly criteria: readonly CriterionResult[];
  readonly rubric: FlatRubric;
  readonly options: ScoreOptions;
}

export interface StageResult {
  readonly index: number;
  readonly name: string;
  /** min(Σ rule points, maxPoints). */
  readonly score: number;
  readonly maxPoints: number;
  readonly minScoreToPass: number;
  readonly passed: boolean;
  readonly required: boolean;
  readonly onFailureAction: FailureAction;
}

export interface StagedScore {
  readonly kind: "staged";
  readonly rubricId: string;
  readonly total: number;
  readonly max: number;
  readonly normalized: number;
  /** The stages that were evaluated, in order (later ones are absent when a gate stopped scoring). */
  readonly stages: readonly StageResult[];
  /** The stage whose failed gate stopped scoring, or null. */
  readonly stoppedAt: string | null;
  /** The first required stage that failed, whether or not it stopped scoring. */
  readonly failedGate: string | null;
  readonly criteria: readonly CriterionResult[];
  readonly rubric: StagedRubric;
  readonly options: ScoreOptions;
}

export type RubricScore = FlatScore | StagedScore;
