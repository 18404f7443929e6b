import { describe, expect, it } from "vitest";
import { arcoActionBuckets, arcoStepBucket, bucketBaseline } from "./baseline.js";
import { PolicyInputError } from "./errors.js";

describe("bucketBaseline", () => {
  it("averages within a bucket and falls back to the batch mean for singletons", () => {
    // batch mean (1 + 3 + 10 + 2 + 4)/5 = 4; a = {1, 3, 2} → 2; b = {10} singleton → 4; c = {4} → 4
    expect(bucketBaseline([1, 3, 10, 2, 4], ["a", "a", "b", "a", "c"])).toEqual([2, 2, 4, 2, 4]);
  });

  it("gives the batch mean everywhere when every bucket is a singleton", () => {
    expect(bucketBaseline([1, 2, 6], ["x", "y", "z"])).toEqual([3, 3, 3]);
  });

  it("rejects mismatched or empty input", () => {
    expect(() => bucketBaseline([], [])).toThrow(
      new PolicyInputError("values", "expected a non-empty array of numbers, got an empty array"),
    );
    expect(() => bucketBaseline([1, 2], ["a"])).toThrow(
      new PolicyInputError("buckets", "expected 2 labels (one per value), got 1"),
    );
    expect(() => bucketBaseline([1, Infinity], ["a", "b"])).toThrow(
      new PolicyInputError("values[1]", "expected a finite number, got Infinity"),
    );
  });
});

describe("arcoStepBucket", () => {
  it("labels positions search_1..3, keeps later searches in search_3, and ends with terminal", () => {
    const labels = (numSteps: number) => Array.from({ length: numSteps }, (_, t) => arcoStepBucket(t, numSteps));
    expect(labels(1)).toEqual(["terminal"]);
    expect(labels(2)).toEqual(["search_1", "terminal"]);
    expect(labels(4)).toEqual(["search_1", "search_2", "search_3", "terminal"]);
    expect(labels(6)).toEqual(["search_1", "search_2", "search_3", "search_3", "search_3", "terminal"]);
  });

  it("rejects positions outside the episode", () => {
    expect(() => arcoStepBucket(3, 3)).toThrow(new PolicyInputError("t", "expected an integer in [0, 2], got 3"));
    expect(() => arcoStepBucket(0, 0)).toThrow(new PolicyInputError("numSteps", "expected an integer ≥ 1, got 0"));
    expect(() => arcoStepBucket(0.5, 2)).toThrow(PolicyInputError);
  });
});

describe("arcoActionBuckets", () => {
  it("numbers searches by count, puts every other step and the last step in terminal", () => {
    // search, invalid, search, finish
    expect(arcoActionBuckets([true, false, true, false])).toEqual(["search_1", "terminal", "search_2", "terminal"]);
    // a last step is terminal even when it searched (a forced-finish violation)
    expect(arcoActionBuckets([true, true, true, true])).toEqual(["search_1", "search_2", "search_3", "terminal"]);
    // a fourth search before the end stays in search_3
    expect(arcoActionBuckets([true, true, true, true, false])).toEqual([
      "search_1",
      "search_2",
      "search_3",
      "search_3",
      "terminal",
    ]);
    expect(arcoActionBuckets([false])).toEqual(["terminal"]);
  });

  it("rejects an empty episode and non-boolean entries", () => {
    expect(() => arcoActionBuckets([])).toThrow(PolicyInputError);
    expect(() => arcoActionBuckets([true, 1 as unknown as boolean])).toThrow(
      new PolicyInputError("isSearch[1]", "expected a boolean, got 1"),
    );
  });
});
