import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { episodeSteps, rollout } from "../rollout/rollout.js";
import { EpisodeDoneError, RlxarInputError } from "../errors.js";
import type { Policy } from "../policy/policy.js";
import { HOTPOT_DEV, HOTPOT_TRAIN } from "./__fixtures__/shared-data.js";
import { type HotpotQuestion, loadHotpotQa } from "./data.js";
import { HOTPOT_OBSERVATIONS, hotpotQa } from "./environment.js";

const dev = loadHotpotQa(HOTPOT_DEV);
const train = loadHotpotQa(HOTPOT_TRAIN);
const tokarev = dev.find((q) => q.id === "5ae143ed55429920d5234360")!; // answer 1755
const corliss = train[0]!; // "Chief of Protocol"
const yesNo = dev.find((q) => q.answer === "yes")!;

const gold = (question: HotpotQuestion, title: string) => question.paragraphs.find((p) => p.title === title)!;

describe("hotpotQa: searches", () => {
  it("a search naming a gold paragraph's distinctive words returns its text, with what it found in info", () => {
    const episode = hotpotQa().reset(tokarev);
    const step = episode.step("Search[Lomonosov founded 1755]");
    const paragraph = gold(tokarev, "Moscow State University");
    expect(step).toEqual({
      action: { name: "Search", argument: "Lomonosov founded 1755" },
      actionText: "Search[Lomonosov founded 1755]",
      kind: "tool",
      observation: paragraph.text,
      done: false,
      reward: 0,
      info: {
        query: "Lomonosov founded 1755",
        title: "Moscow State University",
        paragraph: tokarev.paragraphs.indexOf(paragraph),
        supporting: true,
      },
    });
    // A distractor is found, and said not to be supporting.
    const distractor = tokarev.paragraphs.find((p) => !tokarev.supportingTitles.includes(p.title))!;
    const other = hotpotQa().reset(tokarev).step(`Search[${distractor.sentences[0]}]`);
    expect(other.info).toMatchObject({ title: distractor.title, supporting: false });
  });

  it("on a train question too (supporting_titles); a lower-case name is read and written canonically", () => {
    const step = hotpotQa().reset(corliss).step("search[Shirley Temple Black ambassador Ghana]");
    expect(step.info).toMatchObject({ title: "Shirley Temple", supporting: true });
    expect(step.actionText).toBe("Search[Shirley Temple Black ambassador Ghana]");
  });

  it("searches titles only with indexTitles, as ARCO's retriever never sees them", () => {
    const question: HotpotQuestion = {
      ...tokarev,
      paragraphs: [
        { title: "Quux Abbey", sentences: ["A ruined monastery."], text: "A ruined monastery." },
        { title: "Other", sentences: ["Something else."], text: "Something else." },
      ],
      supportingTitles: ["Quux Abbey"],
    };
    expect(hotpotQa().reset(question).step("Search[Quux]").info).toMatchObject({ title: null });
    expect(hotpotQa({ indexTitles: true }).reset(question).step("Search[Quux]").info).toMatchObject({
      title: "Quux Abbey",
      paragraph: 0,
      supporting: true,
    });
  });

  it("a search nothing matches spends a search and says so, with no paragraph", () => {
    const episode = hotpotQa().reset(tokarev);
    const step = episode.step("Search[qqqq zzzz]");
    expect(step).toMatchObject({
      kind: "tool",
      done: false,
      observation: HOTPOT_OBSERVATIONS.noMatch("qqqq zzzz"),
      info: { query: "qqqq zzzz", title: null, paragraph: null, supporting: false },
    });
    expect(episode.view().budgetLeft).toBe(2);
  });
});

