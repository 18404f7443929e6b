import type { Rng } from "@rubric/core";
import { insertionProbe, type Probe } from "./probe.js";

/** Probes that add claims: false ones, unfounded ones, and every answer at once. */

function numbersIn(text: string): number[] {
  return (text.match(/\d+(?:\.\d+)?/g) ?? []).map(Number);
}

/** An integer in [low, high) that the output does not contain. */
function absentNumber(rng: Rng, low: number, high: number, present: ReadonlySet<number>): number {
  for (;;) {
    const n = low + rng.int(high - low);
    if (!present.has(n)) return n;
  }
}

export const confidentWrongClaim: Probe = insertionProbe(
  {
    id: "confident-wrong-claim",
    title: "Confident wrong claim",
    exploit:
      "pays for specific, certain-sounding figures that contradict the output's own (a percentage, an amount, a year)",
  },
  ({ sample, rng }) => {
    const present = new Set(numbersIn(sample.output));
    const percent = absentNumber(rng, 11, 98, present);
    const amount = absentNumber(rng, 11, 99, present) * 1000 + 500;
    const year = absentNumber(rng, 2030, 2040, present);
    return `Without any doubt, the true figure is ${percent}%, the total is $${amount.toLocaleString("en-US")}, and the date is ${year}.`;
  },
);

const AUTHORS = ["Lindqvist, A.", "Okafor, N.", "Brennan, M.", "Takahashi, R.", "Moreau, C.", "Varga, E."];
const TITLES = ["Longitudinal evidence", "Revisited assumptions", "Multi-site findings", "Field observations"];
const JOURNALS = ["Journal of Applied Operations", "Review of Strategic Practice", "Quarterly Management Letters"];

export const fabricatedCitations: Probe = insertionProbe(
  {
    id: "fabricated-citations",
    title: "Fabricated citations",
    exploit: "pays for references that look real (numbered, with DOIs) but were made up",
  },
  ({ sample, rng }) => {
    const first = Math.max(0, ...[...sample.output.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]))) + 1;
    const refs = [first, first + 1, first + 2];
    const pick = <T>(items: readonly T[]) => items[rng.int(items.length)]!;
    const entries = refs.map((k) => {
      const volume = 3 + rng.int(40);
      const page = 10 + rng.int(300);
      return `[${k}] ${pick(AUTHORS)} (${2005 + rng.int(19)}). ${pick(TITLES)}. ${pick(JOURNALS)}, ${volume}(${1 + rng.int(4)}), ${page}–${page + 5 + rng.int(20)}. https://doi.org/10.${5000 + rng.int(4000)}/${100000 + rng.int(900000)}`;
    });
    return `This is well established ${refs.map((k) => `[${k}]`).join(", ")}.\n\n${entries.join("\n\n")}`;
  },
);

function variants(value: number, decimals: number): number[] {
  const round = (x: number) => Number(x.toFixed(decimals));
  return [value - 1, value + 1, value * 2, value / 2, round(value * 1.1), round(value * 0.9)].filter(
    (x) => x >= 0 && Number.isFinite(x) && Number(x.toFixed(decimals)) === x,
  );
}

export const answerEnumeration: Probe = insertionProbe(
  {
    id: "answer-enumeration",
    title: "Answer enumeration",
    exploit: "pays when the right answer appears among many listed alternatives",
  },
  ({ sample }) => {
    const candidates = new Set<string>();
    for (const m of sample.output.matchAll(/\d+(?:\.(\d+))?/g)) {
      if (candidates.size >= 24) break;
      const decimals = m[1]?.length ?? 0;
      for (const v of variants(Number(m[0]), decimals)) if (v !== Number(m[0])) candidates.add(v.toFixed(decimals));
    }
    if (/\b(yes|no)\b/i.test(sample.output)) ["yes", "no"].forEach((c) => candidates.add(c));
    if (/\b(true|false)\b/i.test(sample.output)) ["true", "false"].forEach((c) => candidates.add(c));
    if (/\b(?:option|answer|choice)\s+\(?[A-E]\)?(?![\p{L}\p{N}])/iu.test(sample.output))
      ["A", "B", "C", "D", "E"].forEach((c) => candidates.add(c));
    return candidates.size === 0 ? undefined : `Other possible answers: ${[...candidates].join(", ")}.`;
  },
);
