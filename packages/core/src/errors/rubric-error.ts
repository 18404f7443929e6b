/**
 * The root of every error the toolkit throws on purpose. Each package has one base class under it
 * (`ProviderError`, `VerificationError`, …) and every concrete error carries a stable `code`: the
 * part of an error that callers and the CLI's exit-code table may rely on across releases (messages
 * may be reworded; codes are not).
 *
 * Codes are `<area>.<kind>`, lower-case, e.g. `provider.http`, `rubric.validation`.
 */
export abstract class RubricError extends Error {
  /** Stable machine-readable kind, `<area>.<kind>`. */
  abstract readonly code: string;
}

/**
 * Whether `value` is one of the toolkit's errors. Checks the shape, not `instanceof`, so that an
 * error from a second copy of a package (two versions in one `node_modules`) is still recognised.
 */
export function isRubricError(value: unknown): value is RubricError {
  if (!(value instanceof Error)) return false;
  const code: unknown = (value as { code?: unknown }).code;
  return typeof code === "string" && /^[a-z][a-z-]*\.[a-z][a-z-.]*$/.test(code);
}
