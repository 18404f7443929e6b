import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isRubricError } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { loadGdpval } from "./dataset.js";
import { findGdpvalTask, GdpvalTaskAmbiguousError, GdpvalTaskNotFoundError } from "./find-task.js";
import { GdpvalDataError, type GdpvalTask } from "./tasks.js";

const GDPVAL = join(
  process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url)),
  "data/gdpval",
);

const task = (task_id: string): GdpvalTask => ({
  task_id,
  sector: "Finance",
  occupation: "Analyst",
  prompt: "Write it.",
  reference_files: [],
  reference_file_urls: [],
});
const pool = ["abc123", "abc124", "abd000", "ab"].map(task);

describe("findGdpvalTask", () => {
  it("finds a task by its whole id or a unique prefix, a whole id winning over a longer id it prefixes", () => {
    expect(findGdpvalTask(pool, "abc124").task_id).toBe("abc124");
    expect(findGdpvalTask(pool, "abd").task_id).toBe("abd000");
    // "ab" is a whole id and also a prefix of the other three.
    expect(findGdpvalTask(pool, "ab").task_id).toBe("ab");
  });

  it("tells no match from an ambiguous prefix, both under GdpvalDataError, naming the candidates", () => {
    const none = (() => {
      try {
        findGdpvalTask(pool, "zz", { pool: "eval" });
      } catch (error) {
        return error;
      }
    })();
    expect(none).toBeInstanceOf(GdpvalTaskNotFoundError);
    expect(none).toBeInstanceOf(GdpvalDataError);
    expect(none).toMatchObject({ name: "GdpvalTaskNotFoundError", query: "zz" });
    expect((none as Error).message).toBe('no GDPval eval task has an id starting with "zz"');

    const several = (() => {
      try {
        findGdpvalTask(pool, "abc");
      } catch (error) {
        return error;
      }
    })();
    expect(several).toBeInstanceOf(GdpvalTaskAmbiguousError);
    expect(several).toBeInstanceOf(GdpvalDataError);
    expect(several).toMatchObject({ name: "GdpvalTaskAmbiguousError", query: "abc", candidates: ["abc123", "abc124"] });
    expect((several as Error).message).toBe('"abc" is a prefix of 2 GDPval task ids (abc123, abc124); give more of it');
    expect(() => findGdpvalTask(pool, "")).toThrow(GdpvalTaskNotFoundError);
    // Stable codes under the one error model (the CLI's exit-code table reads these).
    expect([isRubricError(none), (none as GdpvalDataError).code]).toEqual([true, "gdpval.task-not-found"]);
    expect([isRubricError(several), (several as GdpvalDataError).code]).toEqual([true, "gdpval.task-ambiguous"]);
    expect(new GdpvalDataError("bad line").code).toBe("gdpval.data");
  });

  it("searches GDPval examples by their task, and names only the first few of many candidates", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    const wanted = gdpval.eval[3]!;
    expect(findGdpvalTask(gdpval.eval, wanted.task.task_id.slice(0, 8), { pool: "eval" })).toBe(wanted);
    // A one-character prefix of a UUID is shared by many of the 220 tasks.
    const prefix = gdpval.tasks[0]!.task_id.slice(0, 1);
    const sharing = gdpval.tasks.filter((t) => t.task_id.startsWith(prefix)).map((t) => t.task_id);
    expect(sharing.length).toBeGreaterThan(5);
    try {
      findGdpvalTask(gdpval.tasks, prefix);
      expect.unreachable("an ambiguous prefix must throw");
    } catch (error) {
      expect(error).toBeInstanceOf(GdpvalTaskAmbiguousError);
      expect((error as GdpvalTaskAmbiguousError).candidates).toEqual(sharing);
      expect((error as Error).message).toBe(
        `"${prefix}" is a prefix of ${sharing.length} GDPval task ids (${sharing.slice(0, 5).join(", ")}, …); give more of it`,
      );
    }
  });
});
