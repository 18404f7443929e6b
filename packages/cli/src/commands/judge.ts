import { textFlag } from "../flags/flag.js";

/** `--judge`, as `score --outputs` and `hackbench` both take it. */
export const judgeFlag = textFlag(
  "<provider>",
  "model for llm-judge criteria: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model> (keys from HF_TOKEN / OPENAI_API_KEY)",
);

/**
 * The flag that fixes a rubric whose llm-judge criteria have no verifier: the verifiers say so in
 * their own terms (a registry without a judge); which flag configures one is the CLI's to say.
 */
export function judgeHint(error: Error, judge: string | undefined): string | undefined {
  return judge === undefined && error.message.includes('no verifier for kind "llm-judge"')
    ? "Pass --judge <provider> to judge the llm-judge criteria."
    : undefined;
}
