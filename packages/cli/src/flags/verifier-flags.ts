import { type ErrorPolicy, ErrorPolicySchema, type LanguageModel } from "@rubric/core";
import {
  createVerifierRegistry,
  fileCache,
  llmJudge,
  type ScoreOutputsOptions,
  type VerifierRegistry,
} from "@rubric/verifiers";
import { z } from "zod";
import { judgeFlags } from "./judge-flags.js";
import { choiceFlag, integerFlag, switchFlag, textFlag } from "./flag.js";
import { ruleLimitFlags, ruleLimitsOf } from "./rule-limits.js";

/**
 * The flags of every command that runs a rubric's verifiers on outputs (`score --outputs`,
 * `serve`): the rule limits, the judge, and how verdicts are run, cached and scored.
 */
export const verifierFlags = {
  ...ruleLimitFlags,
  ...judgeFlags,
  judgeMode: choiceFlag(
    "<mode>",
    "batched (default: one call per output) | per-criterion",
    z.enum(["batched", "per-criterion"]),
  ),
  samples: integerFlag("<k>", "judge samples per verdict, averaged (default 1)", { min: 1 }).default(1),
  concurrency: integerFlag("<n>", "verifier calls in flight (default 8)", { min: 1 }).default(8),
  cache: textFlag("<dir>", "persistent verdict cache; a rerun of the same work makes no calls"),
  ignoreGates: switchFlag("staged rubrics: score every stage, ignoring gates"),
  errorsAs: choiceFlag(
    "<policy>",
    "fail | zero | renormalize for error verdicts (default fail: an output with an error verdict is unscored)",
    ErrorPolicySchema,
  ),
};

/** What a command's parsed arguments hold of {@link verifierFlags}. */
export interface VerifierArgs {
  readonly maxRuleTimeoutMs: number | undefined;
  readonly maxRuleMemoryMb: number | undefined;
  readonly judgeMode: "batched" | "per-criterion" | undefined;
  readonly samples: number;
  readonly concurrency: number;
  readonly cache: string | undefined;
  readonly ignoreGates: boolean;
  readonly errorsAs: ErrorPolicy | undefined;
}

/**
 * The scoring options the flags describe: a registry of the rules (within the rule limits) and,
 * with `judge`, the LLM judge; concurrency, cache, gates, the error policy (`fail` by default)
 * and any weight overrides. What `score --outputs` and `serve` both run with.
 */
export function verifierOptions(
  args: VerifierArgs,
  judge: LanguageModel | undefined,
  weights: Readonly<Record<string, number>> | undefined,
): ScoreOutputsOptions & { readonly registry: VerifierRegistry; readonly errorsAs: ErrorPolicy } {
  return {
    registry: createVerifierRegistry({
      ruleLimits: ruleLimitsOf(args),
      ...(judge === undefined
        ? {}
        : { judge: llmJudge(judge, { mode: args.judgeMode ?? "batched", samples: args.samples }) }),
    }),
    concurrency: args.concurrency,
    errorsAs: args.errorsAs ?? "fail",
    ignoreGates: args.ignoreGates,
    ...(weights === undefined ? {} : { weights }),
    ...(args.cache === undefined ? {} : { cache: fileCache(args.cache) }),
  };
}
