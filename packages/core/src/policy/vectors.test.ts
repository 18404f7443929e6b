// The shared test vectors (fixtures/policy-gradient-vectors.json, written by
// scripts/write-policy-gradient-vectors.ts) must keep reproducing: another implementation (the
// torch sidecar) checks itself against the same file, so a silent change here would split them.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { groupAdvantages, stepAdvantages } from "./advantages.js";
import { arcoStepBucket, bucketBaseline } from "./baseline.js";
import { decompositionLoss, valueLoss } from "./decomposition.js";
import { drGrpoObjective, grpoObjective } from "./grpo.js";
import { gspoObjective } from "./gspo.js";
import { klK3 } from "./kl.js";
import { projectToOutcome } from "./projection.js";
import { prioritizedReplay } from "./replay.js";
import { rewardToGo } from "./reward-to-go.js";

interface VectorCase {
  readonly name: string;
  readonly fn: string;
  readonly input: Record<string, unknown>;
  readonly expected: unknown;
}

const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/policy-gradient-vectors.json", import.meta.url), "utf8"),
) as { version: number; description: string; cases: VectorCase[] };

/** Every argument name the fixture uses; each case fills the ones its `fn` takes. */
interface FixtureArguments {
  readonly rewards: number[];
  readonly normalize?: "std" | "none";
  readonly eps?: number;
  readonly ddof?: number;
  readonly steps: number[];
  readonly gamma?: number;
  readonly values: number[];
  readonly buckets: string[];
  readonly t: number;
  readonly numSteps: number;
  readonly episodes: { stepScores: number[]; return: number }[];
  readonly scale?: number;
  readonly scores: number[][];
  readonly outcome: number;
  readonly percentile: number;
  readonly stepScores: number[][];
  readonly outcomes: number[];
}

/** Calls `fn` the way the fixture's description says: `input` holds the arguments by name. */
function run(fn: string, input: Record<string, unknown>): unknown {
  // Trusted test data: the cast only picks the fields by name, and every function validates them anyway.
  const a = input as unknown as FixtureArguments;
  const objectiveInput = input as never;
  switch (fn) {
    case "gspoObjective":
      return gspoObjective(objectiveInput);
    case "grpoObjective":
      return grpoObjective(objectiveInput);
    case "drGrpoObjective":
      return drGrpoObjective(objectiveInput);
    case "klK3":
      return klK3(objectiveInput);
    case "groupAdvantages":
      return groupAdvantages(a.rewards, { normalize: a.normalize, eps: a.eps, ddof: a.ddof });
    case "rewardToGo":
      return rewardToGo(a.steps, a.gamma);
    case "bucketBaseline":
      return bucketBaseline(a.values, a.buckets);
    case "arcoStepBucket":
      return arcoStepBucket(a.t, a.numSteps);
    case "stepAdvantages":
      return stepAdvantages(a.episodes, { scale: a.scale, gamma: a.gamma });
    case "projectToOutcome":
      return projectToOutcome(a.scores, a.outcome);
    case "prioritizedReplay":
      return prioritizedReplay(a.episodes, a.percentile);
    case "decompositionLoss":
      return decompositionLoss(a.stepScores, a.outcomes);
    case "valueLoss":
      // `values` is [trajectory][step] here, bucketBaseline's flat list elsewhere.
      return valueLoss(input.values as number[][], a.outcomes);
    default:
      throw new Error(`unknown fn ${fn}`);
  }
}

/** Same structure, same strings and booleans, numbers within 1e-12 (relative above 1); names the first difference. */
function difference(actual: unknown, expected: unknown, path: string): string | undefined {
  if (typeof expected === "number") {
    if (typeof actual !== "number") return `${path}: got ${String(actual)}, expected ${expected}`;
    return Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected))
      ? undefined
      : `${path}: got ${actual}, expected ${expected}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${path}: got ${JSON.stringify(actual)}, expected ${expected.length} items`;
    for (let i = 0; i < expected.length; i++) {
      const found = difference(actual[i], expected[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null) return `${path}: got ${String(actual)}, expected an object`;
    const actualKeys = Object.keys(actual).filter((key) => (actual as Record<string, unknown>)[key] !== undefined);
    const expectedKeys = Object.keys(expected);
    if (actualKeys.sort().join() !== expectedKeys.sort().join()) {
      return `${path}: got keys ${actualKeys.join(", ")}, expected ${expectedKeys.join(", ")}`;
    }
    for (const key of expectedKeys) {
      const found = difference(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return Object.is(actual, expected)
    ? undefined
    : `${path}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
}

describe("policy-gradient-vectors.json", () => {
  it("is version 1 with a description and a dozen cases of each objective", () => {
    expect(fixture.version).toBe(1);
    expect(fixture.description.length).toBeGreaterThan(100);
    const count = (fn: string) => fixture.cases.filter((c) => c.fn === fn).length;
    for (const fn of ["gspoObjective", "grpoObjective", "drGrpoObjective"])
      expect(count(fn)).toBeGreaterThanOrEqual(12);
    for (const fn of [
      "klK3",
      "groupAdvantages",
      "rewardToGo",
      "bucketBaseline",
      "arcoStepBucket",
      "stepAdvantages",
      "projectToOutcome",
      "prioritizedReplay",
      "decompositionLoss",
      "valueLoss",
    ]) {
      expect(count(fn)).toBeGreaterThanOrEqual(5);
    }
    expect(new Set(fixture.cases.map((c) => c.name)).size).toBe(fixture.cases.length);
  });

  for (const vector of fixture.cases) {
    it(vector.name, () => {
      const actual = JSON.parse(JSON.stringify(run(vector.fn, vector.input))) as unknown;
      expect(difference(actual, vector.expected, "expected")).toBeUndefined();
    });
  }
});