describe("hotpotQa: the budget and every ending", () => {
  it("counts searches down, records each turn in the view, and finishes for free with ARCO's EM", () => {
    const env = hotpotQa();
    const episode = env.reset(tokarev);
    expect(episode.view()).toEqual({
      taskId: tokarev.id,
      task: tokarev.question,
      history: [],
      budgetLeft: 3,
      mustFinish: false,
    });
    const first = episode.step("Thought: who is he?\nAction: Search[Sergei Aleksandrovich Tokarev]");
    const second = episode.step("Search[Moscow State University founded]");
    expect(episode.view()).toEqual({
      taskId: tokarev.id,
      task: tokarev.question,
      history: [
        { action: "Search[Sergei Aleksandrovich Tokarev]", observation: first.observation },
        { action: "Search[Moscow State University founded]", observation: second.observation },
      ],
      budgetLeft: 1,
      mustFinish: false,
    });
    const finish = episode.step("Finish[1755]");
    expect(finish).toMatchObject({
      kind: "finish",
      done: true,
      reward: 1,
      observation: HOTPOT_OBSERVATIONS.finished,
      info: { answer: "1755", gold: "1755", em: 1, arcoEm: 1, f1: 1 },
    });
    expect(episode.done).toBe(true);
    expect(() => episode.view()).toThrow(EpisodeDoneError);
    expect(() => episode.step("Finish[1755]")).toThrow(EpisodeDoneError);
  });

  it("charges an invalid output one search, runs no retrieval, and goes on", () => {
    const episode = hotpotQa().reset(tokarev);
    const raw = "I am not sure what to do here.";
    const step = episode.step(raw);
    expect(step).toEqual({
      action: undefined,
      actionText: raw,
      kind: "invalid",
      observation: HOTPOT_OBSERVATIONS.invalid,
      done: false,
      reward: 0,
      info: {},
    });
    expect(step.observation).toMatch(/^Invalid action.*No retrieval was executed\.$/);
    expect(episode.view()).toMatchObject({ budgetLeft: 2, history: [{ action: raw, observation: step.observation }] });
  });

  it("at 0 searches asks for a finish; a search then ends the episode unanswered with reward 0", () => {
    const episode = hotpotQa().reset(tokarev);
    for (const query of ["a", "b", "c"]) episode.step(`Search[${query} Tokarev]`);
    expect(episode.view()).toMatchObject({ budgetLeft: 0, mustFinish: true });
    const step = episode.step("Search[Moscow State University]");
    expect(step).toMatchObject({
      kind: "violation",
      done: true,
      reward: 0,
      observation: HOTPOT_OBSERVATIONS.violation,
      info: { query: "Moscow State University" },
    });
    expect(step.observation).toMatch(/^Forced finish violation.*No answer submitted\.$/);
  });

  it("at 0 searches an invalid output ends the episode too (there is no search left to charge)", () => {
    const episode = hotpotQa({ maxSearches: 1 }).reset(tokarev);
    episode.step("nonsense");
    expect(episode.view()).toMatchObject({ budgetLeft: 0, mustFinish: true });
    expect(episode.step("still nonsense")).toMatchObject({
      kind: "invalid",
      done: true,
      reward: 0,
      observation: HOTPOT_OBSERVATIONS.invalidAtZero,
    });
  });

  it("finishing at 0 searches is allowed and scored", () => {
    const episode = hotpotQa({ maxSearches: 0 }).reset(tokarev);
    expect(episode.view()).toMatchObject({ budgetLeft: 0, mustFinish: true });
    expect(episode.step("Finish[1755]")).toMatchObject({ kind: "finish", reward: 1 });
  });

  it("rewards ARCO's EM by default, the official EM or F1 when asked", () => {
    const finish = (answer: string, reward?: "arco-em" | "em" | "f1") =>
      hotpotQa(reward === undefined ? {} : { reward })
        .reset(yesNo)
        .step(`Finish[${answer}]`);
    expect(finish("yes, it is").reward).toBe(1);
    expect(finish("yes, it is").info).toMatchObject({ em: 0, arcoEm: 1, f1: 0 });
    expect(finish("yes, it is", "em").reward).toBe(0);
    const partial = hotpotQa({ reward: "f1" }).reset(corliss).step("Finish[the Chief of Protocol of the US]");
    // "chief of protocol of us" against "chief of protocol": precision 3/5, recall 1, F1 0.75.
    expect(partial.reward).toBeCloseTo(0.75, 12);
  });

  it("refuses options it cannot use", () => {
    expect(() => hotpotQa({ maxSearches: -1 })).toThrow(RlxarInputError);
    expect(() => hotpotQa({ reward: "bleu" as never })).toThrow("options.reward");
    expect(() => hotpotQa({ k: -1 })).toThrow("options.k");
  });

  it("ends every episode within maxSteps = maxSearches + 1, whatever the agent writes", () => {
    const outputs = fc.constantFrom(
      "Search[Tokarev]",
      "Search[zzzz]",
      "Finish[1755]",
      "gibberish",
      "Search[]",
      "<think>unfinished",
      "Action: Finish[no]",
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(outputs, { minLength: 12, maxLength: 12 }), (n, script) => {
        const env = hotpotQa({ maxSearches: n });
        expect(env.maxSteps).toBe(n + 1);
        const episode = env.reset(tokarev);
        let steps = 0;
        while (!episode.done) {
          episode.step(script[steps]!);
          steps++;
        }
        expect(steps).toBeLessThanOrEqual(env.maxSteps);
      }),
      { seed: 15, numRuns: 500 },
    );
  });
});

describe("hotpotQa through rollout", () => {
  /** Searches each gold title's first sentence, then answers with the gold answer, or badly when told. */
  const scripted = (wrongOn: ReadonlySet<string>): Policy => ({
    name: "scripted",
    act: async (views) =>
      views.map((view) => {
        const question = [...dev, ...train].find((q) => q.id === view.taskId)!;
        const searched = view.history.length;
        if (searched < question.supportingTitles.length && !view.mustFinish)
          return { text: `Search[${gold(question, question.supportingTitles[searched]!).sentences[0]}]` };
        return { text: `Finish[${wrongOn.has(view.taskId) ? "I don't know" : question.answer}]` };
      }),
  });

  it("runs a scripted policy over real dev and train questions: gold paragraphs found, rewards per answer", async () => {
    const questions = [...dev.slice(0, 4), ...train.slice(0, 4)];
    const wrong = new Set([dev[1]!.id, train[2]!.id]);
    const episodes = await rollout(hotpotQa(), questions, scripted(wrong), { temperature: 0, seed: 1, replicas: 2 });
    expect(episodes).toHaveLength(16);
    for (const episode of episodes) {
      expect(episode.steps.map((s) => s.transition.kind)).toEqual(["tool", "tool", "finish"]);
      expect(episode.steps.slice(0, 2).map((s) => s.transition.info["supporting"])).toEqual([true, true]);
      expect(episode.steps.map((s) => s.view.budgetLeft)).toEqual([3, 2, 1]);
      expect(episode.reward).toBe(wrong.has(episode.taskId) ? 0 : 1);
    }
    // μ's steps: the question, the history with observations, never the step's own result.
    const steps = episodeSteps(episodes[0]!);
    expect(steps).toHaveLength(3);
    expect(steps[2]!.history.map((turn) => turn.observation)).toEqual(
      episodes[0]!.steps.slice(0, 2).map((s) => s.transition.observation),
    );
  });
});
