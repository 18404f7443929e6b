import { integerFlag } from "./flag.js";

/**
 * The operator's ceilings on what a rubric's `python` and `js` rules may ask for, shared by every
 * command that runs verifiers. A rule whose spec asks for more is refused before any work, naming
 * the criterion and the maximum (`--max-rule-timeout-ms 120000` to allow more).
 */
export const ruleLimitFlags = {
  maxRuleTimeoutMs: integerFlag("<ms>", "most wall time a python/js rule may ask for (default 60000)", { min: 1 }),
  maxRuleMemoryMb: integerFlag("<MiB>", "most memory a python/js rule may ask for (default 2048 python, 1024 js)", {
    min: 1,
  }),
};

/** The flags as `createVerifierRegistry`'s `ruleLimits`. */
export function ruleLimitsOf(args: { maxRuleTimeoutMs: number | undefined; maxRuleMemoryMb: number | undefined }) {
  return { maxTimeoutMs: args.maxRuleTimeoutMs, maxMemoryMb: args.maxRuleMemoryMb };
}
