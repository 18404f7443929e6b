import { describe, expect, it } from "vitest";
import { ArcoInputError } from "../errors.js";
import { stepPrompt, withPromptSettings } from "./prompt.js";
import { stepsOf } from "./step.js";
import { museumTrajectory } from "../__fixtures__/museum-trajectory.js";

const trajectory = museumTrajectory;

describe("stepPrompt", () => {
  it("writes the question, every earlier action with its observation, the budget and the action", () => {
    const [system, user] = stepPrompt(stepsOf(trajectory)[2]!);
    expect(system.role).toBe("system");
    expect(system.content).toMatch(/criteria/);
    expect(user.content).toContain("Question: Which city hosts the museum founded by X?");
    expect(user.content).toContain("Action: Search[museum founded by X]\nObservation: The Y Museum was founded by X.");
    expect(user.content).toContain("Action: Search[Y Museum location]\nObservation: The Y Museum is in Lyon.");
    expect(user.content).toContain("Searches remaining before this action: 1");
    expect(user.content).toContain("Action to evaluate: Finish[Lyon]");
    expect(user.content).toContain('{"criteria": ["criterion 1", "criterion 2", "criterion 3"]}');
    // The action's own result is never shown: μ judges the action before seeing it.
    expect(user.content).not.toContain("Episode finished.");
  });

  it("puts the action after the instructions with layout action-last, the rest word for word as ARCO's order", () => {
    const step = stepsOf(trajectory)[2]!;
    const [, arco] = stepPrompt(step);
    const [, last] = stepPrompt(step, { layout: "action-last" });
    // ARCO's order: the action, then the instructions; action-last ends on the action itself.
    expect(arco.content.indexOf("Action to evaluate:")).toBeLessThan(arco.content.indexOf("Write exactly 3"));
    expect(last.content.endsWith("\n\nAction to evaluate: Finish[Lyon]")).toBe(true);
    const lines = (text: string) =>
      text
        .split("\n")
        .filter((line) => line !== "")
        .sort();
    expect(lines(last.content)).toEqual(lines(arco.content));
    expect(stepPrompt(step, { layout: "arco" })).toEqual(stepPrompt(step));
  });

  it("shows (none) before the first action and never its observation", () => {
    const [, user] = stepPrompt(stepsOf(trajectory)[0]!);
    expect(user.content).toContain("Trajectory so far:\n(none)");
    expect(user.content).not.toContain("was founded by X");
  });

  it("cuts history observations to maxObservationChars, and takes K, the budget label and the environment", () => {
    const step = {
      task: "t",
      history: [{ action: "call()", observation: "z".repeat(50) }],
      budgetLeft: 4,
      action: "done()",
    };
    const [system, user] = stepPrompt(step, {
      k: 5,
      maxObservationChars: 10,
      budgetLabel: "Tool calls remaining",
      environment: "The agent calls tools.",
    });
    expect(user.content).toContain(`Observation: ${"z".repeat(10)}… [40 more characters]`);
    expect(user.content).not.toContain("z".repeat(11));
    expect(user.content).toContain("Tool calls remaining before this action: 4");
    expect(user.content).toContain("Write exactly 5 short criteria");
    expect(system.content.endsWith("\n\nThe agent calls tools.")).toBe(true);
  });

  it("refuses a K that is not a positive integer", () => {
    const step = stepsOf(trajectory)[0]!;
    expect(() => stepPrompt(step, { k: 0 })).toThrow(ArcoInputError);
    expect(() => stepPrompt(step, { k: 2.5 })).toThrow(/k: expected an integer ≥ 1, got 2.5/);
  });

  it("writes a generic agent's step without ARCO's question-answering words", () => {
    const step = { task: "Make the failing test pass", history: [], budgetLeft: 6, action: "run_tests()" };
    const [, qa] = stepPrompt(step);
    const [, generic] = stepPrompt(step, { style: "generic" });
    expect(qa).toMatchObject({ content: expect.stringContaining("Question: Make the failing test pass") });
    expect(generic.content).toContain("Task: Make the failing test pass");
    expect(generic.content).toContain("Steps remaining before this action: 6");
    expect(generic.content).not.toMatch(/Question|query|Searches/);
    expect(stepPrompt(step, { style: "generic", budgetLabel: "Tool calls left" })[1].content).toContain(
      "Tool calls left before this action: 6",
    );
  });
});

describe("withPromptSettings", () => {
  it("lets a given option win and falls back to the saved setting where the option is absent or undefined", () => {
    const saved = { style: "generic" as const, budgetLabel: "Tool calls left", maxObservationChars: 80 };
    expect(withPromptSettings(saved, { k: 3, budgetLabel: undefined, maxObservationChars: 20 })).toEqual({
      k: 3,
      style: "generic",
      budgetLabel: "Tool calls left",
      maxObservationChars: 20,
    });
    expect(withPromptSettings(undefined, {})).toEqual({});
    // The layout travels with a model as the other settings do.
    expect(withPromptSettings({ layout: "action-last" }, { k: 3 })).toEqual({ k: 3, layout: "action-last" });
  });
});
