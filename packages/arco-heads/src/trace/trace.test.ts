import { describe, expect, it } from "vitest";
import { ArcoFileError, ArcoInputError } from "../errors.js";
import { readTraces, stepTrace, traceJsonLines } from "./trace.js";

describe("step traces", () => {
  it("carry criteria, K scores and s = their mean, and round-trip as JSON lines", () => {
    const traces = [
      stepTrace("q1#0", ["Targets the first hop", "Specific query", "No repeat"], [0.5, 0.25, 0]),
      stepTrace("q1#1", [], [-0.5]),
    ];
    expect(traces[0]?.s).toBeCloseTo(0.25, 15);
    const text = traceJsonLines(traces);
    expect(text).toBe(
      '{"id":"q1#0","criteria":["Targets the first hop","Specific query","No repeat"],"scores":[0.5,0.25,0],"s":0.25}\n' +
        '{"id":"q1#1","criteria":[],"scores":[-0.5],"s":-0.5}\n',
    );
    expect(readTraces(text, "epoch_1.jsonl")).toEqual(traces);
  });

  it("the reader names every bad line and field: s not the mean, K mismatch, a score out of range, bad JSON, a repeat", () => {
    const text = [
      '{"id":"a","criteria":["x","y"],"scores":[0.5,0.5],"s":0.5}',
      '{"id":"b","criteria":["x","y"],"scores":[0.5,0.5],"s":0.4}',
      '{"id":"c","criteria":["x"],"scores":[0.5,0.5],"s":0.5}',
      '{"id":"d","criteria":["x"],"scores":[1.5],"s":1.5}',
      '{"id":"e",',
      "",
      '{"id":"a","criteria":[],"scores":[0],"s":0}',
    ].join("\n");
    let error: unknown;
    try {
      readTraces(text, "epoch_2.jsonl");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArcoFileError);
    const { problems, code, message } = error as ArcoFileError;
    expect(code).toBe("arco.file");
    expect(message.startsWith("epoch_2.jsonl: ")).toBe(true);
    expect(problems[0]).toBe("line 2: s: expected the mean of scores, 0.5, got 0.4");
    expect(problems[1]).toBe("line 3: criteria: expected 2 criteria (one per score) or none, got 1");
    expect(problems.some((p) => p.startsWith("line 4: scores[0]: "))).toBe(true);
    expect(problems.some((p) => p.startsWith("line 5: (root): "))).toBe(true);
    expect(problems.at(-1)).toBe('line 7: id: duplicate id "a" (first on line 1)');
  });

  it("accepts an s averaged in float32, within float32's error of the mean", () => {
    const scores = [0.1, 0.7, -0.3].map(Math.fround);
    const float32Mean = Math.fround(Math.fround(Math.fround(scores[0]! + scores[1]!) + scores[2]!) / 3);
    const line = JSON.stringify({ id: "a", criteria: [], scores, s: float32Mean });
    expect(readTraces(line, "t.jsonl")[0]?.s).toBe(float32Mean);
    expect(() =>
      readTraces(JSON.stringify({ id: "a", criteria: [], scores, s: float32Mean + 1e-5 }), "t.jsonl"),
    ).toThrow(/line 1: s: expected the mean of scores/);
  });

  it("refuses a step with no scores", () => {
    expect(() => stepTrace("x", [], [])).toThrow(ArcoInputError);
  });

  it("keep the generation's flags that `rubric mu criteria` prints, and refuse unknown ones", () => {
    const line = {
      id: "q1#2",
      criteria: ["", "", ""],
      scores: [0.1, 0.2, 0.3],
      s: 0.2,
      adjusted: "unparsed",
      droppedTurns: 2,
    };
    expect(readTraces(`${JSON.stringify(line)}\n`, "cli.jsonl")).toEqual([line]);
    expect(() => readTraces(`${JSON.stringify({ ...line, adjusted: "guessed" })}\n`, "cli.jsonl")).toThrow(
      /line 1: adjusted/,
    );
  });
});
