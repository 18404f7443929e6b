import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { readJsonLines, toJsonLines } from "@rubric/core";
import { z } from "zod";
import type { VerdictDraft } from "./verifier.js";

/**
 * Where verdicts are kept between runs, by cache key. Only `ok` and `skipped` verdicts are
 * stored: an error (a timeout, a 503) must be retried on the next run, not remembered.
 */
export interface VerdictCache {
  get(key: string): Promise<VerdictDraft | undefined>;
  set(key: string, draft: VerdictDraft): Promise<void>;
}

export function isCacheable(draft: VerdictDraft): boolean {
  return draft.status !== "error";
}

/** A cache for one process. */
export function memoryCache(): VerdictCache & { readonly size: number } {
  const entries = new Map<string, VerdictDraft>();
  return {
    get size() {
      return entries.size;
    },
    async get(key) {
      return entries.get(key);
    },
    async set(key, draft) {
      if (isCacheable(draft)) entries.set(key, draft);
    },
  };
}

const CachedLineSchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  draft: z.union([
    z.object({ status: z.literal("ok"), score: z.number().min(0).max(1) }).loose(),
    z.object({ status: z.literal("skipped"), score: z.null() }).loose(),
  ]),
});

/**
 * A cache that survives restarts: an append-only `verdicts.jsonl` in `dir`, read once on first
 * use. A torn or corrupt line (a crash mid-write) is skipped and counted, never fatal.
 */
export function fileCache(
  dir: string,
): VerdictCache & { readonly path: string; stats(): Promise<{ entries: number; corruptLines: number }> } {
  const path = join(dir, "verdicts.jsonl");
  let loaded: Promise<{ entries: Map<string, VerdictDraft>; corruptLines: number }> | undefined;
  // Lines wait here and are appended in one write per flush: hundreds of judges finishing at
  // once must not queue hundreds of file appends (or a mkdir each) behind one another.
  let queued: string[] = [];
  let flushing: Promise<void> | undefined;
  let madeDir = false;
  const flush = (): Promise<void> =>
    (flushing ??= (async () => {
      try {
        while (queued.length > 0) {
          const batch = queued.join("");
          queued = [];
          if (!madeDir) {
            await mkdir(dir, { recursive: true });
            madeDir = true;
          }
          await appendFile(path, batch);
        }
      } finally {
        flushing = undefined;
      }
    })());
  const load = () =>
    (loaded ??= (async () => {
      const entries = new Map<string, VerdictDraft>();
      let text = "";
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      const { records, issues } = readJsonLines(text, CachedLineSchema);
      for (const { value } of records) entries.set(value.key, value.draft as VerdictDraft);
      // A line can fail in several places; it is one corrupt line.
      return { entries, corruptLines: new Set(issues.map((issue) => issue.line)).size };
    })());
  return {
    path,
    async get(key) {
      return (await load()).entries.get(key);
    },
    async set(key, draft) {
      if (!isCacheable(draft)) return;
      const { entries } = await load();
      if (entries.has(key)) return;
      entries.set(key, draft);
      queued.push(toJsonLines([{ key, draft }]));
      // A flush already under way takes this line on its next round; otherwise start one.
      await (flushing ?? flush());
    },
    async stats() {
      const { entries, corruptLines } = await load();
      return { entries: entries.size, corruptLines };
    },
  };
}
