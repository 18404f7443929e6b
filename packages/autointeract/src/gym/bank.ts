import type { VerifierSpec } from "@rubric/core";
import { SECTION_NAMES, type DocumentPlan } from "./document.js";

/**
 * The gym's bank of verifiable criteria. Each has the text a stakeholder or manager would say,
 * a rule verifier from @rubric/verifiers that judges real text, a family (what a question about
 * it sounds like), an optional exclusive group (criteria no one wants together), and how a
 * worker that follows it changes its plan — which it does only with some probability, and
 * imperfectly: the verifier, not the plan, decides whether it holds.
 */
export interface BankCriterion {
  readonly id: string;
  readonly text: string;
  readonly family: "structure" | "format" | "length" | "evidence" | "numbers" | "decision" | "tone" | "brief";
  readonly group?: string;
  readonly verifier: VerifierSpec;
  readonly apply: (plan: DocumentPlan) => DocumentPlan;
}

type Section = (typeof SECTION_NAMES)[number];

function withSection(plan: DocumentPlan, name: Section, position: "first" | "last" | "any" = "any"): DocumentPlan {
  const rest = plan.sections.filter((s) => s !== name);
  if (position === "first") return { ...plan, sections: [name, ...rest] };
  if (position === "last" || !plan.sections.includes(name)) return { ...plan, sections: [...rest, name] };
  return plan;
}

const sectionCriteria: BankCriterion[] = SECTION_NAMES.map((name) => ({
  id: `section-${name.toLowerCase().replace(/ /g, "-")}`,
  text: `Has ${/^[AEIOU]/.test(name) ? "an" : "a"} "${name}" section`,
  family: "structure",
  verifier: { kind: "regex", pattern: `^## ${name}\\b`, flags: "m" },
  apply: (plan) => withSection(plan, name),
}));

/** `## Next Steps\n` with no later `\n## ` heading: `## Next Steps\n(?![\s\S]*\n## )` in RE2's syntax. */
const NO_LATER_SECTION =
  "## Next Steps\\n(?:[^\\n]|\\n(?:\\n|#\\n|##\\n)*(?:[^#\\n]|#[^#\\n]|##[^ \\n]))*(?:\\n(?:\\n|#\\n|##\\n)*(?:##?)?)?$";

