import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built `rubric` binary (`pnpm test` builds first). */
export const RUBRIC_BIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

/**
 * Runs `rubric` in a child process as a user would, asynchronously (so a test server in this
 * process can answer it), with no API keys in its environment (unless `env` sets some) and
 * `stdin` piped in, in `cwd` (default: this process's).
 */
export function runRubric(
  args: readonly string[],
  stdin = "",
  env: Readonly<Record<string, string>> = {},
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUBRIC_BIN, ...args], {
      env: { ...process.env, OPENAI_API_KEY: "", HF_TOKEN: "", ...env },
      ...(cwd === undefined ? {} : { cwd }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/**
 * `rubric <args>` in this process, through the `runCli` that the binary's `main` calls, with its
 * output captured: for checks that end before any work (usage and input errors), where a child
 * process costs a second of start-up for a few milliseconds of parsing — 2 to 3 s each on the
 * 2-core CI machine beside the other test files. What runs is the same code; the binary's own
 * path (start-up, exit status, pipes) is what the `runRubric` tests cover.
 */
export async function runRubricHere(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { runCli } = await import("../cli.js");
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    args,
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
    },
    { isTTY: false },
  );
  return { code, stdout, stderr };
}
