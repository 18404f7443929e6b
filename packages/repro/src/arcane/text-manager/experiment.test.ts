import { describe, expect, it } from "vitest";
import { GDPVAL } from "../__fixtures__/gym.js";
import { sidecarManagerConfig } from "./config.js";
import { runSidecarManager } from "./experiment.js";
import { UNPARSEABLE_UTILITY } from "./reward.js";
import { sidecarManagerMarkdown } from "./table.js";

const TIMEOUT_MS = 300_000; // a guard for a busy 2-core machine, not a measurement

describe("runSidecarManager", () => {
  it(
    "trains and evaluates end to end on a handful of tasks, and counts every episode",
    async () => {
      const config = sidecarManagerConfig({
        quick: true,
        trainTasks: 6,
        evalTasks: 3,
        sftEpochs: 2,
        teacherStakeholders: 2,
        gspoBatches: 1,
        promptsPerBatch: 2,
        groupSize: 2,
        vocabularySize: 1500,
        model: { dModel: 32, heads: 4, layers: 1, maxSequence: 640 },
        threads: 1,
      });
      const table = await runSidecarManager({ gdpvalDir: GDPVAL, config });
      expect(table.tasks).toEqual({ train: 6, eval: 3 });
      expect(table.model).toMatchObject({ name: "sidecar-tiny", device: "cpu" });
      // Printed as a simulation, with the paper's column beside ours.
      const markdown = sidecarManagerMarkdown(table);
      expect(markdown).toContain("> Rubric gym, a simulation");
      expect(markdown).toMatch(/\| LLM manager, GSPO \| [\d.]+ \| [\d.]+ \| 0\.62 \| 0\.74 \|/);
      expect(table.training.sftLoss).toHaveLength(2);
      expect(table.training.sftDialogues).toBe(12);
      expect(table.training.gspo).toHaveLength(1);
      expect(table.training.gspo[0]!.counts.episodes).toBe(4);
      // The KL to the SFT policy after the batch's two steps: logged, small, never negative (k3).
      expect(table.training.gspo[0]!.kl).toBeGreaterThanOrEqual(0);
      expect(markdown).toContain("| GSPO batch | mean reward | clipped | KL to SFT |");
      for (const written of [table.written.sft, table.written.gspo]) {
        expect(written.counts.episodes).toBe(3);
        expect(written.examples).toHaveLength(3);
      }
      for (const row of Object.values(table.rows)) {
        expect(row.n).toEqual([1, 8]);
        for (const r of row.meanReturn) expect(r >= 0 && r <= 1).toBe(true);
      }
      // An episode whose rubric does not parse counts at the floor; the others at their pick's U*.
      for (const m of ["sft", "gspo"] as const) {
        const { counts, meanReturnWhenParsed } = table.written[m];
        const parsed = counts.episodes - counts.unparseable;
        expect(meanReturnWhenParsed === null).toBe(parsed === 0);
        table.rows[m].meanReturn.forEach((r, j) =>
          expect(r * counts.episodes).toBeCloseTo(
            (meanReturnWhenParsed?.[j] ?? 0) * parsed + UNPARSEABLE_UTILITY * counts.unparseable,
            10,
          ),
        );
      }
      expect(table.rows.oracle.meanReturn[1]!).toBeGreaterThan(table.rows.noRubric.meanReturn[1]!);
    },
    TIMEOUT_MS,
  );
});
