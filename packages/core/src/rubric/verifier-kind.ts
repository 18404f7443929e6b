import { z } from "zod";
import { RubricError } from "../errors/rubric-error.js";
import { nearestName } from "../suggestion/nearest-name.js";

/** A spec as far as core knows it: its kind, and fields that the kind's verifier parses itself. */
export type OpenVerifierSpec<K extends string> = { readonly kind: K } & { readonly [field: string]: unknown };

/**
 * The verifier kinds a rubric may name in `verifier.kind`, each mapped to the spec its verifier
 * takes. Core declares the built-in kinds; their spec schemas live with their verifiers in
 * `@rubric/verifiers`, so here they are open records. A package that adds a verifier adds its kind
 * by declaration merging, and rubric literals naming it type-check from then on:
 *
 * @example
 * declare module "@rubric/core" {
 *   interface VerifierKinds {
 *     "word-count": { kind: "word-count"; max: number };
 *   }
 * }
 * registerVerifierKind("word-count"); // the run-time half: rubrics naming it now parse
 */
export interface VerifierKinds {
  regex: OpenVerifierSpec<"regex">;
  includes: OpenVerifierSpec<"includes">;
  excludes: OpenVerifierSpec<"excludes">;
  length: OpenVerifierSpec<"length">;
  markdown: OpenVerifierSpec<"markdown">;
  citations: OpenVerifierSpec<"citations">;
  numeric: OpenVerifierSpec<"numeric">;
  readability: OpenVerifierSpec<"readability">;
  "json-schema": OpenVerifierSpec<"json-schema">;
  python: OpenVerifierSpec<"python">;
  js: OpenVerifierSpec<"js">;
  "llm-judge": OpenVerifierSpec<"llm-judge">;
}

/** A kind a rubric may name: a built-in one, or one a package declared in `VerifierKinds`. */
export type VerifierKind = Extract<keyof VerifierKinds, string>;

/** The kinds `@rubric/verifiers` implements, in the order its registry lists them. */
export const BUILT_IN_VERIFIER_KINDS = [
  "regex",
  "includes",
  "excludes",
  "length",
  "markdown",
  "citations",
  "numeric",
  "readability",
  "json-schema",
  "python",
  "js",
  "llm-judge",
] as const satisfies readonly VerifierKind[];

/** Thrown when a kind cannot be registered (an empty or blank name). */
export class VerifierKindError extends RubricError {
  override readonly name = "VerifierKindError";
  readonly code = "rubric.verifier-kind";
}

// The run-time half of `VerifierKinds`: types vanish at run time, so the kinds a parsed rubric may
// name are kept here. One set per process (per copy of core), like the interface it mirrors.
const registered = new Set<string>(BUILT_IN_VERIFIER_KINDS);

/**
 * Lets rubrics name `kind` at run time, as `VerifierKinds` does at compile time. Registering a
 * verifier in a `VerifierRegistry` of `@rubric/verifiers` does this for its kind; call it directly
 * when rubrics are parsed before any registry exists. Registering a kind twice is harmless.
 *
 * @example
 * registerVerifierKind("word-count");
 * parseFlatRubric({ id: "r", criteria: [{ id: "a", text: "Short", weight: 1, verifier: { kind: "word-count", max: 90 } }] });
 * @throws VerifierKindError for an empty or blank kind
 */
export function registerVerifierKind(kind: string): void {
  if (typeof kind !== "string" || kind.trim() === "")
    throw new VerifierKindError(`registerVerifierKind: kind must be a non-empty string, got ${JSON.stringify(kind)}`);
  registered.add(kind);
}

/** Every kind rubrics may name now: the built-in ones and the registered ones, sorted. */
export function knownVerifierKinds(): string[] {
  return [...registered].sort();
}

/** Whether rubrics may name `kind` now (built in or registered). */
export function isKnownVerifierKind(kind: string): kind is VerifierKind {
  return registered.has(kind);
}

/**
 * `verifier.kind`: a non-empty string naming a known kind. Unknown kinds are refused with the
 * nearest known one, so `"regx"` reads `did you mean "regex"?`.
 *
 * The cast gives the schema the `VerifierKind` type while the schema itself stays a string check:
 * the set of kinds is open (plug-ins add to it after this module loads), so it cannot be an enum,
 * and the JSON Schema export stays `{ type: "string", minLength: 1 }`.
 */
export const VerifierKindSchema = z
  .string()
  .min(1)
  .superRefine((kind, ctx) => {
    if (registered.has(kind) || kind === "") return;
    // Kinds are short (`js`, `regex`), so two edits still read as a typo; case is folded because
    // a kind is never meant to differ from another by case alone.
    const nearest = nearestName(kind, knownVerifierKinds(), { minTolerance: 2, ignoreCase: true });
    ctx.addIssue({
      code: "custom",
      input: kind,
      message:
        `unknown verifier kind ${JSON.stringify(kind)}` +
        (nearest === undefined ? "." : `; did you mean ${JSON.stringify(nearest)}?`) +
        ` Known kinds: ${knownVerifierKinds().join(", ")} (a package that adds a kind registers it with registerVerifierKind)`,
    });
  }) as unknown as z.ZodType<VerifierKind, VerifierKind>;
