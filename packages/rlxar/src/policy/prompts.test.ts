import { describe, expect, it } from "vitest";
import type { AgentView } from "../environment/environment.js";
import { toyQa } from "./__fixtures__/toy-qa.js";
import { historyText, policyMessages, policySystemPrompt } from "./prompts.js";

const env = toyQa();
const fresh: AgentView = { taskId: "q1", task: "Who wrote Dune?", history: [], budgetLeft: 3, mustFinish: false };
const later: AgentView = {
  taskId: "q1",
  task: "Who wrote Dune?",
  history: [
    { action: "Search[Dune novel]", observation: "Dune is a 1965 novel by Frank Herbert." },
    { action: "Search[Frank Herbert]", observation: "Frank Herbert was an American writer." },
  ],
  budgetLeft: 1,
  mustFinish: false,
};

describe("the policy's prompts (ARCO's, in our words)", () => {
  it("puts the environment's description, every action form and the rules in the system prompt", () => {
    const system = policySystemPrompt(env);
    expect(system.startsWith(env.description)).toBe(true);
    expect(system).toContain("  Search[query]\n  Finish[answer]");
    expect(system).toMatch(/under 64 tokens/);
    expect(system).toMatch(/Never repeat a search/);
    expect(system).toContain("Finish[yes] or Finish[no]");
    expect(system).toMatch(/concise but complete/);
  });

  it("shows an empty history as (none) and counts one search in the singular", () => {
    const [system, user] = policyMessages(env, fresh);
    expect(system?.role).toBe("system");
    expect(user).toEqual({
      role: "user",
      content:
        "Question: Who wrote Dune?\n\nHistory:\n(none)\n\nYou have 3 searches remaining.\nWrite your next action.",
    });
    expect(policyMessages(env, later)[1]?.content).toContain("You have 1 search remaining.");
  });

  it("writes the history as Action/Observation lines, in order", () => {
    expect(historyText(later)).toBe(
      "Action: Search[Dune novel]\nObservation: Dune is a 1965 novel by Frank Herbert.\n" +
        "Action: Search[Frank Herbert]\nObservation: Frank Herbert was an American writer.",
    );
  });

  it("cuts observations only when asked, with renderObservation's marker", () => {
    expect(historyText(later)).not.toContain("more characters");
    expect(historyText(later, { maxObservationChars: 8 })).toContain("Observation: Dune is … [30 more characters]");
  });

  it("replaces the turn prompt by the forced-finish prompt when the environment insists", () => {
    const forced = policyMessages(env, { ...later, budgetLeft: 0, mustFinish: true })[1]?.content ?? "";
    expect(forced).toContain("Question: Who wrote Dune?");
    expect(forced).toContain("Action: Search[Frank Herbert]");
    expect(forced).toContain("reply with Finish[answer] only");
    expect(forced).not.toContain("Write your next action.");
    // Not the budget alone: the environment's flag decides which prompt is shown.
    expect(policyMessages(env, { ...later, budgetLeft: 0 })[1]?.content).toContain("Write your next action.");
  });
});
