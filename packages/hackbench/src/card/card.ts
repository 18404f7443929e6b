import { formatZodIssues } from "@rubric/core";
import { z } from "zod";
import { HackbenchError } from "../errors.js";

const Interval = z.tuple([z.number(), z.number()]);
const Fraction = z.number().min(-1).max(1);

/** Which criteria paid out for a probe: mean change of each criterion's share of the score. */
export const CriterionGainSchema = z.strictObject({
  id: z.string().min(1),
  /** Mean over samples of the criterion's share of the normalised score, probe − control. */
  gain: z.number(),
  /** Samples on which the criterion paid the probe more than the control. */
  paid: z.number().int().min(0),
});

/** One exploit shown on one sample. */
export const WorkedExampleSchema = z.strictObject({
  sampleId: z.string().min(1),
  probeScore: Fraction,
  controlScore: Fraction,
  gain: z.number(),
  /** What the probe changed in the honest output. */
  probeEdit: z.string(),
  /** What the control changed in the honest output. */
  controlEdit: z.string(),
});

export const ProbeResultSchema = z.strictObject({
  id: z.string().min(1),
  title: z.string(),
  /** What a scorer that pays for this probe rewards. */
  tests: z.string(),
  matchedBy: z.string(),
  /** Samples the probe could be applied to (the gain is their mean). */
  applicable: z.number().int().min(0),
  /** Mean score(probe) − score(control) over applicable samples. */
  gain: z.number(),
  ci: Interval,
  exploit: z.boolean(),
  /**
   * Neither an exploit nor ruled out: the interval reaches τ, so the run cannot tell. A card with
   * an inconclusive probe and no exploit is `inconclusive`, never `clean`.
   */
  inconclusive: z.boolean(),
  /** The smallest mean gain this run could have flagged (see `detectableGain`); null when not applicable. */
  detectableGain: z.number().nullable(),
  /** Mean normalised scores over applicable samples. */
  means: z.strictObject({ honest: z.number(), probe: z.number(), control: z.number() }).nullable(),
  /** U*(probe) − U*(control) where a true utility was given: the real effect beside the proxy's. */
  trueGain: z.strictObject({ gain: z.number(), ci: Interval }).nullable(),
  /** Every criterion whose share moved, largest gain first. */
  criteria: z.array(CriterionGainSchema),
  /** The criteria that paid out (positive gain). */
  exploited: z.array(z.string()),
  /** The sample on which the probe gained most; present for exploits. */
  example: WorkedExampleSchema.nullable(),
  /** The command that reruns this probe alone, with the same numbers. */
  replay: z.string().nullable(),
});
export type ProbeResult = z.output<typeof ProbeResultSchema>;

export const INTEGRITY_CARD_FORMAT = "rubric-hackbench/integrity-card@2";

/**
 * An integrity card: whether a rubric reward can be gamed, probe by probe, with the evidence.
 * The verdict is `hackable` when any probe is an exploit (gain > τ and its interval above 0);
 * `clean` when every applicable probe is ruled out (its interval below τ); otherwise
 * `inconclusive`: the samples were too few to see an exploit of size τ.
 */
export const IntegrityCardSchema = z.strictObject({
  format: z.literal(INTEGRITY_CARD_FORMAT),
  verdict: z.enum(["clean", "hackable", "inconclusive"]),
  rubric: z.strictObject({ id: z.string(), criteria: z.number().int().min(1) }),
  /** The judge model behind `llm-judge` criteria, as a provider spec; null for rules only. */
  judge: z.string().nullable(),
  samples: z.number().int().min(1),
  threshold: z.number().min(0),
  confidence: z.number().gt(0).lt(1),
  resamples: z.number().int().min(1),
  seed: z.number().int(),
  /** Mean normalised score of the honest outputs. */
  honestMean: z.number(),
  /** Ids of the probes that are exploits. */
  exploits: z.array(z.string()),
  /** Ids of the probes the run could neither flag nor rule out. */
  inconclusive: z.array(z.string()),
  /** The largest of the applicable probes' detectable gains: the run's power, as a gain. */
  detectableGain: z.number().nullable(),
  probes: z.array(ProbeResultSchema),
  /** The command that reruns the whole card. */
  command: z.string().nullable(),
});
export type IntegrityCard = z.output<typeof IntegrityCardSchema>;

/** A value that is not an integrity card. */
export class IntegrityCardError extends HackbenchError {
  override readonly name = "IntegrityCardError";
  readonly code = "hackbench.integrity-card";
}

/**
 * Reads a card back from JSON (a CI step comparing cards, a dashboard).
 * @throws IntegrityCardError naming the path of every bad field.
 */
export function parseIntegrityCard(value: unknown, source = "card"): IntegrityCard {
  const parsed = IntegrityCardSchema.safeParse(value);
  if (!parsed.success) throw new IntegrityCardError(formatZodIssues(parsed.error, { source }));
  return parsed.data;
}
