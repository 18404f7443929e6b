import { extractJson } from "@rubric/core";
import { z } from "zod";
import { CriteriaUnparsedError } from "../errors.js";
import { criteriaCount } from "./prompt.js";

/** The generation head's target and output: `{"criteria": [K strings]}`. */
export const CriteriaTargetSchema = z.object({ criteria: z.array(z.string()) });

/** What a generation may hold and still be read: the criteria array, whatever its entries. */
const GeneratedCriteriaSchema = z.object({ criteria: z.array(z.unknown()) });

/** What {@link parseCriteria} recovered. */
export interface ParsedCriteria {
  /** Exactly K criteria, trimmed. */
  readonly criteria: string[];
  /** `padded` when fewer than K came back (the rest are empty strings), `truncated` when more; absent when exactly K. */
  readonly adjusted?: "padded" | "truncated";
}

/**
 * The target text μ is trained to write for `criteria`, byte for byte what {@link parseCriteria}
 * reads back (the sidecar appends EOS).
 *
 * @example
 * criteriaTarget(["Targets the second hop", "Avoids repeats", "Ready to answer"]);
 * // '{"criteria":["Targets the second hop","Avoids repeats","Ready to answer"]}'
 */
export function criteriaTarget(criteria: readonly string[]): string {
  return JSON.stringify({ criteria });
}

/**
 * The K criteria in a generation's text. Like ARCO's parser, it is lenient about the shape
 * (fences and commentary around the JSON are skipped, non-string entries dropped) and strict about
 * the count: fewer than K are padded with empty strings, more are cut to the first K, and the
 * result says which. A text with no `{"criteria": [...]}` object is a `CriteriaUnparsedError`:
 * padding nothing to K would hand the score head K empty criteria as if the model had written them.
 *
 * @example
 * parseCriteria('{"criteria": ["a", "b"]}', 3); // { criteria: ["a", "b", ""], adjusted: "padded" }
 */
export function parseCriteria(text: string, k?: number): ParsedCriteria {
  const count = criteriaCount(k);
  const value = extractJson(text);
  if (value === undefined) throw new CriteriaUnparsedError(text, "no JSON value in the text");
  const parsed = GeneratedCriteriaSchema.safeParse(value);
  if (!parsed.success) throw new CriteriaUnparsedError(text, 'expected an object {"criteria": [...]}');
  const found = parsed.data.criteria.filter((c): c is string => typeof c === "string").map((c) => c.trim());
  if (found.length === count) return { criteria: found };
  if (found.length > count) return { criteria: found.slice(0, count), adjusted: "truncated" };
  return {
    criteria: [...found, ...Array.from({ length: count - found.length }, () => "")],
    adjusted: "padded",
  };
}
