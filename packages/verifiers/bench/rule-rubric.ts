/**
 * The rule rubric both `bench` (against promptfoo) and `bench:regex` (against native checks)
 * score: 12 criteria (four `includes`, five `regex`, two `length`, one `excludes`) on 1,000 short
 * outputs assembled from a fixed vocabulary.
 */
import { parseFlatRubric } from "@rubric/core";

export const terms = ["revenue", "margin", "forecast", "risk"];
export const patterns = ["\\bQ[1-4]\\b", "\\d+(?:\\.\\d+)?%", "\\$\\d", "\\b20\\d\\d\\b"];

export const rubric = parseFlatRubric({
  id: "bench-rules",
  criteria: [
    ...terms.map((t, i) => ({
      id: `has-${t}`,
      text: `Mentions ${t}`,
      weight: 1 + (i % 2),
      verifier: { kind: "includes", terms: [t] },
    })),
    ...patterns.map((p, i) => ({
      id: `re-${i}`,
      text: `Matches ${p}`,
      weight: 1,
      verifier: { kind: "regex", pattern: p },
    })),
    { id: "max-words", text: "At most 60 words", weight: 1, verifier: { kind: "length", unit: "words", max: 60 } },
    {
      id: "min-chars",
      text: "At least 80 characters",
      weight: 1,
      verifier: { kind: "length", unit: "chars", min: 80 },
    },
    { id: "cites", text: "Cites a source", weight: 1, verifier: { kind: "regex", pattern: "\\[\\d+\\]" } },
    { id: "no-hype", text: "Never says guaranteed", weight: 2, verifier: { kind: "excludes", terms: ["guaranteed"] } },
  ],
});

const words = [
  "the",
  "revenue",
  "grew",
  "margin",
  "in",
  "Q3",
  "by",
  "4.2%",
  "to",
  "$12M",
  "forecast",
  "2026",
  "risk",
  "[1]",
  "guaranteed",
  "steady",
];

export const outputs = Array.from({ length: 1000 }, (_, i) => ({
  id: `o${i}`,
  output: Array.from({ length: 20 + (i % 50) }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(" "),
}));
