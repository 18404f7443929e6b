// What a HotpotQA question's gold answer is. The splits mix these differently (the training file,
// IRCoT's mix of levels, holds three times dev's share of yes/no answers), and an extractive
// policy scores almost only on the first two, so one EM across splits compares mixes.
import { normalizeAnswer } from "@rubric/rlxar";

/** yes or no; a span the question itself names (a choice between its alternatives); one read out of a paragraph. */
export const ANSWER_KINDS = ["yesNo", "named", "readOut"] as const;
export type AnswerKind = (typeof ANSWER_KINDS)[number];

/** How a report names each kind. */
export const ANSWER_KIND_LABELS: Record<AnswerKind, string> = {
  yesNo: "yes or no",
  named: "named in the question",
  readOut: "read out of a paragraph",
};

/**
 * The kind of `question`'s gold answer, after HotpotQA's normalisation.
 *
 * @example
 * answerKind({ question: "Is Paris in France?", answer: "Yes" }); // "yesNo"
 * answerKind({ question: "Who is older, Ann or Bo?", answer: "Ann" }); // "named"
 */
export function answerKind(question: { readonly question: string; readonly answer: string }): AnswerKind {
  const answer = normalizeAnswer(question.answer);
  if (answer === "yes" || answer === "no") return "yesNo";
  return normalizeAnswer(question.question).includes(answer) ? "named" : "readOut";
}
