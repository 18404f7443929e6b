import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The main job runs as a user runs it, and its numbers hold what the data says. */
describe("examples/gdpval-rubric-summary.ts", () => {
  it("validates and scores all 219 GDPval rubrics reproducibly", () => {
    const script = fileURLToPath(new URL("./gdpval-rubric-summary.ts", import.meta.url));
    const run = (seed: string) =>
      spawnSync(process.execPath, ["--import", "tsx", script, "--seed", seed, "--samples", "3", "--json"], {
        encoding: "utf8",
        cwd: fileURLToPath(new URL(".", import.meta.url)),
      });
    const first = run("5");
    expect(first.status, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    const [train, evalSplit] = report.summaries;
    expect([train.rubrics, evalSplit.rubrics]).toEqual([175, 44]);
    expect(train.rules + evalSplit.rules).toBe(1383 + 349);
    expect(train.allFailed.mean).toBe(0);
    // Six shipped rubrics cannot reach 1 even when every rule is met; one never scores above 0.
    expect(train.allMet.belowOne + evalSplit.allMet.belowOne).toBe(6);
    expect(train.allMet.unreachable.some((u: { best: number }) => u.best === 0)).toBe(true);
    expect(train.random.stoppedAtGate).toBeGreaterThan(0.5);
    expect(train.random.meanIgnoringGates).toBeGreaterThan(train.random.mean);
    // Same seed, same numbers; another seed, other random verdicts.
    expect(JSON.parse(run("5").stdout)).toEqual(report);
    expect(JSON.parse(run("6").stdout).summaries[0].random.mean).not.toBe(train.random.mean);
  });
});
