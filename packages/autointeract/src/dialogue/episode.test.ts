import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runEpisode } from "./episode.js";
import { replayRoles } from "./replay.js";
import type { Manager, ManagerMove } from "../roles/manager/manager.js";
import type { Stakeholder } from "../roles/stakeholder/stakeholder.js";
import { appendTurnsTo, parseTranscript, transcriptToJsonl, TranscriptError } from "./transcript.js";

const task = { id: "t-1", prompt: "Draft the Q3 board memo", sector: "Finance", occupation: "Analyst" };
const rubric = {
  id: "memo",
  criteria: [
    {
      id: "rev",
      text: "Mentions revenue",
      weight: 1,
      polarity: "reward" as const,
      verifier: { kind: "includes" as const, terms: ["revenue"] },
    },
  ],
};

/** A manager that plays a fixed list of moves: a role implementation, as a policy file would be. */
function scriptedManager(moves: ManagerMove[], name = "scripted"): Manager {
  let i = 0;
  return { name, next: async () => moves[i++] ?? { type: "submit", rubric } };
}
function echoStakeholder(delayMs = 0): Stakeholder {
  return {
    name: "echo",
    answer: async (q) => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return { text: `About "${q.text}": yes.`, usage: { inputTokens: 10, outputTokens: 5 }, model: "stake-1" };
    },
  };
}

describe("runEpisode", () => {
  it("runs ask/answer turns to a submitted rubric, accounting clarification and compute costs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "episode-"));
    const path = join(dir, "t.jsonl");
    const manager = scriptedManager([
      {
        type: "ask",
        question: { text: "Who reads it?", difficulty: "easy" },
        usage: { inputTokens: 100, outputTokens: 20 },
        model: "mgr-1",
      },
      {
        type: "ask",
        question: { text: "What matters most?", difficulty: "hard" },
        usage: { inputTokens: 150, outputTokens: 30 },
        model: "mgr-1",
      },
      { type: "submit", rubric, usage: { inputTokens: 200, outputTokens: 80 }, costUsd: 0.001 },
    ]);
    const result = await runEpisode({
      task,
      manager,
      stakeholder: echoStakeholder(),
      questionBudget: 3,
      difficultyWeights: { easy: 1, medium: 2, hard: 3 },
      prices: {
        "mgr-1": { inputPerMillion: 1, outputPerMillion: 2 },
        "stake-1": { inputPerMillion: 10, outputPerMillion: 10 },
      },
      onTurn: appendTurnsTo(path),
    });
    expect(result.rubric?.id).toBe("memo");
    expect(result.transcript.map((t) => t.type)).toEqual([
      "task",
      "question",
      "answer",
      "question",
      "answer",
      "rubric",
      "end",
    ]);
    // clarify: easy 1 + hard 3; tokens: 120 + 15 + 180 + 15 + 280; usd: (100+40 + 150+60)/1e6 + 2·150/1e6 + 0.001
    expect(result.costs).toEqual({
      questions: 2,
      clarify: 4,
      tokens: 610,
      usd: expect.closeTo(350e-6 + 300e-6 + 0.001, 15),
    });
    // Written as it happened, and readable back.
    expect(parseTranscript(readFileSync(path, "utf8"))).toEqual(result.transcript);
    expect(parseTranscript(transcriptToJsonl(result.transcript))).toEqual(result.transcript);
  });

  it("replays a transcript exactly", async () => {
    const original = await runEpisode({
      task,
      manager: scriptedManager([
        { type: "ask", question: { text: "Tone?" } },
        { type: "submit", rubric },
      ]),
      stakeholder: echoStakeholder(),
    });
    const { manager, stakeholder } = replayRoles(original.transcript);
    const replayed = await runEpisode({ task, manager, stakeholder });
    expect(replayed.transcript).toEqual(original.transcript);
  });

  it("ends with a typed error, keeping what was said, when the budget is broken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "episode-"));
    const path = join(dir, "t.jsonl");
    const manager = scriptedManager([
      { type: "ask", question: { text: "One?" } },
      { type: "ask", question: { text: "Two?" } },
    ]);
    const result = await runEpisode({
      task,
      manager,
      stakeholder: echoStakeholder(),
      questionBudget: 1,
      turnLimit: 5,
      onTurn: appendTurnsTo(path),
    });
    expect(result.rubric).toBeNull();
    expect(result.error).toMatchObject({
      role: "manager",
      name: "QuestionBudgetExceededError",
      message: "question 2 exceeds the budget of 1",
    });
    const written = parseTranscript(readFileSync(path, "utf8"));
    expect(written.map((t) => t.type)).toEqual(["task", "question", "answer", "error", "end"]);
  });

  it("ends at the turn limit", async () => {
    const asking: Manager = { name: "forever", next: async () => ({ type: "ask", question: { text: "Again?" } }) };
    const result = await runEpisode({
      task,
      manager: asking,
      stakeholder: echoStakeholder(),
      questionBudget: 10,
      turnLimit: 3,
    });
    expect(result.error).toMatchObject({ role: "engine", name: "TurnLimitError" });
    expect(result.costs.questions).toBe(3);
  });

  it("turns timeouts, throws and malformed output into typed errors", async () => {
    const slow = await runEpisode({
      task,
      manager: scriptedManager([{ type: "ask", question: { text: "Q?" } }]),
      stakeholder: echoStakeholder(500),
      timeoutMs: 50,
    });
    expect(slow.error).toMatchObject({ role: "stakeholder", name: "RoleTimeoutError" });
    const throwing: Manager = {
      name: "broken",
      next: async () => {
        throw new Error("model unavailable");
      },
    };
    expect((await runEpisode({ task, manager: throwing, stakeholder: echoStakeholder() })).error).toMatchObject({
      role: "manager",
      message: "model unavailable",
    });
    const invalid = scriptedManager([{ type: "submit", rubric: { id: "x", criteria: [] } as never }]);
    const bad = await runEpisode({ task, manager: invalid, stakeholder: echoStakeholder() });
    expect(bad.error).toMatchObject({
      name: "RoleOutputError",
      message: "the submitted rubric is invalid at criteria: Too small: expected array to have >=1 items",
    });
    const empty = scriptedManager([{ type: "ask", question: { text: " " } }]);
    expect((await runEpisode({ task, manager: empty, stakeholder: echoStakeholder() })).error?.name).toBe(
      "RoleOutputError",
    );
  });

  it("runs episodes concurrently without sharing state", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        runEpisode({
          task: { ...task, id: `t-${k}` },
          manager: scriptedManager(
            Array.from({ length: k % 3 }, (_, i) => ({ type: "ask" as const, question: { text: `q${k}.${i}` } })),
          ),
          stakeholder: echoStakeholder(5),
        }),
      ),
    );
    results.forEach((r, k) => {
      expect(r.transcript[0]).toMatchObject({ type: "task", task: { id: `t-${k}` } });
      expect(r.transcript.filter((t) => t.type === "question").map((t) => (t as { text: string }).text)).toEqual(
        Array.from({ length: k % 3 }, (_, i) => `q${k}.${i}`),
      );
    });
  });

  it("names the line of a bad transcript", () => {
    expect(() => parseTranscript('{"type":"question","index":0,"text":"ok"}\n{"type":"nope"}', "t.jsonl")).toThrow(
      TranscriptError,
    );
    expect(() => parseTranscript('{"type":"question","index":0,"text":"ok"}\n{"type":"nope"}', "t.jsonl")).toThrow(
      /^t.jsonl:line 2: type: /,
    );
  });
});
