import { StatisticsInputError } from "../metrics/errors.js";
import { mean, median } from "../metrics/summary.js";
import type { FlatRubric } from "./flat.js";
import type { StagedRubric } from "./staged.js";

// GPT-2's pre-tokenisation pattern (contractions, letter runs, digit runs, punctuation runs, each
// with its leading space). For English prose a BPE tokenizer keeps almost every such piece whole,
// so the count is a close lower bound on model tokens without shipping a vocabulary.
const PRETOKEN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Approximate token count of a text: its GPT-2-style pre-tokens (whitespace runs between words
 * are not counted). Used for rubric structure statistics such as "tokens per criterion".
 *
 * @example
 * approximateTokens("Cites at least two sources."); // 6
 */
export function approximateTokens(text: string): number {
  let n = 0;
  for (const match of text.matchAll(PRETOKEN)) if (match[0].trim() !== "") n++;
  return n;
}

export interface RubricStructure {
  readonly criteria: number;
  /** Tokens of each criterion's statement (flat: `text`; staged: the rule's `description`). */
  readonly tokensPerCriterion: readonly number[];
  readonly stages: number;
  /** Staged: rules of type `code` and `llm_judge`; flat: criteria by verifier kind. */
  readonly byKind: Readonly<Record<string, number>>;
  /** Required stages whose failure stops or zeroes scoring. */
  readonly stoppingGates: number;
  readonly penalties: number;
}

/** The structure of one rubric, in either form: what the ARCANE paper reports of learned rubrics. */
export function rubricStructure(rubric: FlatRubric | StagedRubric): RubricStructure {
  const byKind: Record<string, number> = {};
  if ("stages" in rubric) {
    const rules = rubric.stages.flatMap((s) => s.rules);
    for (const rule of rules) byKind[rule.type] = (byKind[rule.type] ?? 0) + 1;
    return {
      criteria: rules.length,
      tokensPerCriterion: rules.map((r) => approximateTokens(r.description.trim() === "" ? r.name : r.description)),
      stages: rubric.stages.length,
      byKind,
      stoppingGates: rubric.stages.filter((s) => s.is_required && s.on_failure_action !== "continue").length,
      penalties: 0,
    };
  }
  for (const c of rubric.criteria) byKind[c.verifier.kind] = (byKind[c.verifier.kind] ?? 0) + 1;
  return {
    criteria: rubric.criteria.length,
    tokensPerCriterion: rubric.criteria.map((c) => approximateTokens(c.text)),
    stages: 1,
    byKind,
    stoppingGates: 0,
    penalties: rubric.criteria.filter((c) => c.polarity === "penalty").length,
  };
}

export interface RubricSetStructure {
  readonly rubrics: number;
  readonly criteriaPerRubric: {
    readonly mean: number;
    readonly median: number;
    readonly min: number;
    readonly max: number;
  };
  readonly tokensPerCriterion: { readonly mean: number; readonly median: number };
  readonly stagesPerRubric: number;
  readonly byKind: Readonly<Record<string, number>>;
  readonly stoppingGates: number;
  readonly rubricsWithStoppingGate: number;
}

/**
 * Structure statistics over a set of rubrics, as the ARCANE paper reports them (≈ 12 criteria
 * per rubric and 17–18 tokens per criterion for its learned rubrics).
 */
export function rubricSetStructure(rubrics: readonly (FlatRubric | StagedRubric)[]): RubricSetStructure {
  if (rubrics.length === 0) throw new StatisticsInputError("rubricSetStructure: no rubrics");
  const each = rubrics.map(rubricStructure);
  const counts = each.map((s) => s.criteria);
  const tokens = each.flatMap((s) => s.tokensPerCriterion);
  const byKind: Record<string, number> = {};
  for (const s of each) for (const [k, v] of Object.entries(s.byKind)) byKind[k] = (byKind[k] ?? 0) + v;
  return {
    rubrics: rubrics.length,
    criteriaPerRubric: {
      mean: mean(counts),
      median: median(counts),
      min: Math.min(...counts),
      max: Math.max(...counts),
    },
    tokensPerCriterion: { mean: mean(tokens), median: median(tokens) },
    stagesPerRubric: mean(each.map((s) => s.stages)),
    byKind,
    stoppingGates: each.reduce((a, s) => a + s.stoppingGates, 0),
    rubricsWithStoppingGate: each.filter((s) => s.stoppingGates > 0).length,
  };
}
