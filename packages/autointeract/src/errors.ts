import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/autointeract` throws: a dialogue that cannot go on (`dialogue.*`: a role's
 * bad answer or time-out, a spent budget, an unreadable transcript) and GDPval data that does not
 * have its shape or names no task (`gdpval.*`).
 */
export abstract class AutointeractError extends RubricError {
  abstract override readonly code: `dialogue.${string}` | `gdpval.${string}`;
}
