import { isRubricError } from "@rubric/core";
import { describe, expect, it } from "vitest";
import * as js from "./js/errors.js";
import * as python from "./python/errors.js";
import { SANDBOX_ERROR_CODES, type SandboxErrorKind } from "./failure.js";

type Failure = { readonly kind: SandboxErrorKind; readonly code: string; readonly message: string };

/** Every failure class a sandbox module exports, built with a message. */
function failures(module: Record<string, unknown>): Failure[] {
  return Object.entries(module)
    .filter(([name, value]) => name.endsWith("Error") && typeof value === "function")
    .map(([, value]) => new (value as new (args: { message: string }) => Failure)({ message: "m" }))
    .filter((error) => "_tag" in error);
}

describe("sandbox failures", () => {
  const python_ = failures(python);
  const js_ = failures(js);

  it("finds all seven failures of each sandbox", () => {
    expect(python_).toHaveLength(7);
    expect(js_).toHaveLength(7);
  });

  it("carry the code of their kind, recognised as toolkit errors", () => {
    for (const failure of [...python_, ...js_]) {
      expect(failure.code).toBe(SANDBOX_ERROR_CODES[failure.kind]);
      expect(isRubricError(failure)).toBe(true);
    }
  });

  it("share one set of kinds: each sandbox's kinds are the table's, and a kind both have is one code", () => {
    const kinds = (list: Failure[]) => list.map((f) => f.kind).sort();
    expect(new Set([...kinds(python_), ...kinds(js_)])).toEqual(new Set(Object.keys(SANDBOX_ERROR_CODES)));
    const shared = kinds(python_).filter((k) => kinds(js_).includes(k));
    expect(shared).toEqual(["crashed", "exception", "invalid-result", "memory", "sandbox-unavailable", "timeout"]);
  });

  it("keeps the caller's bad limits apart from the rule's failures", () => {
    const error = new js.InvalidJsRuleLimitsError("memoryBytes must be ≤ 256 MiB, got 1 GiB");
    expect(error.code).toBe("sandbox.invalid-limits");
    expect(Object.values(SANDBOX_ERROR_CODES)).not.toContain(error.code);
  });
});
