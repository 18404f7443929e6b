import { ArcoInputError } from "../errors.js";

/**
 * Observations cut to this many characters by default. Sequence length dominates μ's CPU cost
 * (attention is quadratic and the history is most of the prompt), and in ARCO's QA environment an
 * observation is one retrieved paragraph: 550 characters on average in its dev set, so 600 keeps
 * most paragraphs whole and caps the long tail. ARCO itself shows observations uncut; this is ours.
 */
export const DEFAULT_MAX_OBSERVATION_CHARS = 600;

/**
 * `observation` cut to at most `maxChars` characters (code points, so a surrogate pair is never
 * split), with a marker saying how many were dropped so μ can tell a cut text from a short one.
 * `Infinity` keeps it whole.
 *
 * @example
 * renderObservation("abcdef", 3); // "abc… [3 more characters]"
 * renderObservation("abc", 3);    // "abc"
 */
export function renderObservation(observation: string, maxChars: number = DEFAULT_MAX_OBSERVATION_CHARS): string {
  if (!(maxChars === Number.POSITIVE_INFINITY || (Number.isInteger(maxChars) && maxChars >= 0))) {
    throw new ArcoInputError("maxObservationChars", `expected an integer ≥ 0 or Infinity, got ${maxChars}`);
  }
  if (observation.length <= maxChars) return observation;
  const points = Array.from(observation);
  if (points.length <= maxChars) return observation;
  return `${points.slice(0, maxChars).join("")}… [${points.length - maxChars} more characters]`;
}
