/**
 * @rubric/cli — the `rubric` command. The binary is `rubric`; `runCli` runs it in-process.
 */
export { runCli } from "./cli.js";
export type { CliIO } from "./io.js";
