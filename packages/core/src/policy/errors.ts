import { RubricError } from "../errors/rubric-error.js";

/**
 * Thrown when policy-gradient math is given input it cannot mean: ragged or mismatched
 * [sequence][token] arrays, a sequence with no unmasked token, NaN, a negative epsilon, an empty
 * group. The message starts with the offending argument and index so it can be fixed by hand:
 * `logpOld[2]: expected 17 tokens (as logpNew[2]), got 16`.
 */
export class PolicyInputError extends RubricError {
  override readonly name = "PolicyInputError";
  readonly code = "policy.input";
  constructor(
    /** The argument and index at fault, e.g. `mask[1][4]` or `epsLow`. */
    readonly path: string,
    /** What is wrong, with the offending value: `expected a finite number, got NaN`. */
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/** A short, stable rendering of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value === "object" ? "an object" : String(value);
}

// The guards below are shared by every module of policy/: each checks one scalar or list and
// throws PolicyInputError naming it, so the math functions can trust their numbers afterwards.

/** Returns `value` if it is a finite number; throws naming `path` otherwise. */
export function requireFinite(path: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new PolicyInputError(path, `expected a finite number, got ${describeValue(value)}`);
  }
  return value;
}

/** Returns `value` if it is a finite number ≥ 0; throws naming `path` otherwise. */
export function requireNonNegative(path: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new PolicyInputError(path, `expected a finite number ≥ 0, got ${describeValue(value)}`);
  }
  return value;
}

/** Returns `value` if it is an integer in [min, max]; throws naming `path` otherwise. */
export function requireInteger(path: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw new PolicyInputError(path, `expected an integer ${range}, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Checks that `values` is an array of finite numbers (non-empty unless `allowEmpty`), naming the
 * first bad entry as `path[i]`.
 */
export function requireFiniteList(path: string, values: unknown, what: string, allowEmpty = false): readonly number[] {
  if (!Array.isArray(values)) {
    throw new PolicyInputError(path, `expected an array of ${what}, got ${describeValue(values)}`);
  }
  if (values.length === 0 && !allowEmpty) {
    throw new PolicyInputError(path, `expected a non-empty array of ${what}, got an empty array`);
  }
  for (let i = 0; i < values.length; i++) requireFinite(`${path}[${i}]`, values[i]);
  return values as readonly number[];
}
