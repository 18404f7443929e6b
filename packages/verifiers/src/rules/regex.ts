import { z } from "zod";
import { okDraft } from "../verifier/verifier.js";
import { rule } from "./rule.js";

export const RegexSpecSchema = z
  .strictObject({
    kind: z.literal("regex"),
    pattern: z.string().min(1),
    flags: z
      .string()
      .regex(/^[dgimsuvy]*$/, "expected RegExp flags from d g i m s u v y")
      .optional(),
    /** `match` (default): the output must match; `no-match`: it must not. */
    expect: z.enum(["match", "no-match"]).default("match"),
    /** Partial credit: score = min(1, matches / minMatches). */
    minMatches: z.number().int().min(1).optional(),
  })
  .superRefine((spec, ctx) => {
    try {
      new RegExp(spec.pattern, spec.flags);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        path: ["pattern"],
        message: `invalid regular expression: ${(error as Error).message}`,
      });
    }
  });
export type RegexSpec = z.output<typeof RegexSpecSchema>;

/** `regex`: the output matches a pattern (or must not); partial credit towards `minMatches`. */
export const regexVerifier = rule("regex", RegexSpecSchema, (spec, output) => {
  const flags = spec.flags ?? "";
  const matches = output.match(new RegExp(spec.pattern, flags.includes("g") ? flags : `${flags}g`))?.length ?? 0;
  if (spec.expect === "no-match")
    return okDraft(matches === 0 ? 1 : 0, `${matches} match(es) of /${spec.pattern}/; expected none`);
  const needed = spec.minMatches ?? 1;
  return okDraft(Math.min(1, matches / needed), `${matches} match(es) of /${spec.pattern}/; ${needed} needed`);
});
