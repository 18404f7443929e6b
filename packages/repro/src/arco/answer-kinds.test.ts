import { describe, expect, it } from "vitest";
import { answerKind } from "./answer-kinds.js";

describe("answerKind", () => {
  it("tells yes/no answers, answers the question names and answers read out of a paragraph, after HotpotQA's normalisation", () => {
    expect(answerKind({ question: "Are Ann and Bo both actors?", answer: "Yes" })).toBe("yesNo");
    expect(answerKind({ question: "Was it built before 1900?", answer: "no." })).toBe("yesNo");
    // Articles, case and punctuation aside, the answer is one of the question's own alternatives.
    expect(answerKind({ question: "Which band formed first, the Beatles or Oasis?", answer: "The Beatles" })).toBe(
      "named",
    );
    expect(answerKind({ question: "Who directed the film that starred Ann Lee?", answer: "Bo Stone" })).toBe("readOut");
    // A word of the answer in the question is not the answer named there.
    expect(answerKind({ question: "Which Stone album came first?", answer: "Bo Stone" })).toBe("readOut");
  });
});
