import { describe, expect, it } from "vitest";
import type { CliIO } from "./io.js";
import { HEARTBEAT_MS, overallProgress, stageLines } from "./progress.js";

describe("stageLines (progress in a log)", () => {
  it("writes one line per stage when it ends, and says a long stage is still running", () => {
    const err: string[] = [];
    const io: CliIO = { out: () => {}, err: (text) => void err.push(text) };
    let t = 0;
    const progress = stageLines(io, () => t);
    t = 1_000;
    progress.update(1, 6, "μ's warm-up", "epochs");
    expect(err).toEqual([]);
    t = HEARTBEAT_MS + 5_000;
    progress.update(2, 6, "μ's warm-up", "epochs");
    expect(err).toEqual(["μ's warm-up: 2/6  epochs (65.0 s, still running)\n"]);
    // Not again until another HEARTBEAT_MS has passed.
    t += 1_000;
    progress.update(3, 6, "μ's warm-up", "epochs");
    expect(err).toHaveLength(1);
    t += HEARTBEAT_MS;
    progress.update(6, 6, "μ's warm-up", "epochs");
    expect(err).toHaveLength(1); // a finished stage waits for its own line
    progress.update(1, 16, "run 1 of 4");
    expect(err.at(-1)).toBe(`μ's warm-up: 6/6  epochs (${((t - 0) / 1000).toFixed(1)} s)\n`);
    t += 2_000;
    progress.done();
    expect(err.at(-1)).toBe("run 1 of 4: 1/16 (2.0 s)\n");
  });
});

describe("overallProgress (where a long run stands)", () => {
  it("estimates each unit left by the finished units of its name, else by all finished units", () => {
    let t = 0;
    const overall = overallProgress(["outcome", "arco", "outcome", "arco", "outcome"], () => t);
    expect(overall.next()).toBe("1 of 5");
    t = 10_000; // outcome: 10 s; nothing known of arco yet, so it is guessed at the mean (10 s)
    expect(overall.next()).toBe("2 of 5, about 40 s left");
    t = 370_000; // arco: 6 min. Left: outcome 10 s + arco 6 min + outcome 10 s
    expect(overall.next()).toBe("3 of 5, about 6 min left");
    t = 390_000; // outcome again: 20 s (mean 15 s). Left: arco 360 s + outcome 15 s = 375 s
    expect(overall.next()).toBe("4 of 5, about 6 min left");
    t = 4 * 3_600_000; // arco took 3.9 h this time (mean ≈ 2 h): only an outcome is left, 15 s
    expect(overall.next()).toBe("5 of 5, about 15 s left");
  });
});
