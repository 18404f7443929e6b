import {
  rubricCriteria,
  type FlatRubric,
  type RubricCriterion,
  type StagedRubric,
  type VerifierSpec,
} from "@rubric/core";
import type { z } from "zod";
import { LlmJudgeSpecSchema } from "../judge/llm-judge.js";
import type { Verifier } from "../verifier/verifier.js";
import type { VerifierRegistry } from "./registry.js";

/** One criterion's verifier as checked against a registry, located in the rubric. */
export type VerifierSpecCheck = {
  readonly criterion: RubricCriterion;
  /**
   * Where in the rubric: `criteria[2].verifier.pattern` (flat); `stages[0].rules[1]` (staged,
   * whose rules carry no spec of their own: the spec is derived from the rule).
   */
  readonly path: string;
} & (
  | { readonly ok: true; readonly spec: VerifierSpec; readonly verifier: Verifier | undefined }
  | {
      readonly ok: false;
      /** What is wrong, for a reader who knows only the criterion: `invalid regex spec at verifier.pattern: …`. */
      readonly problem: string;
      /** What is wrong, for a reader who is shown `path`: `invalid regex spec: …`. */
      readonly message: string;
    }
);

export interface VerifierSpecCheckOptions {
  /**
   * Check `llm-judge` specs against the judge's spec schema when the registry holds no judge,
   * instead of reporting the kind as missing: what `rubric validate` does, where the judge model
   * is chosen later, at score time.
   */
  readonly judgeChosenLater?: boolean;
}

/** A criterion of the rubric with where it sits in the file. */
function located(rubric: FlatRubric | StagedRubric): { criterion: RubricCriterion; path: string; flat: boolean }[] {
  const criteria = rubricCriteria(rubric);
  if (!("stages" in rubric)) return criteria.map((criterion, i) => ({ criterion, path: `criteria[${i}]`, flat: true }));
  const paths = rubric.stages.flatMap((stage, s) => stage.rules.map((_, r) => `stages[${s}].rules[${r}]`));
  return criteria.map((criterion, i) => ({ criterion, path: paths[i]!, flat: false }));
}

/**
 * Checks every criterion's verifier against a registry: that its kind has a verifier, and that
 * its spec parses with that verifier's own schema (a regex RE2 cannot run, a length without a
 * unit). One entry per criterion, in scoring order; those not `ok` cannot be scored.
 *
 * @example
 * const unscorable = checkVerifierSpecs(rubric, createVerifierRegistry()).filter((c) => !c.ok);
 */
export function checkVerifierSpecs(
  rubric: FlatRubric | StagedRubric,
  registry: VerifierRegistry,
  options: VerifierSpecCheckOptions = {},
): VerifierSpecCheck[] {
  return located(rubric).map(({ criterion, path, flat }): VerifierSpecCheck => {
    const kind = criterion.verifier.kind;
    const verifier = registry.get(kind);
    const schema: z.ZodType | undefined =
      verifier?.specSchema ?? (options.judgeChosenLater && kind === "llm-judge" ? LlmJudgeSpecSchema : undefined);
    const at = flat ? `${path}.verifier` : path;
    if (!schema) {
      const hint =
        kind === "llm-judge" ? " (configure a judge model: createVerifierRegistry({ judge: llmJudge(model) }))" : "";
      const problem = `no verifier for kind ${JSON.stringify(kind)}${hint}; registered: ${registry.kinds().join(", ")}`;
      return { criterion, ok: false, path: flat ? `${at}.kind` : at, problem, message: problem };
    }
    const parsed = schema.safeParse(criterion.verifier);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      // An unknown key is reported at the key itself, which is where a reader looks for it.
      const keys = issue.code === "unrecognized_keys" && issue.keys.length === 1 ? [issue.keys[0]!] : [];
      const field = [...issue.path, ...keys].join(".");
      return {
        criterion,
        ok: false,
        path: flat && field !== "" ? `${at}.${field}` : at,
        problem: `invalid ${kind} spec at verifier.${field || "(root)"}: ${issue.message}`,
        message: `invalid ${kind} spec${flat ? "" : ` at verifier.${field || "(root)"}`}: ${issue.message}`,
      };
    }
    return { criterion, ok: true, path, spec: parsed.data as VerifierSpec, verifier };
  });
}
