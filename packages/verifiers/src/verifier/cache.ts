import { type BigIntStats, accessSync, constants, lstatSync, statSync } from "node:fs";
import { appendFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { jsonLinesReader, toJsonLines } from "@rubric/core";
import { boundedLines, readInputChunks } from "@rubric/core/files";
import { z } from "zod";
import { VerificationError } from "../errors.js";
import type { VerdictDraft } from "./verifier.js";

/** A verdict cache directory that cannot serve: a file where the directory should be, no write permission. */
export class VerdictCacheError extends VerificationError {
  override readonly name = "VerdictCacheError";
  readonly code = "verification.cache";
  constructor(
    readonly dir: string,
    reason: string,
  ) {
    super(`verdict cache ${dir}: ${reason}`);
  }
}

/**
 * Refuses, when the cache is made (before any verdict is computed), a directory that could not
 * take the cache file: a verdict computed and then lost to "cannot write the cache" would be
 * paid for twice.
 */
function checkCacheDir(dir: string): void {
  let probe = dir;
  // The nearest part of the path that exists must be a directory we may write in.
  for (;;) {
    let stat: BigIntStats | undefined;
    try {
      // A bigint stat: a number stat of a FIFO confuses Node 20's module resolution (see @rubric/core/files).
      stat = statSync(probe, { bigint: true });
    } catch {
      const parent = dirname(probe);
      if (parent === probe) return;
      probe = parent;
      continue;
    }
    if (!stat.isDirectory())
      throw new VerdictCacheError(
        dir,
        probe === dir ? "is a file, not a directory" : `${probe} is a file, not a directory`,
      );
    try {
      accessSync(probe, constants.W_OK | constants.X_OK);
    } catch {
      throw new VerdictCacheError(dir, `${probe === dir ? "the directory" : probe} is not writable`);
    }
    return;
  }
}

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
 * use. A torn or corrupt line (a crash mid-write) is skipped and counted, never fatal; the next
 * write starts on a line of its own, so it is not glued onto the torn one and lost with it. A
 * `dir` that could not hold the file fails here, with `VerdictCacheError`.
 */
export function fileCache(
  dir: string,
): VerdictCache & { readonly path: string; stats(): Promise<{ entries: number; corruptLines: number }> } {
  checkCacheDir(dir);
  const path = join(dir, "verdicts.jsonl");
  // Set on load when the file does not end in a newline: a torn last line.
  let tornTail = false;
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
          const batch = (tornTail ? "\n" : "") + queued.join("");
          queued = [];
          if (!madeDir) {
            await mkdir(dir, { recursive: true });
            madeDir = true;
          }
          await appendFile(path, batch);
          tornTail = false;
        }
      } finally {
        flushing = undefined;
      }
    })());
  const load = () =>
    (loaded ??= (async () => {
      const entries = new Map<string, VerdictDraft>();
      const reader = jsonLinesReader(CachedLineSchema);
      if (lstatSync(path, { throwIfNoEntry: false, bigint: true }) !== undefined) {
        // Line by line through core's reader: the cache only grows (one string could not hold it
        // past ~512 MiB), and a FIFO or device at its name is refused instead of hanging the run.
        let lastByte: number | undefined;
        const chunks = async function* () {
          for await (const chunk of readInputChunks(path)) {
            lastByte = chunk.at(-1);
            yield chunk;
          }
        };
        for await (const line of boundedLines(chunks(), path)) reader.push(line);
        tornTail = lastByte !== undefined && lastByte !== 0x0a;
      }
      const { records, issues } = reader.result();
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
