import { ErrorPolicySchema } from "@rubric/core";
import { z } from "zod";
import { judgeFlags } from "../commands/judge.js";
import { choiceFlag, integerFlag, switchFlag, textFlag } from "./flag.js";
import { ruleLimitFlags } from "./rule-limits.js";

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
