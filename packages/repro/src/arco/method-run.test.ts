import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunFileError, RunSettingsError } from "@rubric/core/runs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARCO_SIDECAR_FILE, checkArcoSidecar } from "./method-run.js";

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), "arco-sidecar-"));
});
afterEach(() => rm(out, { recursive: true, force: true }));

describe("checkArcoSidecar: a resume trains on the threads the run began on", () => {
  it("records the sidecar on a fresh start, and a resume on the same one goes on", async () => {
    await checkArcoSidecar(out, { torch: "1.13.0", threads: 1 }, false);
    expect(JSON.parse(await readFile(join(out, ARCO_SIDECAR_FILE), "utf8"))).toEqual({ torch: "1.13.0", threads: 1 });
    await expect(checkArcoSidecar(out, { torch: "1.13.0", threads: 1 }, true)).resolves.toBeUndefined();
  });

  it("refuses a resume on another thread count or torch, naming the file and both", async () => {
    await checkArcoSidecar(out, { torch: "1.13.0", threads: 1 }, false);
    const resumed = checkArcoSidecar(out, { torch: "1.13.0", threads: 2 }, true);
    await expect(resumed).rejects.toBeInstanceOf(RunSettingsError);
    await expect(resumed).rejects.toThrow(
      `${join(out, ARCO_SIDECAR_FILE)}: settings differ from this run's (started on torch 1.13.0 with 1 thread(s), resumed on torch 1.13.0 with 2; --threads sets them)`,
    );
    await expect(checkArcoSidecar(out, { torch: "2.11.0", threads: 1 }, true)).rejects.toBeInstanceOf(RunSettingsError);
    // Refused before anything is written: the record is still the run's.
    expect(JSON.parse(await readFile(join(out, ARCO_SIDECAR_FILE), "utf8"))).toEqual({ torch: "1.13.0", threads: 1 });
  });

  it("resumes a run started before the record was kept, and records it; a fresh start replaces it", async () => {
    await checkArcoSidecar(out, { torch: "1.13.0", threads: 2 }, true);
    expect(JSON.parse(await readFile(join(out, ARCO_SIDECAR_FILE), "utf8")).threads).toBe(2);
    await checkArcoSidecar(out, { torch: "1.13.0", threads: 1 }, false);
    expect(JSON.parse(await readFile(join(out, ARCO_SIDECAR_FILE), "utf8")).threads).toBe(1);
  });

  it("names a damaged record rather than resuming past it", async () => {
    await writeFile(join(out, ARCO_SIDECAR_FILE), '{"torch": "1.13.0"}\n');
    await expect(checkArcoSidecar(out, { torch: "1.13.0", threads: 1 }, true)).rejects.toBeInstanceOf(RunFileError);
  });
});