export const CRITERIA_BANK: readonly BankCriterion[] = [
  ...sectionCriteria,
  {
    id: "summary-first",
    text: "Opens with the Summary section",
    family: "structure",
    verifier: { kind: "regex", pattern: "^# [^\\n]*\\n+## Summary\\b" },
    apply: (p) => withSection(p, "Summary", "first"),
  },
  {
    id: "next-steps-last",
    text: "Ends with the Next Steps section",
    family: "structure",
    // "No `\n## ` after the heading", without the lookahead RE2 cannot run: the rest of the text
    // is a walk through the four states of a matcher for `\n## ` that never reaches the end of it
    // (after \n, after \n#, after \n##, elsewhere); gym.test.ts checks it against the lookahead.
    verifier: { kind: "regex", pattern: NO_LATER_SECTION },
    apply: (p) => withSection(p, "Next Steps", "last"),
  },
  {
    id: "risks-before-recommendation",
    text: "Discusses risks before the recommendation",
    family: "structure",
    verifier: { kind: "regex", pattern: "## Risks[\\s\\S]*## Recommendation" },
    apply: (p) => {
      const q = withSection(withSection(p, "Risks"), "Recommendation");
      return { ...q, sections: [...q.sections.filter((s) => s !== "Recommendation"), "Recommendation"] };
    },
  },
  {
    id: "title",
    text: "Starts with a title",
    family: "structure",
    verifier: { kind: "regex", pattern: "^# \\S" },
    apply: (p) => p,
  },
  {
    id: "sections-4",
    text: "Is organised in at least four sections",
    family: "structure",
    group: "section-count",
    verifier: { kind: "markdown", headings: { min: 4 }, headingLevel: 2 },
    apply: (p) => ({
      ...p,
      sections: [...p.sections, ...SECTION_NAMES.filter((s) => !p.sections.includes(s))].slice(
        0,
        Math.max(4, p.sections.length),
      ),
    }),
  },
  {
    id: "sections-max-3",
    text: "Has no more than three sections",
    family: "structure",
    group: "section-count",
    verifier: { kind: "markdown", headings: { max: 3 }, headingLevel: 2 },
    apply: (p) => ({ ...p, sections: p.sections.slice(0, 3) }),
  },
  {
    id: "bullets-5",
    text: "Uses a bulleted list of at least five points",
    family: "format",
    group: "bullets",
    verifier: { kind: "markdown", bullets: { min: 5 } },
    apply: (p) => ({ ...p, bullets: Math.max(5, p.bullets) }),
  },
  {
    id: "bullets-3",
    text: "Lists the key points as bullets (three or more)",
    family: "format",
    group: "bullets",
    verifier: { kind: "markdown", bullets: { min: 3 } },
    apply: (p) => ({ ...p, bullets: Math.max(3, p.bullets) }),
  },
  {
    id: "no-bullets",
    text: "Is written in prose, without bullet lists",
    family: "format",
    group: "bullets",
    verifier: { kind: "markdown", bullets: { max: 0 } },
    apply: (p) => ({ ...p, bullets: 0 }),
  },
  {
    id: "table-1",
    text: "Includes at least one table",
    family: "format",
    group: "tables",
    verifier: { kind: "markdown", tables: { min: 1 } },
    apply: (p) => ({ ...p, tables: Math.max(1, p.tables) }),
  },
  {
    id: "table-2",
    text: "Includes at least two tables",
    family: "format",
    group: "tables",
    verifier: { kind: "markdown", tables: { min: 2 } },
    apply: (p) => ({ ...p, tables: Math.max(2, p.tables) }),
  },
  {
    id: "no-tables",
    text: "Has no tables",
    family: "format",
    group: "tables",
    verifier: { kind: "markdown", tables: { max: 0 } },
    apply: (p) => ({ ...p, tables: 0 }),
  },
  {
    id: "words-max-250",
    text: "Is short: at most 250 words",
    family: "length",
    group: "length",
    verifier: { kind: "length", unit: "words", max: 250 },
    apply: (p) => ({ ...p, paragraphsPerSection: 1, sections: p.sections.slice(0, 4), style: "plain" }),
  },
  {
    id: "words-250-600",
    text: "Is between 250 and 600 words long",
    family: "length",
    group: "length",
    verifier: { kind: "length", unit: "words", min: 250, max: 600 },
    apply: (p) => ({
      ...p,
      paragraphsPerSection: 2,
      sections:
        p.sections.length < 4
          ? [...p.sections, ...SECTION_NAMES.filter((s) => !p.sections.includes(s))].slice(0, 5)
          : p.sections.slice(0, 6),
    }),
  },
  {
    id: "words-min-600",
    text: "Is thorough: at least 600 words",
    family: "length",
    group: "length",
    verifier: { kind: "length", unit: "words", min: 600 },
    apply: (p) => ({
      ...p,
      paragraphsPerSection: 4,
      style: "technical",
      sections: [...p.sections, ...SECTION_NAMES.filter((s) => !p.sections.includes(s))].slice(0, 7),
    }),
  },
  {
    id: "sentences-max-25",
    text: "Keeps to at most 25 sentences",
    family: "length",
    group: "sentences",
    verifier: { kind: "length", unit: "sentences", max: 25 },
    apply: (p) => ({ ...p, paragraphsPerSection: 1, sections: p.sections.slice(0, 5) }),
  },
  {
    id: "sentences-min-15",
    text: "Develops the argument over at least 15 sentences",
    family: "length",
    group: "sentences",
    verifier: { kind: "length", unit: "sentences", min: 15 },
    apply: (p) => ({ ...p, paragraphsPerSection: Math.max(3, p.paragraphsPerSection) }),
  },
  {
    id: "cite-1",
    text: "Cites at least one source",
    family: "evidence",
    group: "cites",
    verifier: { kind: "citations", min: 1, styles: ["bracket"] },
    apply: (p) => ({ ...p, citations: Math.max(1, p.citations) }),
  },
  {
    id: "cite-2",
    text: "Cites at least two sources",
    family: "evidence",
    group: "cites",
    verifier: { kind: "citations", min: 2, styles: ["bracket"] },
    apply: (p) => ({ ...p, citations: Math.max(2, p.citations) }),
  },
  {
    id: "cite-3",
    text: "Backs its claims with at least three cited sources",
    family: "evidence",
    group: "cites",
    verifier: { kind: "citations", min: 3, styles: ["bracket"] },
    apply: (p) => ({ ...p, citations: Math.max(3, p.citations) }),
  },
  {
    id: "url-1",
    text: "Links to at least one source online",
    family: "evidence",
    group: "urls",
    verifier: { kind: "citations", min: 1, styles: ["url"] },
    apply: (p) => ({ ...p, urls: Math.max(1, p.urls) }),
  },
  {
    id: "no-urls",
    text: "Contains no web links",
    family: "evidence",
    group: "urls",
    verifier: { kind: "regex", pattern: "https?://", expect: "no-match" },
    apply: (p) => ({ ...p, urls: 0 }),
  },
  {
    id: "percent",
    text: "States the change as a percentage",
    family: "numbers",
    verifier: { kind: "regex", pattern: "\\d+(?:\\.\\d+)?%" },
    apply: (p) => ({ ...p, percent: true }),
  },
  {
    id: "currency",
    text: "Gives the cost in dollars",
    family: "numbers",
    verifier: { kind: "regex", pattern: "\\$\\d" },
    apply: (p) => ({ ...p, currency: true }),
  },
  {
    id: "year",
    text: "Names the year of completion",
    family: "numbers",
    verifier: { kind: "regex", pattern: "\\b20\\d\\d\\b" },
    apply: (p) => ({ ...p, year: true }),
  },
  {
    id: "figures-3",
    text: "Quantifies with at least three figures",
    family: "numbers",
    verifier: { kind: "regex", pattern: "\\b\\d[\\d,.]*\\b", minMatches: 3 },
    apply: (p) => ({ ...p, percent: true, currency: true, year: true }),
  },
  {
    id: "recommend",
    text: "States a clear recommendation",
    family: "decision",
    verifier: { kind: "regex", pattern: "\\bwe recommend\\b", flags: "i" },
    apply: (p) => ({ ...p, recommendation: true }),
  },
  {
    id: "no-hedging",
    text: "Avoids hedging words such as might, perhaps or possibly",
    family: "tone",
    verifier: { kind: "excludes", terms: ["might", "perhaps", "possibly", "maybe"], wholeWord: true },
    apply: (p) => ({ ...p, hedging: false }),
  },
  {
    id: "no-exclamations",
    text: "Uses no exclamation marks",
    family: "tone",
    verifier: { kind: "regex", pattern: "!", expect: "no-match" },
    apply: (p) => ({ ...p, informal: false }),
  },
  {
    id: "formal",
    text: "Avoids informal words like gonna, awesome or stuff",
    family: "tone",
    verifier: { kind: "excludes", terms: ["gonna", "awesome", "stuff"], wholeWord: true },
    apply: (p) => ({ ...p, informal: false }),
  },
  {
    id: "plain-language",
    text: "Reads easily: grade 8 or below",
    family: "tone",
    group: "readability",
    verifier: { kind: "readability", max: 8 },
    apply: (p) => ({ ...p, style: "plain" }),
  },
  {
    id: "professional-register",
    text: "Reads at a professional level: grade 12 or above",
    family: "tone",
    group: "readability",
    verifier: { kind: "readability", min: 12 },
    apply: (p) => ({ ...p, style: "technical" }),
  },
];

