import { describe, expect, expectTypeOf, it } from "vitest";
import { RubricValidationError } from "./errors.js";
import type { FlatRubricInput, VerifierSpec } from "./flat.js";
import { parseFlatRubric } from "./parse.js";
import {
  BUILT_IN_VERIFIER_KINDS,
  VerifierKindError,
  isKnownVerifierKind,
  knownVerifierKinds,
  registerVerifierKind,
  type VerifierKind,
} from "./verifier-kind.js";

const withKind = (kind: string) => ({
  id: "r",
  criteria: [{ id: "a", text: "Short", weight: 1, verifier: { kind, max: 90 } }],
});

function parseError(value: unknown): RubricValidationError {
  try {
    parseFlatRubric(value);
  } catch (error) {
    if (error instanceof RubricValidationError) return error;
    throw error;
  }
  throw new Error("expected the rubric to be refused");
}

describe("verifier kinds at run time", () => {
  it("accepts every built-in kind", () => {
    for (const kind of BUILT_IN_VERIFIER_KINDS)
      expect(parseFlatRubric(withKind(kind)).criteria[0]!.verifier.kind).toBe(kind);
    expect(knownVerifierKinds()).toEqual(expect.arrayContaining([...BUILT_IN_VERIFIER_KINDS]));
  });

  it("refuses a mistyped kind, naming the path and the nearest known kind", () => {
    const error = parseError(withKind("regx"));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.path).toBe("criteria[0].verifier.kind");
    expect(error.message).toMatch(
      /^criteria\[0\]\.verifier\.kind: unknown verifier kind "regx"; did you mean "regex"\?/,
    );
    expect(parseError(withKind("llm_judge")).message).toContain('did you mean "llm-judge"?');
    expect(parseError(withKind("json")).message).toContain('did you mean "json-schema"?');
  });

  it("names no kind when nothing is close, but lists the known ones", () => {
    const { message } = parseError(withKind("sentiment-analysis"));
    expect(message).not.toContain("did you mean");
    expect(message).toContain('unknown verifier kind "sentiment-analysis". Known kinds:');
    expect(message).toContain("Known kinds: citations, excludes, includes, js, json-schema, length, llm-judge");
    expect(message).toContain("registerVerifierKind");
  });

  it("accepts a kind once a package registers it, and only then", () => {
    expect(isKnownVerifierKind("core-test-word-count")).toBe(false);
    expect(parseError(withKind("core-test-word-count")).issues[0]!.path).toBe("criteria[0].verifier.kind");
    registerVerifierKind("core-test-word-count");
    registerVerifierKind("core-test-word-count");
    expect(isKnownVerifierKind("core-test-word-count")).toBe(true);
    expect(parseFlatRubric(withKind("core-test-word-count")).criteria[0]!.verifier).toEqual({
      kind: "core-test-word-count",
      max: 90,
    });
    expect(knownVerifierKinds().filter((k) => k === "core-test-word-count")).toHaveLength(1);
  });

  it("refuses to register a blank kind, with a coded error", () => {
    expect(() => registerVerifierKind("  ")).toThrow(VerifierKindError);
    expect(() => registerVerifierKind("")).toThrow(/kind must be a non-empty string, got ""/);
    try {
      registerVerifierKind("");
    } catch (error) {
      expect((error as VerifierKindError).code).toBe("rubric.verifier-kind");
    }
  });
});

// Checked by `pnpm typecheck` (tsc over src/, tests included): an unused `@ts-expect-error` is
// itself an error, so these lines fail the build if a typo ever compiles again.
describe("verifier kinds at compile time", () => {
  it("types verifier.kind as the union of known kinds", () => {
    expectTypeOf<VerifierSpec["kind"]>().toEqualTypeOf<VerifierKind>();
    expectTypeOf<"regex" | "llm-judge" | "json-schema">().toExtend<VerifierKind>();
    expectTypeOf<"regx">().not.toExtend<VerifierKind>();
    expectTypeOf<string>().not.toExtend<VerifierKind>();
  });

  it("a typo in a rubric literal does not compile", () => {
    const rubric: FlatRubricInput = {
      id: "typed",
      criteria: [
        { id: "a", text: "Cites a source", weight: 1, verifier: { kind: "citations", min: 1 } },
        {
          id: "b",
          text: "Mentions revenue",
          weight: 1,
          verifier: {
            // @ts-expect-error "includs" is not a VerifierKind
            kind: "includs",
            terms: ["revenue"],
          },
        },
      ],
    };
    // The same typo is refused at run time, for rubrics that arrive as JSON.
    expect(parseError(rubric).message).toContain('did you mean "includes"?');
  });
});
