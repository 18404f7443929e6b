import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runEpisode } from "../../dialogue/episode.js";
import { terminalStakeholder } from "./terminal-stakeholder.js";

const task = { id: "schedule", prompt: "Plan the production schedule for the next quarter." };

describe("terminalStakeholder", () => {
  it("asks on the output stream and takes a line of input as the answer", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (d: Buffer) => (shown += d.toString()));
    input.write("Mostly the weekly totals.\n");
    input.end();
    const asking = {
      name: "one-question",
      next: async (s: { exchanges: readonly unknown[] }) =>
        s.exchanges.length === 0
          ? { type: "ask" as const, question: { text: "What matters?" } }
          : {
              type: "submit" as const,
              rubric: {
                id: "r",
                criteria: [
                  {
                    id: "a",
                    text: "Weekly totals",
                    weight: 1,
                    polarity: "reward" as const,
                    verifier: { kind: "llm-judge" as const },
                  },
                ],
              },
            },
    };
    const result = await runEpisode({
      task,
      manager: asking,
      stakeholder: terminalStakeholder({ input, output }),
      questionBudget: 2,
    });
    expect(shown).toContain("Question 1: What matters?");
    expect(result.transcript.find((t) => t.type === "answer")).toMatchObject({ text: "Mostly the weekly totals." });
    // A closed terminal is an error, not an empty answer.
    const closed = new PassThrough();
    closed.end();
    const ended = await runEpisode({
      task,
      manager: asking,
      stakeholder: terminalStakeholder({ input: closed, output }),
    });
    expect(ended.error).toMatchObject({
      role: "stakeholder",
      message: "the terminal closed before an answer was given",
    });
    // Out-of-range arguments are named errors with a code, before any turn.
    await expect(
      runEpisode({
        task,
        manager: asking,
        stakeholder: terminalStakeholder({ input: closed, output }),
        questionBudget: -1,
      }),
    ).rejects.toMatchObject({ code: "dialogue.input", message: "questionBudget must be an integer ≥ 0, got -1" });
  });
});
