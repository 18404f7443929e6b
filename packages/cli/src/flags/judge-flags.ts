import {
  ProviderConfigError,
  ProviderPreflightError,
  preflightProvider,
  providerFromSpec,
  type SpecifiedModel,
} from "@rubric/providers";
import { type CliIO, InputFileError } from "../io.js";
import { integerFlag, textFlag } from "./flag.js";

/**
 * The judge's flags, as `score --outputs` and `hackbench` both take them: which model, which key,
 * and how long a call may take. The defaults are the providers' own (60 s an attempt, 4 retries,
 * 120 s a call), printed here so that `--help` says what a judge that never answers costs.
 */
export const judgeFlags = {
  judge: textFlag(
    "<provider>",
    "model for llm-judge criteria: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>",
  ),
  judgeKeyEnv: textFlag(
    "<VAR>",
    "environment variable with the judge's API key, sent to the --judge server (default: OPENAI_API_KEY only to api.openai.com, HF_TOKEN only to Hugging Face)",
  ),
  judgeTimeout: integerFlag("<ms>", "budget of one judge attempt (default 60000)", { min: 1 }),
  judgeRetries: integerFlag("<n>", "retries of a judge call after a 429, 5xx, timeout or network error (default 4)", {
    min: 0,
  }),
  judgeDeadline: integerFlag("<ms>", "budget of one judge call, its retries included (default 120000)", { min: 1 }),
};

/** What a command's parsed arguments hold of {@link judgeFlags}. */
export interface JudgeArgs {
  readonly judge: string | undefined;
  readonly judgeKeyEnv: string | undefined;
  readonly judgeTimeout: number | undefined;
  readonly judgeRetries: number | undefined;
  readonly judgeDeadline: number | undefined;
}

/**
 * The judge model the flags describe, or undefined without `--judge`. Local models ignore the
 * network settings. A local model's file is checked here, before any output is scored: a missing
 * one used to show only as an error verdict on every row, its cause inside `--json`.
 */
export function judgeModel(args: JudgeArgs): SpecifiedModel | undefined {
  if (args.judge === undefined) return undefined;
  try {
    return providerFromSpec(args.judge, {
      checkFiles: true,
      apiKeyEnv: args.judgeKeyEnv,
      retry: { timeoutMs: args.judgeTimeout, retries: args.judgeRetries, deadlineMs: args.judgeDeadline },
    });
  } catch (error) {
    // The provider names the fault; the flag it came from is the CLI's to say.
    if (error instanceof ProviderConfigError) throw new InputFileError(`--judge ${args.judge}: ${error.message}`);
    throw error;
  }
}

/**
 * Checks a model flag's provider before any work (`preflightProvider`: a GGUF file, a server that
 * answers and accepts the key; nothing billed is called), so a judge that cannot answer stops the
 * run up front rather than turning every verdict into an error. A doubt (a model the server does
 * not list) is printed as a warning; a fault is a `ProviderPreflightError` naming the flag, or,
 * with a verdict cache (whose verdicts need no call), a warning.
 */
export async function preflightModel(
  flag: string,
  spec: string | undefined,
  io: CliIO,
  options: { readonly apiKeyEnv?: string | undefined; readonly cache?: string | undefined } = {},
): Promise<void> {
  if (spec === undefined) return;
  try {
    const { warning } = await preflightProvider(
      spec,
      options.apiKeyEnv === undefined ? {} : { apiKeyEnv: options.apiKeyEnv },
    );
    if (warning !== undefined) io.err(`warning: ${flag} ${spec}: ${warning}\n`);
  } catch (error) {
    if (!(error instanceof ProviderPreflightError)) throw error;
    if (options.cache === undefined) throw new ProviderPreflightError(`${flag} ${spec}`, error.reason);
    io.err(
      `warning: ${flag} ${spec}: ${error.reason}; the verdicts in --cache ${options.cache} are used, any other is an error\n`,
    );
  }
}

/** The judge flags a replay command line repeats, in the order `--help` lists them. */
export function judgeFlagWords(args: JudgeArgs): string[] {
  const words: [string, string | number | undefined][] = [
    ["--judge", args.judge],
    ["--judge-key-env", args.judgeKeyEnv],
    ["--judge-timeout", args.judgeTimeout],
    ["--judge-retries", args.judgeRetries],
    ["--judge-deadline", args.judgeDeadline],
  ];
  return words.flatMap(([flag, value]) => (value === undefined ? [] : [flag, String(value)]));
}

/**
 * The flag that fixes a rubric whose llm-judge criteria have no verifier: the verifiers say so in
 * their own terms (a registry without a judge); which flag configures one is the CLI's to say.
 */
export function judgeHint(error: Error, judge: string | undefined): string | undefined {
  return judge === undefined && error.message.includes('no verifier for kind "llm-judge"')
    ? "Pass --judge <provider> to judge the llm-judge criteria."
    : undefined;
}
