import { PolicyInputError, describeValue, requireFiniteList, requireInteger } from "./errors.js";

/** ARCO's position buckets for step-level baselines. */
export type ArcoStepBucket = "search_1" | "search_2" | "search_3" | "terminal";

/**
 * A per-bucket mean baseline: each entry's baseline is the mean of the values that share its
 * bucket (itself included). A bucket with a single member has no peers to average, so it falls
 * back to the mean of the whole batch.
 *
 * @example
 * bucketBaseline([1, 3, 10, 2], ["a", "a", "b", "c"]);
 * // batch mean = 16/4 = 4; bucket a = (1+3)/2 = 2; b and c are singletons → 4
 * // → [2, 2, 4, 4]
 */
export function bucketBaseline(values: readonly number[], buckets: readonly string[]): number[] {
  requireFiniteList("values", values, "numbers");
  if (!Array.isArray(buckets)) {
    throw new PolicyInputError("buckets", `expected an array of strings, got ${describeValue(buckets)}`);
  }
  if (buckets.length !== values.length) {
    throw new PolicyInputError("buckets", `expected ${values.length} labels (one per value), got ${buckets.length}`);
  }
  const sums = new Map<string, { sum: number; count: number }>();
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const bucket: unknown = buckets[i];
    if (typeof bucket !== "string") {
      throw new PolicyInputError(`buckets[${i}]`, `expected a string, got ${describeValue(bucket)}`);
    }
    const value = values[i]!;
    total += value;
    const entry = sums.get(bucket);
    if (entry === undefined) sums.set(bucket, { sum: value, count: 1 });
    else {
      entry.sum += value;
      entry.count++;
    }
  }
  const batchMean = total / values.length;
  return buckets.map((bucket) => {
    const { sum, count } = sums.get(bucket)!;
    return count > 1 ? sum / count : batchMean;
  });
}

/**
 * The ARCO position bucket of step `t` (0-based) in an episode of `numSteps` steps. The last step
 * is always "terminal"; earlier steps are "search_1", "search_2", "search_3" by position, and any
 * non-terminal step after the third (only possible when an environment allows more than three
 * searches or counts invalid actions as steps) stays in "search_3", the late-search bucket, rather
 * than opening a bucket of its own that would almost always be a singleton.
 *
 * @example
 * arcoStepBucket(0, 3); // → "search_1"
 * arcoStepBucket(2, 3); // → "terminal"
 * arcoStepBucket(4, 6); // → "search_3"
 * arcoStepBucket(0, 1); // → "terminal"
 */
export function arcoStepBucket(t: number, numSteps: number): ArcoStepBucket {
  requireInteger("numSteps", numSteps, 1);
  requireInteger("t", t, 0, numSteps - 1);
  if (t === numSteps - 1) return "terminal";
  if (t === 0) return "search_1";
  if (t === 1) return "search_2";
  return "search_3";
}

/**
 * ARCO's position buckets by what each step did, as its code labels them: the i-th search of an
 * episode is `search_i` (a fourth or later stays `search_3`), every other step (a finish, an
 * invalid action) is `terminal`, and the last step is always `terminal`. Differs from
 * {@link arcoStepBucket} only when an episode holds a non-search step before its end.
 *
 * @example
 * arcoActionBuckets([true, false, true, false]);
 * // search, invalid, search, finish → ["search_1", "terminal", "search_2", "terminal"]
 */
export function arcoActionBuckets(isSearch: readonly boolean[]): ArcoStepBucket[] {
  if (!Array.isArray(isSearch) || isSearch.length === 0) {
    throw new PolicyInputError("isSearch", `expected a non-empty array of booleans, got ${describeValue(isSearch)}`);
  }
  let searches = 0;
  return isSearch.map((search, t) => {
    if (typeof search !== "boolean") {
      throw new PolicyInputError(`isSearch[${t}]`, `expected a boolean, got ${describeValue(search)}`);
    }
    if (t === isSearch.length - 1 || !search) return "terminal";
    searches++;
    return searches === 1 ? "search_1" : searches === 2 ? "search_2" : "search_3";
  });
}