/** The bank criteria about a task's own brief: "Mentions <term>", for terms drawn from its prompt. */
export function briefCriterion(term: string): BankCriterion {
  return {
    id: `brief-${term.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`,
    text: `Addresses "${term}" from the brief`,
    family: "brief",
    verifier: { kind: "includes", terms: [term] },
    apply: (p) => (p.briefTerms.includes(term) ? p : { ...p, briefTerms: [...p.briefTerms, term] }),
  };
}

const STOP = new Set(
  "the and for with that this from your will have are you our their been into about which each they them than then such other these those must should would could when what where also only more most very over under between after before while within without include including provide using based make made need needs".split(
    " ",
  ),
);

/** Salient words of a task prompt: long, not stop words, most frequent first (ties by first use). */
export function briefTerms(prompt: string, count: number): string[] {
  const counts = new Map<string, { n: number; first: number }>();
  (prompt.toLowerCase().match(/[a-z][a-z-]{5,}/g) ?? []).forEach((w, i) => {
    if (STOP.has(w)) return;
    const c = counts.get(w);
    if (c) c.n++;
    else counts.set(w, { n: 1, first: i });
  });
  return [...counts.entries()]
    .sort((a, b) => b[1].n - a[1].n || a[1].first - b[1].first)
    .slice(0, count)
    .map(([w]) => w);
}
