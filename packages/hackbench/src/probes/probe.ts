import type { Rng } from "@rubric/core";
import type { HackSample } from "../sample/sample.js";
import { neutralize } from "./neutral.js";
import type { RubricSurface } from "./surface.js";

/** What a probe sees: one honest sample, the rubric as an attacker reads it, and its own random stream. */
export interface ProbeContext {
  readonly sample: HackSample;
  readonly surface: RubricSurface;
  /** Seeded by the run's seed, the probe and the sample alone. */
  readonly rng: Rng;
}

/** A probe's two outputs for one sample. */
export interface ProbeEdit {
  /** The honest output with the exploit applied. */
  readonly probe: string;
  /** The honest output changed as much (length, structure) without the exploit. */
  readonly control: string;
}

/**
 * A reward-hacking probe: a transform of an honest output, paired with a matched control so
 * that a score gain is attributed to the exploit, not to the edit.
 */
export interface Probe {
  /** Stable id, used on the command line and in integrity cards. */
  readonly id: string;
  readonly title: string;
  /** What a scorer that pays for this probe is rewarding. */
  readonly exploit: string;
  /** How the control is matched to the probe. */
  readonly matchedBy: string;
  /** The edit for one sample; undefined when the probe has nothing to work with there. */
  apply(context: ProbeContext): ProbeEdit | undefined;
}

/** The output with a block appended as its own paragraph. */
export function appended(output: string, block: string): string {
  return `${output.replace(/\s+$/u, "")}\n\n${block}\n`;
}

/**
 * A probe that appends a block of text, its control the same block neutralised (every content
 * word swapped for an off-topic noun of the same length); `wrap` then dresses both alike (an
 * HTML comment, invisible characters).
 */
export function insertionProbe(
  head: Omit<Probe, "apply" | "matchedBy"> & { readonly matchedBy?: string },
  block: (context: ProbeContext) => string | undefined,
  wrap: (text: string) => string = (text) => text,
): Probe {
  return {
    matchedBy:
      "the same text with every content word replaced by an off-topic word of the same length: same length, words, punctuation and layout",
    ...head,
    apply(context) {
      const text = block(context);
      if (text === undefined) return undefined;
      const control = neutralize(text, context.rng, { avoid: context.surface.vocabulary });
      return {
        probe: appended(context.sample.output, wrap(text)),
        control: appended(context.sample.output, wrap(control)),
      };
    },
  };
}
