import { describe, expect, it } from "vitest";
import type { AgentView } from "../../environment/environment.js";
import { normalizeAnswer } from "../../hotpotqa/metrics.js";
import { goldView, paragraphText, readGoldRows, type GoldRow } from "./__fixtures__/hotpotqa-views.js";
import { type Candidate, extractiveCandidates, queryKey } from "./candidates.js";
import { words } from "./spans.js";

const train = readGoldRows("train");
const dev = readGoldRows("dev");
const kissAndTell = train.find((r) => r.id === "5a8c7595554299585d9e36b6")!;

const answers = (cs: readonly Candidate[]) => cs.flatMap((c) => (c.kind === "finish" ? [c.answer] : []));
const queries = (cs: readonly Candidate[]) => cs.flatMap((c) => (c.kind === "search" ? [c.query] : []));

describe("extractive candidates", () => {
  it("offers the question's entities and the whole question as queries before anything is retrieved", () => {
    const view = { ...goldView(kissAndTell, { mustFinish: false }), history: [], budgetLeft: 3 };
    const { candidates } = extractiveCandidates(view);
    expect(queries(candidates)).toEqual(
      expect.arrayContaining([
        "Corliss Archer",
        "Kiss and Tell",
        "government position",
        "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell",
      ]),
    );
    // Nothing retrieved: the only answers are yes and no, last.
    expect(answers(candidates)).toEqual(["yes", "no"]);
  });

  it("offers answer spans of the retrieved paragraphs, the gold one among them, and their entities as queries", () => {
    const view = goldView(kissAndTell, { mustFinish: false });
    const { candidates } = extractiveCandidates(view);
    expect(answers(candidates)).toContain("Chief of Protocol");
    expect(answers(candidates)).toContain("April 23, 1928");
    expect(queries(candidates)).toContain("Shirley Temple Black");
    // Searches come first, then answers ending with yes and no.
    const firstFinish = candidates.findIndex((c) => c.kind === "finish");
    expect(candidates.slice(firstFinish).every((c) => c.kind === "finish")).toBe(true);
    expect(answers(candidates).slice(-2)).toEqual(["yes", "no"]);
  });

  it("marks issued queries as repeats, ignores invalid turns, and offers only answers at mustFinish", () => {
    const base = goldView(kissAndTell, { mustFinish: false });
    const view: AgentView = {
      ...base,
      history: [...base.history, { action: "Search[kiss AND tell]", observation: "Invalid action: something" }],
    };
    const { candidates, reading } = extractiveCandidates(view);
    expect(reading.paragraphs).toHaveLength(2);
    const repeat = candidates.find((c) => c.kind === "search" && c.query === "Kiss and Tell");
    expect(repeat).toMatchObject({ repeat: true });
    expect(candidates.find((c) => c.kind === "search" && c.query === "Corliss Archer")).toMatchObject({
      repeat: false,
    });
    const forced = extractiveCandidates({ ...view, budgetLeft: 0, mustFinish: true }).candidates;
    expect(forced.every((c) => c.kind === "finish")).toBe(true);
    expect(answers(forced)).toEqual(answers(candidates));
  });

  it("splits sentences joined without a space, so the answer recall holds (the environment may join them so)", () => {
    expect(words("It ran to 1956.Although it was the U.S.Army").map((w) => `${w.text}@${w.sentence}`)).toEqual([
      "It@0",
      "ran@0",
      "to@0",
      "1956@0",
      "Although@1",
      "it@1",
      "was@1",
      "the@1",
      "U.S.Army@1",
    ]);
    let spacedHits = 0;
    let gluedHits = 0;
    for (const row of train) {
      const spaced = goldView(row, { mustFinish: true });
      const glued: AgentView = {
        ...spaced,
        history: spaced.history.map((turn) => {
          const title = turn.action.slice("Search[".length, -1);
          return { ...turn, observation: row.context.find(([t]) => t === title)![1].join("") };
        }),
      };
      const gold = normalizeAnswer(row.answer);
      const holds = (view: AgentView) =>
        answers(extractiveCandidates(view).candidates).some((a) => normalizeAnswer(a) === gold) ? 1 : 0;
      spacedHits += holds(spaced);
      gluedHits += holds(glued);
    }
    // Measured: 0.906 spaced, 0.904 glued (0.861 glued without the split). Some sentence joints of
    // the source fall inside titles ('… Made Of?" is the …'), where reading them glued is right.
    expect(gluedHits / train.length).toBeGreaterThan(spacedHits / train.length - 0.01);
  });

  it("is deterministic, deduplicated, capped, and writes no brackets", () => {
    for (const row of train.slice(0, 60)) {
      const view = goldView(row, { mustFinish: false });
      const a = extractiveCandidates(view).candidates;
      expect(extractiveCandidates(view).candidates).toEqual(a);
      const answerKeys = answers(a).map(normalizeAnswer);
      expect(new Set(answerKeys).size).toBe(answerKeys.length);
      const queryKeys = queries(a).map(queryKey);
      expect(new Set(queryKeys).size).toBe(queryKeys.length);
      expect(a.every((c) => !/[[\]]/u.test(c.kind === "search" ? c.query : c.answer))).toBe(true);
      const capped = extractiveCandidates(view, {
        maxAnswers: 5,
        maxQuestionQueries: 2,
        maxParagraphQueries: 3,
      }).candidates;
      expect(answers(capped).length).toBeLessThanOrEqual(5 + 2);
      expect(capped.filter((c) => c.kind === "search").length).toBeLessThanOrEqual(5);
    }
  });
});

