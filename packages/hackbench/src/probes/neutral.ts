import type { Rng } from "@rubric/core";
import { ALNUM_RUN, FUNCTION_WORDS } from "../text/words.js";

/**
 * Off-topic nouns for matched controls: concrete, harmless, and unlikely to be anything a rubric
 * pays for. Grouped by length so a replacement keeps the character count of the word it replaces.
 */
const NEUTRAL_NOUNS = (
  "ivy fig elm owl yew oak emu " +
  "fern moss reed kelp lark wren lynx dune cove reef " +
  "ember quilt heron acorn birch daisy hazel lilac olive poppy robin finch ladle creek grove bluff otter " +
  "pebble meadow willow marble cobble falcon canyon saddle velvet ripple clover violet walnut almond ginger " +
  "nutmeg quince sorrel badger beaver puffin kettle teapot candle wicker barrel bucket ribbon button pillow " +
  "mitten bonnet cradle lagoon tundra hollow ferret plover yarrow zinnia " +
  "lantern orchard thistle juniper kestrel spindle thimble blanket glacier prairie " +
  "rosemary starling lavender hedgehog woodland primrose " +
  "buttercup dandelion marigold sweetbriar honeysuckle marshmallow"
).split(" ");

/** What a control may not introduce and must not keep: the rubric's own vocabulary, lower case. */
export interface NeutralizeOptions {
  readonly avoid: ReadonlySet<string>;
}

/**
 * The matched control of an inserted text: every run of letters or digits is replaced by an
 * off-topic noun of the same length (same case shape), except function words the rubric does not
 * itself name, which keep the grammar. Punctuation, Markdown (list numbers too), line breaks and invisible
 * characters stay where they are, so the control has the probe's length, word count and
 * structure, and none of its content.
 *
 * @example
 * neutralize("Keywords: revenue, risks.", createRng(1), { avoid: new Set(["revenue", "risks"]) });
 * // e.g. "Lavender: kestrel, ember." — same shape, nothing a rubric pays for
 */
export function neutralize(text: string, rng: Rng, options: NeutralizeOptions): string {
  const byLength = nounsByLength(options.avoid);
  const swap = (part: string) =>
    part.replace(ALNUM_RUN, (run) => {
      const lower = run.toLowerCase();
      if (FUNCTION_WORDS.has(lower) && !options.avoid.has(lower)) return run;
      return withCaseOf(run, nounOfLength(run.length, byLength, rng));
    });
  // An ordered list's numbers are structure, not content: "1." must stay a list marker.
  return text
    .split("\n")
    .map((line) => {
      const marker = /^\s*\d+[.)](?=\s)/.exec(line)?.[0] ?? "";
      return marker + swap(line.slice(marker.length));
    })
    .join("\n");
}

const cache = new WeakMap<ReadonlySet<string>, Map<number, string[]>>();

function nounsByLength(avoid: ReadonlySet<string>): Map<number, string[]> {
  let buckets = cache.get(avoid);
  if (!buckets) {
    buckets = new Map();
    for (const noun of NEUTRAL_NOUNS) {
      if (avoid.has(noun)) continue;
      buckets.set(noun.length, [...(buckets.get(noun.length) ?? []), noun]);
    }
    cache.set(avoid, buckets);
  }
  return buckets;
}

function nounOfLength(length: number, byLength: Map<number, string[]>, rng: Rng): string {
  const exact = byLength.get(length);
  if (exact) return exact[rng.int(exact.length)]!;
  // No noun that long: cut a longer one, or join several, so the length still matches.
  let out = "";
  const all = [...byLength.values()].flat();
  while (out.length < length) out += all[rng.int(all.length)]!;
  return out.slice(0, length);
}

function withCaseOf(original: string, replacement: string): string {
  if (original.length > 1 && original === original.toUpperCase() && original !== original.toLowerCase())
    return replacement.toUpperCase();
  const first = original[0]!;
  return first !== first.toLowerCase() ? replacement[0]!.toUpperCase() + replacement.slice(1) : replacement;
}
