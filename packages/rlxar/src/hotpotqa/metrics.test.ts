import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRng } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { arcoExactMatch, exactMatch, f1Score, normalizeAnswer } from "./metrics.js";

describe("HotpotQA answer metrics (the official script's semantics)", () => {
  it("normalises as the official script: lower, no ASCII punctuation, no articles, one space", () => {
    expect(normalizeAnswer("The  Eiffel Tower!")).toBe("eiffel tower");
    expect(normalizeAnswer("A Tale of Two Cities")).toBe("tale of two cities");
    expect(normalizeAnswer("an-apple")).toBe("anapple"); // punctuation goes first, so "an" is no longer a word
    expect(normalizeAnswer("theatre")).toBe("theatre");
    // Python's \b is Unicode-aware: "the" glued to é is not a word of its own.
    expect(normalizeAnswer("éthe the")).toBe("éthe");
    expect(normalizeAnswer("Café «Noir»")).toBe("café «noir»"); // only ASCII punctuation is dropped
    expect(exactMatch("Yes\ufeff", "yes")).toBe(0); // the official script keeps the BOM
    expect(normalizeAnswer("Paris\x1eFrance\x85")).toBe("paris france");
  });

  it("exact match compares normalised strings", () => {
    expect(exactMatch("the Chief of Protocol.", "Chief of Protocol")).toBe(1);
    expect(exactMatch("Chief of Protocol of the US", "Chief of Protocol")).toBe(0);
  });

  it("F1 counts shared tokens with multiplicity, and is 0 when a yes/no/noanswer side differs", () => {
    expect(f1Score("the Eiffel Tower in Paris", "Eiffel Tower")).toBeCloseTo(2 / 3, 12); // P 2/4, R 2/2
    expect(f1Score("Eiffel Tower Paris", "the Eiffel Tower in Paris")).toBeCloseTo(0.857142857142857, 12); // P 3/3, R 3/4
    expect(f1Score("tower tower", "tower")).toBeCloseTo(2 / 3, 12);
    expect(f1Score("yes", "yes")).toBe(1);
    expect(f1Score("yes it is", "yes")).toBe(0);
    expect(f1Score("no", "Norway no")).toBe(0);
    expect(f1Score("Paris", "London")).toBe(0);
  });

  it("ARCO's EM also counts a yes/no gold within the first three characters of the prediction, and nothing else", () => {
    expect(arcoExactMatch("Yes, it is.", "yes")).toBe(1);
    expect(exactMatch("Yes, it is.", "yes")).toBe(0);
    expect(arcoExactMatch("no way", "no")).toBe(1);
    expect(arcoExactMatch("I think no", "no")).toBe(0);
    expect(arcoExactMatch("Paris, France", "Paris")).toBe(0);
    expect(arcoExactMatch("Paris", "paris")).toBe(1);
  });
});

/** The official script's answer functions, run by Python itself on the same strings. */
const OFFICIAL = fileURLToPath(new URL("./__fixtures__/hotpot_evaluate.py", import.meta.url));

describe("against the official script, run in Python", () => {
  it("gives the same normalisation and F1 on 400 random answers", () => {
    const rng = createRng("hotpotqa-metrics");
    const parts = [
      "The",
      "the",
      "an",
      "a",
      "A",
      "yes",
      "no",
      "noanswer",
      "Tower",
      "é",
      "Café",
      "x_y",
      "3",
      "!",
      ",",
      "'",
      "-",
      " ",
      "  ",
      "\u00a0",
      "\t",
      "«",
      "ß",
      // Where Python's whitespace and JavaScript's differ: the byte-order mark is not whitespace
      // to Python; the information separators and NEL are.
      "\ufeff",
      "\x85",
      "\x1c",
      "\x1f",
      "\u2028",
      "\u3000",
    ];
    const text = () =>
      Array.from({ length: 1 + rng.int(8) }, () => parts[rng.int(parts.length)]).join(rng.next() < 0.5 ? " " : "");
    const pairs = Array.from({ length: 400 }, () => [text(), text()] as const);
    const python = spawnSync("/usr/bin/python3", [OFFICIAL, "pairs"], {
      input: JSON.stringify(pairs),
      encoding: "utf8",
    });
    expect(python.status, python.stderr).toBe(0);
    const official = JSON.parse(python.stdout) as [string, number][];
    pairs.forEach(([prediction, gold], i) => {
      expect(normalizeAnswer(prediction), JSON.stringify(prediction)).toBe(official[i]![0]);
      expect(f1Score(prediction, gold)).toBeCloseTo(official[i]![1], 12);
    });
  });
});
