/**
 * @rubric/cli — the `rubric` command. The binary is `rubric`; `runCli` runs it in-process.
 */

// command: the `rubric` command run in-process, and the IO it reads and writes through
export { runCli } from "./cli.js";
export type { CliIO } from "./io.js";
