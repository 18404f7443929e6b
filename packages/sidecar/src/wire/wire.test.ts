import { createRng } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { SIDECAR_METHODS } from "./methods.js";

// The client checks params before sending; these are the μ refinements zod cannot infer from types.
const pathOf = (method: "mu.generate" | "mu.export" | "mu.pretrain", params: unknown) => {
  const checked = SIDECAR_METHODS[method].params.safeParse(params);
  return checked.success ? undefined : checked.error.issues.map((issue) => issue.path.join("."));
};

describe("μ's wire schemas", () => {
  const generate = { prompts: [[1, 2], [3]], max_new_tokens: 4, eos_id: 2 };
  const rng = [createRng(1).state(), createRng(2).state()];

  it("mu.generate takes core's RngState, one per prompt, exactly when it samples", () => {
    expect(pathOf("mu.generate", generate)).toBeUndefined();
    expect(pathOf("mu.generate", { ...generate, temperature: 0.7, rng })).toBeUndefined();
    expect(pathOf("mu.generate", { ...generate, temperature: 0.7 })).toEqual(["rng"]);
    expect(pathOf("mu.generate", { ...generate, temperature: 0.7, rng: rng.slice(1) })).toEqual(["rng"]);
    expect(pathOf("mu.generate", { ...generate, rng })).toEqual(["rng"]);
    expect(pathOf("mu.generate", { ...generate, temperature: 0, rng })).toEqual(["rng"]);
    const zero = { ...rng[0]!, words: [0, 0, 0, 0] };
    expect(pathOf("mu.generate", { ...generate, temperature: 1, rng: [zero, rng[1]] })).toEqual(["rng.0.words"]);
    expect(pathOf("mu.generate", { ...generate, prompts: [[1], []] })).toEqual(["prompts.1"]);
    expect(pathOf("mu.generate", { ...generate, max_new_tokens: 0 })).toEqual(["max_new_tokens"]);
  });

  it("mu.pretrain takes texts of two tokens or more, as the sidecar does", () => {
    expect(
      pathOf("mu.pretrain", {
        texts: [
          [1, 2],
          [3, 4, 5],
        ],
        learning_rate: 1e-3,
      }),
    ).toBeUndefined();
    expect(pathOf("mu.pretrain", { texts: [[1, 2], [3]], learning_rate: 1e-3 })).toEqual(["texts.1"]);
    expect(pathOf("mu.pretrain", { texts: [], learning_rate: 1e-3 })).toEqual(["texts"]);
  });

  it("mu.export requires a tokenizer whose files have simple names that are not the export's own", () => {
    const files = (names: string[]) => Object.fromEntries(names.map((name) => [name, "{}"]));
    const exported = (names: string[]) => ({ dir: "models/mu", tokenizer: { kind: "byte-bpe", files: files(names) } });
    expect(pathOf("mu.export", exported(["tokenizer.json", "merges.txt"]))).toBeUndefined();
    expect(pathOf("mu.export", { dir: "models/mu" })).toEqual(["tokenizer"]);
    expect(pathOf("mu.export", exported([]))).toEqual(["tokenizer.files"]);
    for (const name of ["../x.json", "sub/x.json", ".hidden", "manifest.json", "Score.onnx"])
      expect(pathOf("mu.export", exported([name]))?.[0]).toMatch(/^tokenizer\.files/);
    expect(pathOf("mu.export", { ...exported(["t.json"]), max_criteria_tokens: 0 })).toEqual(["max_criteria_tokens"]);
  });
});
