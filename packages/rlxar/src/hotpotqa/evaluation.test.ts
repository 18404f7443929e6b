import { describe, expect, it } from "vitest";
import { RlxarFileError, RlxarInputError } from "../errors.js";
import { HOTPOT_DEV } from "./__fixtures__/shared-data.js";
import { loadHotpotQa } from "./data.js";
import { evaluateHotpotQa, readHotpotPredictions } from "./evaluation.js";

const dev = loadHotpotQa(HOTPOT_DEV, { first: 4 });

describe("evaluateHotpotQa", () => {
  it("averages over every question of the data, a missing prediction counting 0, and lists unknown ids", () => {
    const [a, b, c] = dev;
    const result = evaluateHotpotQa(dev, {
      answer: { [a!.id]: a!.answer, [b!.id]: `the ${b!.answer} indeed`, [c!.id]: "nothing like it", stray: "x" },
    });
    const partial = result.perQuestion[b!.id]!;
    expect(result.perQuestion[a!.id]).toEqual({ em: 1, f1: 1, arcoEm: 1 });
    expect(partial.em).toBe(0);
    expect(partial.f1).toBeGreaterThan(0);
    expect(result.perQuestion[dev[3]!.id]).toEqual({ em: 0, f1: 0, arcoEm: 0 });
    expect(result).toMatchObject({
      count: 4,
      em: 1 / 4,
      arcoEm: 1 / 4,
      missing: [dev[3]!.id],
      unknown: ["stray"],
    });
    expect(result.f1).toBeCloseTo((1 + partial.f1 + result.perQuestion[c!.id]!.f1) / 4, 12);
  });

  it("scores a question whose id is __proto__ like any other, from the file and in the result", () => {
    const [a, b, c] = dev;
    const questions = [{ ...a!, id: "__proto__" }, b!, c!];
    const predictions = readHotpotPredictions(
      `{"answer": {"__proto__": ${JSON.stringify(a!.answer)}, ${JSON.stringify(b!.id)}: ${JSON.stringify(b!.answer)}}}`,
      "preds.json",
    );
    expect(Object.keys(predictions.answer)).toEqual(["__proto__", b!.id]);
    const result = evaluateHotpotQa(questions, predictions);
    expect(result.em).toBeCloseTo(2 / 3, 12);
    expect(Object.hasOwn(result.perQuestion, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result.perQuestion, "__proto__")?.value).toEqual({
      em: 1,
      f1: 1,
      arcoEm: 1,
    });
    expect(JSON.stringify(result.perQuestion)).toContain('"__proto__":{"em":1,"f1":1,"arcoEm":1}');
    expect(() => readHotpotPredictions('{"answer": {"__proto__": 7}}', "preds.json")).toThrow(/answer\.__proto__/);
  });

  it("reports ARCO's EM beside the official one", () => {
    const yes = loadHotpotQa(HOTPOT_DEV).find((q) => q.answer === "yes")!;
    const result = evaluateHotpotQa([yes], { answer: { [yes.id]: "Yes, both are." } });
    expect(result).toMatchObject({ em: 0, arcoEm: 1, f1: 0 });
  });

  it("refuses to average over no questions", () => {
    expect(() => evaluateHotpotQa([], { answer: {} })).toThrow(RlxarInputError);
  });
});

describe("readHotpotPredictions", () => {
  it("reads the official format, sp included", () => {
    expect(readHotpotPredictions('{"answer": {"q": "1755"}, "sp": {"q": [["A", 0]]}}', "p.json")).toEqual({
      answer: { q: "1755" },
      sp: { q: [["A", 0]] },
    });
  });

  it("names every bad field, and a file that is not JSON", () => {
    let error: unknown;
    try {
      readHotpotPredictions('{"answer": {"q1": 3, "q2": "ok", "q3": null}, "sp": []}', "preds.json");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RlxarFileError);
    expect((error as RlxarFileError).problems).toEqual([
      expect.stringMatching(/^answer\.q1: .*string/),
      expect.stringMatching(/^answer\.q3: .*string/),
      expect.stringMatching(/^sp: /),
    ]);
    expect(() => readHotpotPredictions("{", "preds.json")).toThrow(/^preds\.json: \(root\): not JSON/);
    expect(() => readHotpotPredictions('{"sp": {}}', "preds.json")).toThrow(/^preds\.json: answer: /);
  });
});
