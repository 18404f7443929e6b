/**
 * A verifier kind of your own, the way a package that adds verifiers does it: declare the kind in
 * core's `VerifierKinds` (so `verifier.kind` type-checks for it, and a typo does not), implement
 * `Verifier`, and register it (so rubrics naming it parse and score at run time).
 *
 *   pnpm --filter @rubric/examples custom-kind
 */
import { pathToFileURL } from "node:url";
import { RubricValidationError, parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, okDraft, scoreOutputs, type Verifier } from "@rubric/verifiers";
import { z } from "zod";

// 1. The spec, validated at the boundary like every built-in kind's.
export const WordCountSpecSchema = z.strictObject({
  kind: z.literal("word-count"),
  max: z.number().int().positive(),
});
export type WordCountSpec = z.output<typeof WordCountSpecSchema>;

// 2. The type half: `verifier: { kind: "word-count", … }` now compiles, `"word-cuont"` does not.
declare module "@rubric/core" {
  interface VerifierKinds {
    "word-count": WordCountSpec;
  }
}

// 3. The verifier: a pure check, so `cheap` (run inline, never cached).
export const wordCountVerifier: Verifier<WordCountSpec> = {
  kind: "word-count",
  specSchema: WordCountSpecSchema,
  cheap: true,
  async verify(_criterion, spec, input) {
    const words = input.output.split(/\s+/).filter(Boolean).length;
    return okDraft(words <= spec.max ? 1 : 0, `${words} words; at most ${spec.max}`);
  },
};

// 4. The run-time half: registering the verifier also registers its kind with core's parser.
const registry = createVerifierRegistry({ python: false, js: false, extra: [wordCountVerifier] });

/** Scores two memos on a rubric that mixes the new kind with a built-in one. */
export async function scoreMemos() {
  const rubric = parseFlatRubric({
    id: "memo",
    criteria: [
      { id: "short", text: "At most 8 words", weight: 1, verifier: { kind: "word-count", max: 8 } },
      { id: "revenue", text: "Mentions revenue", weight: 1, verifier: { kind: "includes", terms: ["revenue"] } },
    ],
  });
  return scoreOutputs(
    rubric,
    [
      { id: "tight", output: "Revenue rose 4% on steady demand." },
      { id: "rambling", output: "Well, where to begin: this quarter many things happened, some of them good." },
    ],
    { registry },
  );
}

/** What a mistyped kind in a JSON rubric looks like. */
export function typoMessage(): string {
  try {
    parseFlatRubric({
      id: "typo",
      criteria: [{ id: "short", text: "Short", weight: 1, verifier: { kind: "word-cuont", max: 8 } }],
    });
    return "accepted";
  } catch (error) {
    if (error instanceof RubricValidationError) return error.message;
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const result of await scoreMemos())
    console.log(`${result.id}: ${result.score?.normalized} (${result.verdicts.map((v) => v.rationale).join("; ")})`);
  console.log(typoMessage());
}
