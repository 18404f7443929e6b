import { z } from "zod";
import { errorDraft, okDraft, type Verifier } from "../verifier/verifier.js";
import { RegexTimeLimitError, rulePatternCache, rulePatternIssue } from "./regex-engine.js";
import { rule } from "./rule.js";

export const RegexSpecSchema = z
  .strictObject({
    kind: z.literal("regex"),
    /** JavaScript syntax; run in linear time (RE2) unless `engine` is `js` (see `compileRulePattern`). */
    pattern: z.string().min(1),
    flags: z
      .string()
      .regex(/^[dgimsuvy]*$/, "expected RegExp flags from d g i m s u v y")
      .optional(),
    /**
     * `re2` (default): linear-time matching. `js`: JavaScript's backtracking engine, for
     * backreferences and lookahead, under the operator's time limit (a rubric cannot raise it).
     */
    engine: z.enum(["re2", "js"]).default("re2"),
    /** `match` (default): the output must match; `no-match`: it must not. */
    expect: z.enum(["match", "no-match"]).default("match"),
    /** Partial credit: score = min(1, matches / minMatches). */
    minMatches: z.number().int().min(1).optional(),
  })
  .superRefine((spec, ctx) => {
    const issue = rulePatternIssue(spec.pattern, spec.flags ?? "", spec.engine);
    if (issue) ctx.addIssue({ code: "custom", ...issue });
  });
export type RegexSpec = z.output<typeof RegexSpecSchema>;

export interface RegexVerifierOptions {
  /** The most one match of an `engine: "js"` pattern may take, in ms. Default 200. */
  readonly jsLimitMs?: number;
  /**
   * Run an `re2` pattern proven linear on V8's RegExp (default true; see `compileRulePattern`).
   * `false` runs every `re2` pattern on re2js.
   */
  readonly regExpWhenLinear?: boolean;
}

/**
 * `regex`: the output matches a pattern (or must not); partial credit towards `minMatches`. A
 * pattern on the `js` engine that runs past its limit is an error verdict, never a 0 or a 1.
 *
 * @example
 * const registry = new VerifierRegistry([createRegexVerifier({ jsLimitMs: 50 })]);
 */
export function createRegexVerifier(options: RegexVerifierOptions = {}): Verifier<RegexSpec> {
  const patternOf = rulePatternCache(options);
  return rule("regex", RegexSpecSchema, (spec, output) => {
    // Matches past what the verdict needs change nothing, so they are not looked for.
    const needed = spec.expect === "no-match" ? 1 : (spec.minMatches ?? 1);
    let matches: number;
    try {
      matches = patternOf(spec.pattern, spec.flags ?? "", spec.engine).count(output, needed);
    } catch (error) {
      if (error instanceof RegexTimeLimitError) return errorDraft(error.message);
      throw error;
    }
    const found = `${matches === needed ? "at least " : ""}${matches} match(es) of /${spec.pattern}/`;
    if (spec.expect === "no-match") return okDraft(matches === 0 ? 1 : 0, `${found}; expected none`);
    return okDraft(Math.min(1, matches / needed), `${found}; ${needed} needed`);
  });
}

/** The `regex` verifier with the default `js`-engine limit. */
export const regexVerifier = createRegexVerifier();
