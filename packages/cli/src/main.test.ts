import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { RUBRIC_BIN } from "./__fixtures__/run-cli.js";

describe("the rubric binary", () => {
  it("stops quietly with exit 0 when its reader has gone (`rubric … | head`)", async () => {
    const child = spawn(process.execPath, [RUBRIC_BIN, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    // Closed before the binary has even loaded: its first write meets a pipe with no reader.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).not.toMatch(/EPIPE/);
    expect(code).toBe(0);
  });
});
