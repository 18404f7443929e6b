import { describe, expect, it } from "vitest";
import { StepSchema, stepsOf, TrajectorySchema } from "./step.js";
import { museumTrajectory } from "../__fixtures__/museum-trajectory.js";

const trajectory = museumTrajectory;

describe("stepsOf", () => {
  it("gives step t the turns before it whole and its own action, never its own observation", () => {
    expect(TrajectorySchema.parse(trajectory)).toEqual(trajectory);
    const steps = stepsOf(trajectory);
    expect(steps).toHaveLength(3);
    expect(steps[0]).toEqual({
      task: trajectory.task,
      history: [],
      budgetLeft: 3,
      action: "Search[museum founded by X]",
    });
    expect(steps[2]?.history).toEqual([
      { action: "Search[museum founded by X]", observation: "The Y Museum was founded by X." },
      { action: "Search[Y Museum location]", observation: "The Y Museum is in Lyon." },
    ]);
    expect(steps[2]?.budgetLeft).toBe(1);
    for (const step of steps) expect(StepSchema.parse(step)).toEqual(step);
  });
});

describe("StepSchema", () => {
  it("refuses a negative or fractional budget and unknown fields, naming the field", () => {
    const bad = StepSchema.safeParse({ task: "t", history: [], budgetLeft: -1, action: "a" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["budgetLeft"]);
    expect(StepSchema.safeParse({ task: "t", history: [], budgetLeft: 1.5, action: "a" }).success).toBe(false);
    expect(StepSchema.safeParse({ task: "t", history: [], budgetLeft: 1, action: "a", result: "x" }).success).toBe(
      false,
    );
  });

  it("a trajectory needs at least one turn", () => {
    expect(TrajectorySchema.safeParse({ id: "q", task: "t", turns: [], outcome: 0 }).success).toBe(false);
  });
});
