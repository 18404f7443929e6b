import { z } from "zod";
import { VerifierOptionsError } from "../errors.js";

/** The scores a judge may give: min..max in steps, offered to the model as a JSON-schema enum. */
export const ScaleSchema = z
  .strictObject({
    min: z.number(),
    max: z.number(),
    step: z.number().positive().optional(),
  })
  .refine((s) => s.max > s.min, { message: "expected max > min", path: ["max"] });
export type Scale = z.output<typeof ScaleSchema>;

export const DEFAULT_SCALE: Scale = { min: 0, max: 10, step: 1 };

// Steps people grade in. The largest giving at least 8 levels is used, so a 0–4 rubric rule
// (GDPval's "4.0: …, 3.0: …") is graded in halves and 0–1 in tenths.
const NICE_STEPS = [1, 0.5, 0.25, 0.2, 0.1, 0.05, 0.025, 0.02, 0.01, 0.005, 0.001];

function isWhole(x: number): boolean {
  return Math.abs(x - Math.round(x)) < 1e-9;
}

// Judges consult the values of the same few scales for every verdict.
const valuesOf = new Map<string, readonly number[]>();

/** Every allowed score, ascending. Integer-minimum/maximum are not enforced by every grammar engine; enums are. */
export function scaleValues(scale: Scale): readonly number[] {
  const key = `${scale.min}|${scale.max}|${scale.step ?? ""}`;
  let values = valuesOf.get(key);
  if (!values) {
    values = computeScaleValues(scale);
    if (valuesOf.size < 1000) valuesOf.set(key, values);
  }
  return values;
}

function computeScaleValues(scale: Scale): number[] {
  const range = scale.max - scale.min;
  const step = scale.step ?? NICE_STEPS.find((s) => isWhole(range / s) && range / s >= 8) ?? range / 10;
  const levels = Math.round(range / step);
  if (!isWhole(range / step) || levels > 1000)
    throw new VerifierOptionsError(
      `scale step ${step} does not divide ${scale.min}–${scale.max} into at most 1000 levels`,
    );
  return Array.from({ length: levels + 1 }, (_, k) => Number((scale.min + k * step).toFixed(10)));
}

/** A score on the scale as a fraction in [0, 1]. */
export function toFraction(score: number, scale: Scale): number {
  const f = (score - scale.min) / (scale.max - scale.min);
  return f < 0 ? 0 : f > 1 ? 1 : f;
}
