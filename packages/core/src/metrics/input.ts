import { StatisticsInputError } from "./errors.js";

/*
 * Edge checks shared by the metrics. They run once per public call so the math below them can
 * trust its arrays; each message names the argument the caller passed.
 */

export function requireFiniteValues(name: string, values: readonly number[], minLength = 1): void {
  if (values.length < minLength)
    throw new StatisticsInputError(
      `${name} must hold at least ${minLength} value${minLength === 1 ? "" : "s"}, got ${values.length}`,
    );
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number" || !Number.isFinite(value))
      throw new StatisticsInputError(`${name}[${i}] must be a finite number, got ${String(value)}`);
  }
}

export function requireSameLength(
  firstName: string,
  first: readonly unknown[],
  secondName: string,
  second: readonly unknown[],
): void {
  if (first.length !== second.length)
    throw new StatisticsInputError(
      `${firstName} and ${secondName} must have the same length, got ${first.length} and ${second.length}`,
    );
}

export function requireNotConstant(name: string, values: readonly number[]): void {
  const first = values[0];
  if (values.every((value) => value === first))
    throw new StatisticsInputError(
      `${name} is constant (every value is ${String(first)}), so the correlation is undefined`,
    );
}