/** The candidate names a gold paragraph's title (case and a trailing "(…)" disambiguation aside). */
function namesTitle(query: string, title: string): boolean {
  const q = queryKey(query);
  return q === queryKey(title) || q === queryKey(title.replace(/\s*\([^)]*\)\s*$/u, ""));
}

function recall(rows: readonly GoldRow[]) {
  let answer = 0;
  let firstHop = 0;
  let secondHop = 0;
  for (const row of rows) {
    const gold = normalizeAnswer(row.answer);
    if (
      answers(extractiveCandidates(goldView(row, { mustFinish: true })).candidates).some(
        (a) => normalizeAnswer(a) === gold,
      )
    )
      answer++;
    const start = extractiveCandidates({ ...goldView(row, { mustFinish: false }), history: [], budgetLeft: 3 });
    if (queries(start.candidates).some((q) => row.goldTitles.some((t) => namesTitle(q, t)))) firstHop++;
    // After retrieving one gold paragraph, does a candidate name the other (the bridge hop)?
    const [first, second] = goldView(row, { mustFinish: false }).history.map((t) => t.action.slice(7, -1));
    if (first !== undefined && second !== undefined) {
      const view: AgentView = {
        taskId: row.id,
        task: row.question,
        history: [{ action: `Search[${first}]`, observation: paragraphText(row, first) }],
        budgetLeft: 2,
        mustFinish: false,
      };
      if (queries(extractiveCandidates(view).candidates).some((q) => namesTitle(q, second))) secondHop++;
    }
  }
  return { answer: answer / rows.length, firstHop: firstHop / rows.length, secondHop: secondHop / rows.length };
}

describe("the candidates' ceiling on real questions", () => {
  it("holds the gold answer for most questions given both gold paragraphs, and names gold titles as queries", () => {
    const onTrain = recall(train);
    const onDev = recall(dev);
    console.log(
      `answer-candidate recall: train ${onTrain.answer.toFixed(3)}, dev ${onDev.answer.toFixed(3)}; ` +
        `query recall (a query naming a gold title) at the start: train ${onTrain.firstHop.toFixed(3)}, dev ${onDev.firstHop.toFixed(3)}; ` +
        `the other gold title after one gold paragraph: train ${onTrain.secondHop.toFixed(3)}, dev ${onDev.secondHop.toFixed(3)}`,
    );
    // Floors a little under what was measured when this was written: answers train 0.906, dev
    // 0.873; first hop train 0.490, dev 0.510; second hop train 0.490, dev 0.530.
    expect(onTrain.answer).toBeGreaterThan(0.88);
    expect(onDev.answer).toBeGreaterThan(0.85);
    expect(Math.min(onTrain.firstHop, onDev.firstHop)).toBeGreaterThan(0.45);
    expect(Math.min(onTrain.secondHop, onDev.secondHop)).toBeGreaterThan(0.45);
  });
});
