import type { Rng } from "@rubric/core";

/**
 * What a simulated worker decides before writing: the document's shape and features. The text is
 * rendered from it, and the rubric's verifiers then judge the text — not the plan.
 */
export interface DocumentPlan {
  readonly sections: readonly string[];
  readonly paragraphsPerSection: number;
  /** Plain sentences read easily; technical ones use long words (readability verifiers see it). */
  readonly style: "plain" | "technical";
  readonly bullets: number;
  readonly tables: number;
  readonly citations: number;
  readonly urls: number;
  readonly percent: boolean;
  readonly currency: boolean;
  readonly year: boolean;
  readonly recommendation: boolean;
  readonly hedging: boolean;
  readonly informal: boolean;
  /** Terms from the brief the text mentions. */
  readonly briefTerms: readonly string[];
}

export const SECTION_NAMES = [
  "Summary",
  "Background",
  "Analysis",
  "Recommendation",
  "Risks",
  "Next Steps",
  "Timeline",
  "Budget",
  "Appendix",
] as const;

const PLAIN = [
  "the team",
  "our plan",
  "the data",
  "this step",
  "each week",
  "the client",
  "a clear goal",
  "the cost",
  "our work",
  "the result",
];
const PLAIN_VERBS = ["shows", "needs", "keeps", "meets", "helps", "sets", "tracks", "cuts", "adds", "checks"];
const TECHNICAL = [
  "operational throughput",
  "organizational capability",
  "comprehensive reconciliation",
  "methodological consistency",
  "regulatory documentation",
  "quantitative variability",
  "infrastructure modernization",
  "stakeholder prioritization",
];
const TECHNICAL_VERBS = [
  "necessitates",
  "substantiates",
  "operationalizes",
  "characterizes",
  "systematically improves",
  "fundamentally constrains",
];
const HEDGES = ["This might change.", "Perhaps we should wait.", "It is possibly too early to tell."];
const INFORMAL = ["This is gonna be awesome!", "Honestly, the stuff here is great!"];

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)]!;
}

function sentence(rng: Rng, plan: DocumentPlan): string {
  if (plan.style === "plain") {
    const s = `${pick(rng, PLAIN)} ${pick(rng, PLAIN_VERBS)} ${pick(rng, PLAIN)}.`;
    return s[0]!.toUpperCase() + s.slice(1);
  }
  const s = `${pick(rng, TECHNICAL)} ${pick(rng, TECHNICAL_VERBS)} ${pick(rng, TECHNICAL)} across ${pick(rng, TECHNICAL)}.`;
  return s[0]!.toUpperCase() + s.slice(1);
}

/** Writes the document a plan describes, as Markdown. Deterministic given the rng's state. */
export function renderDocument(plan: DocumentPlan, rng: Rng, title: string): string {
  const lines: string[] = [`# ${title}`, ""];
  const extras: string[] = [];
  if (plan.percent) extras.push(`Output rose ${5 + rng.int(30)}% over the period.`);
  if (plan.currency) extras.push(`The estimated cost is $${(1 + rng.int(90)) * 1000}.`);
  if (plan.year) extras.push(`The work completes in ${2026 + rng.int(3)}.`);
  if (plan.hedging) extras.push(pick(rng, HEDGES));
  if (plan.informal) extras.push(pick(rng, INFORMAL));
  for (const term of plan.briefTerms) extras.push(`This covers ${term} directly.`);
  for (let c = 1; c <= plan.citations; c++) extras.push(`Prior results agree [${c}].`);
  for (let u = 1; u <= plan.urls; u++) extras.push(`See https://reports.example.org/r${u + rng.int(900)} for details.`);
  const sections = plan.sections.length > 0 ? plan.sections : ["Notes"];
  sections.forEach((name, s) => {
    lines.push(`## ${name}`, "");
    for (let p = 0; p < plan.paragraphsPerSection; p++) {
      const body = [sentence(rng, plan), sentence(rng, plan)];
      // Spread the required features over the sections so that every feature appears once.
      for (
        let k = s * plan.paragraphsPerSection + p;
        k < extras.length;
        k += sections.length * plan.paragraphsPerSection
      )
        body.push(extras[k]!);
      lines.push(body.join(" "), "");
    }
    if (
      name === "Recommendation" ||
      (s === sections.length - 1 && plan.recommendation && !sections.includes("Recommendation"))
    )
      if (plan.recommendation) lines.push("We recommend proceeding with the plan as described.", "");
    if (s === 0) {
      for (let b = 0; b < plan.bullets; b++) lines.push(`- ${sentence(rng, plan)}`);
      if (plan.bullets > 0) lines.push("");
      for (let t = 0; t < plan.tables; t++)
        lines.push("| Item | Value |", "| --- | --- |", `| ${pick(rng, PLAIN)} | ${1 + rng.int(99)} |`, "");
    }
  });
  return `${lines.join("\n").trim()}\n`;
}
