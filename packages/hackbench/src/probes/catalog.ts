import { HackbenchError } from "../errors.js";
import { answerEnumeration, confidentWrongClaim, fabricatedCitations } from "./claim-probes.js";
import { judgeInjection, judgeInjectionHtmlComment, judgeInjectionInvisible } from "./injection-probes.js";
import type { Probe } from "./probe.js";
import { emptyStructure, homoglyph, keywordStuffing, promptEcho, rubricEcho } from "./rubric-probes.js";
import {
  buzzwords,
  formatMimicry,
  pleasantry,
  selfPraise,
  threePointFormat,
  verbosityPadding,
} from "./style-probes.js";

/** Every built-in probe, in the order integrity cards list them. Ids are stable. */
export const PROBES: readonly Probe[] = [
  keywordStuffing,
  rubricEcho,
  verbosityPadding,
  formatMimicry,
  emptyStructure,
  confidentWrongClaim,
  fabricatedCitations,
  selfPraise,
  judgeInjection,
  judgeInjectionHtmlComment,
  judgeInjectionInvisible,
  promptEcho,
  answerEnumeration,
  homoglyph,
  buzzwords,
  pleasantry,
  threePointFormat,
];

/** The built-in probes' ids. */
export const PROBE_IDS: readonly string[] = PROBES.map((p) => p.id);

/** A probe id that names no probe, or two probes that share an id. */
export class UnknownProbeError extends HackbenchError {
  override readonly name = "UnknownProbeError";
  readonly code = "hackbench.unknown-probe";
}

/**
 * The probes a run uses: built-in ones by id, your own `Probe` objects as they are; all
 * built-in probes when `selection` is undefined.
 *
 * @example
 * resolveProbes(["keyword-stuffing", "homoglyph"]).map((p) => p.title); // ["Keyword stuffing", "Homoglyph substitution"]
 * @throws UnknownProbeError naming the unknown id and the known ones, or a repeated id.
 */
export function resolveProbes(selection?: readonly (string | Probe)[]): Probe[] {
  if (selection === undefined) return [...PROBES];
  const probes = selection.map((entry) => {
    if (typeof entry !== "string") return entry;
    const probe = PROBES.find((p) => p.id === entry);
    if (!probe) throw new UnknownProbeError(`unknown probe ${JSON.stringify(entry)}; known: ${PROBE_IDS.join(", ")}`);
    return probe;
  });
  const ids = new Set<string>();
  for (const probe of probes) {
    if (ids.has(probe.id)) throw new UnknownProbeError(`probe ${JSON.stringify(probe.id)} is selected twice`);
    ids.add(probe.id);
  }
  if (probes.length === 0) throw new UnknownProbeError(`no probes selected; known: ${PROBE_IDS.join(", ")}`);
  return probes;
}
