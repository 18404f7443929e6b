import { createRng } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import type { Step } from "../step/step.js";
import { EOS_ID, byteBpeTokenizer, trainByteBpe } from "../tokenizer/byte-bpe.js";
import { decodingPlan, pickToken } from "./decoding.js";
import { decodeRows } from "./engine.js";
import { fitPrompt, promptText } from "./sequence.js";

describe("pickToken", () => {
  it("is the first maximum when greedy", () => {
    expect(pickToken([0.1, 3, 3, -1], 0, undefined)).toBe(1);
  });

  it("samples in proportion to softmax(logits / T) from the row's stream", () => {
    const rng = createRng(7);
    const logits = [Math.log(1), Math.log(3), Number.NEGATIVE_INFINITY, Math.log(6)];
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20_000; i++) counts[pickToken(logits, 1, rng)]!++;
    expect(counts[2]).toBe(0);
    expect(counts[0]! / 20_000).toBeCloseTo(0.1, 1);
    expect(counts[3]! / 20_000).toBeCloseTo(0.6, 1);
    // A low temperature sharpens towards the maximum.
    const cold = Array.from({ length: 200 }, () => pickToken(logits, 0.05, rng));
    expect(cold.every((t) => t === 3)).toBe(true);
  });

  it("gives each step its own stream, fixed by its index, not by the batch", () => {
    const whole = decodingPlan({ mode: "sampled", seed: 3 }, [0, 1, 2]);
    const alone = decodingPlan({ mode: "sampled", seed: 3 }, [2]);
    expect(alone.streams![0]).toEqual(whole.streams![2]);
    expect(whole.streams![0]).not.toEqual(whole.streams![1]);
    expect(() => decodingPlan({ mode: "sampled", seed: 3, temperature: 0 }, [0])).toThrow(ArcoInputError);
  });
});

describe("decodeRows", () => {
  // Logits that say "write token 10 + row, then EOS after `stopAfter[row]` tokens".
  const scripted = (stopAfter: number[]) => {
    const written = stopAfter.map(() => 0);
    const logits = (row: number) => {
      const l = new Array<number>(20).fill(0);
      l[written[row]! >= stopAfter[row]! ? EOS_ID : 10 + row] = 1;
      return l;
    };
    const fed: number[][] = [];
    return {
      fed,
      first: logits,
      advance: async (tokens: readonly number[], live: readonly boolean[]) => {
        fed.push([...tokens]);
        live.forEach((on, r) => {
          if (on) written[r]!++;
        });
        return logits;
      },
    };
  };

  it("stops a row at EOS, at the token limit, or when the positions are full", async () => {
    const s = scripted([1, 10, 10]);
    const out = await decodeRows(s.first, s.advance, [3, 3, 8], 4, 10, { temperature: 0 });
    expect(out.ids).toEqual([[10], [11, 11, 11, 11], [12, 12]]);
    expect(out.finished).toEqual([true, false, false]);
    // A finished row is fed padding, and nothing is fed once every row is done.
    expect(s.fed.map((row) => row[0])).toEqual([10, 0, 0]);
    expect(s.fed).toHaveLength(3);
  });
});

describe("fitPrompt", () => {
  const tokenizer = byteBpeTokenizer(trainByteBpe(["Action: Search[x]\nObservation: "], 300));
  const step: Step = {
    task: "Who?",
    history: [
      { action: "Search[a]", observation: "a".repeat(300) },
      { action: "Search[b]", observation: "b".repeat(40) },
    ],
    budgetLeft: 1,
    action: "Finish[c]",
  };

  it("drops the oldest turns until the prompt fits, and says how many", () => {
    const whole = fitPrompt(tokenizer, step, 100_000);
    expect(whole.droppedTurns).toBe(0);
    const fitted = fitPrompt(tokenizer, step, whole.ids.length - 100);
    expect(fitted.droppedTurns).toBe(1);
    expect(tokenizer.decode(fitted.ids)).toContain("Search[b]");
    expect(tokenizer.decode(fitted.ids)).not.toContain("Search[a]");
    expect(() => fitPrompt(tokenizer, step, 50, {}, "steps[4]")).toThrow(/steps\[4\]: its prompt takes \d+ tokens/);
  });

  it("drops the fewest turns that make it fit, tokenizing O(log n) times (issue 29 item 8: it was quadratic)", () => {
    const turns = 2_000;
    const long: Step = {
      ...step,
      history: Array.from({ length: turns }, (_, i) => ({ action: `Search[q${i}]`, observation: `seen ${i}` })),
    };
    let encodes = 0;
    const counting = {
      ...tokenizer,
      encode: (text: string) => {
        encodes++;
        return tokenizer.encode(text);
      },
    };
    const whole = fitPrompt(tokenizer, long, 10_000_000).ids.length;
    const bare = fitPrompt(tokenizer, { ...long, history: [] }, 10_000_000).ids.length;
    for (const budget of [whole - 1, Math.floor((whole + bare) / 2), bare + 40, bare]) {
      encodes = 0;
      const fitted = fitPrompt(counting, long, budget);
      expect(fitted.ids.length).toBeLessThanOrEqual(budget);
      // The fewest: keeping one more turn would not fit.
      const kept = turns - fitted.droppedTurns;
      const oneMore = { ...long, history: long.history.slice(turns - kept - 1) };
      if (fitted.droppedTurns > 0) expect(fitPrompt(tokenizer, oneMore, 10_000_000).ids.length).toBeGreaterThan(budget);
      expect(encodes).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(turns)));
    }
  });

  it("joins the messages under role lines and ends where μ's answer starts", () => {
    expect(
      promptText([
        { role: "system", content: "S" },
        { role: "user", content: "U" },
      ]),
    ).toBe("system:\nS\n\nuser:\nU\n\nassistant:\n");
  });
});
