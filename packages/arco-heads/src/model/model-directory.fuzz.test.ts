import { cp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { SidecarClient } from "@rubric/sidecar";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportTinyMu, forgeExport } from "../__fixtures__/model-directory.js";
import { ModelCorruptError, ModelFormatError } from "../errors.js";
import type { ModelManifest } from "./manifest.js";
import { openOnnxVersion } from "./onnx-engine.js";

/**
 * Model directories with seeded random faults — manifest fields set to other values and types,
 * removed or added, file entries added, dropped or pointed elsewhere, files truncated, swapped or
 * removed, the manifest text cut — opened in the real onnxruntime-node. Each either opens as a
 * model that scores K numbers per step and writes ids of its vocabulary, or is refused with
 * `ModelCorruptError`/`ModelFormatError` naming the directory: never another exception, never a
 * hang. Half of the cases recompute the listed files' hashes afterwards, as a forger would, so the
 * checks behind the hash check are reached too.
 */

const TIMEOUT_MS = 600_000; // a guard for a busy 2-core machine, not a measurement
const HANG_MS = 60_000; // one case: far above an open (≈0.1 s), so only a hang reaches it

let root: string;
let source: string;
let base: ModelManifest;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "arco-model-fuzz-"));
  const client = await SidecarClient.start({ threads: 1 });
  try {
    source = await exportTinyMu(client, join(root, "mu"));
  } finally {
    await client.close();
  }
  base = JSON.parse(await readFile(join(source, "manifest.json"), "utf8")) as ModelManifest;
}, TIMEOUT_MS);
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

type Path = readonly (string | number)[];

/** Every path into `value`: its objects and arrays as well as their leaves. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== "object") return [prefix];
  const children = Object.entries(value).flatMap(([key, child]) =>
    pathsOf(child, [...prefix, Array.isArray(value) ? Number(key) : key]),
  );
  return prefix.length === 0 ? children : [prefix, ...children];
}

const FILES = ["score.onnx", "prefill.onnx", "decode.onnx", "tokenizer.json", "mu.pt"];
const NAMES = [...FILES, "missing.onnx", "../escape.json", "/etc/passwd", "manifest.json", "a\\b", "", "."];

type Mutation =
  | { readonly kind: "set"; readonly path: Path; readonly value: unknown }
  | { readonly kind: "delete"; readonly path: Path }
  | { readonly kind: "add-key"; readonly path: Path; readonly key: string; readonly value: unknown }
  | { readonly kind: "entry"; readonly file: string; readonly entry: unknown }
  | { readonly kind: "truncate"; readonly file: string; readonly bytes: number }
  | { readonly kind: "swap"; readonly from: string; readonly to: string }
  | { readonly kind: "remove"; readonly file: string };

const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.integer({ min: -2, max: 70 }),
  fc.constantFrom(0, 1, 2, 3, 4, 5, 63, 64, 65, 0.5, -1, 1e9, 2 ** 31, 2 ** 53, 1e308),
  fc.constantFrom(...NAMES, "criteria", "prompt+criteria", "byte-bpe", "rubric-mu", "logits", "scores", "input_ids"),
);

const mutation = (paths: Path[]): fc.Arbitrary<Mutation> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("set" as const), path: fc.constantFrom(...paths), value }) },
    {
      // Plausible numbers for the fields the graphs must agree with: these pass the schema and reach onnxruntime.
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("set" as const),
        path: fc.constantFrom<Path>(
          ["k"],
          ["model", "vocabularySize"],
          ["model", "layers"],
          ["model", "heads"],
          ["model", "headWidth"],
          ["maxLengths", "sequence"],
          ["maxLengths", "criteria"],
          ["exportVersion"],
          ["model", "parameters"],
        ),
        value: fc.integer({ min: 1, max: 400 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), path: fc.constantFrom(...paths) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("add-key" as const),
        path: fc.constantFrom<Path>([], ["model"], ["maxLengths"], ["graphs", "score"], ["files"]),
        key: fc.constantFrom("extra", "k", "__proto__", "constructor", ...NAMES),
        value,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("entry" as const),
        file: fc.constantFrom(...NAMES),
        entry: fc.oneof(value, fc.record({ sha256: fc.constantFrom("0".repeat(64), "x"), bytes: value })),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("truncate" as const),
        file: fc.constantFrom(...FILES),
        bytes: fc.nat({ max: 4000 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("swap" as const),
        from: fc.constantFrom(...FILES),
        to: fc.constantFrom(...FILES),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), file: fc.constantFrom(...FILES) }) },
  );

/** Sets, deletes or adds at `path` inside `target`, creating nothing: a path that no longer exists is skipped. */
function edit(
  target: unknown,
  path: Path,
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
) {
  let parent = target as Record<string | number, unknown> | undefined;
  for (const key of path.slice(0, -1)) {
    const next = parent?.[key];
    if (next === null || typeof next !== "object") return;
    parent = next as Record<string | number, unknown>;
  }
  if (parent !== undefined && path.length > 0) change(parent, path[path.length - 1]!);
}

async function apply(directory: string, manifest: ModelManifest, mutations: readonly Mutation[]) {
  for (const m of mutations) {
    switch (m.kind) {
      case "set":
        edit(manifest, m.path, (parent, key) => {
          parent[key] = structuredClone(m.value);
        });
        break;
      case "delete":
        edit(manifest, m.path, (parent, key) => {
          if (Array.isArray(parent)) parent.splice(Number(key), 1);
          else delete parent[key];
        });
        break;
      case "add-key":
        edit(manifest, [...m.path, m.key], (parent, key) => {
          Object.defineProperty(parent, key, {
            value: structuredClone(m.value),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        });
        break;
      case "entry":
        Object.defineProperty(manifest.files, m.file, {
          value: structuredClone(m.entry),
          enumerable: true,
          configurable: true,
          writable: true,
        });
        break;
      case "truncate":
        await truncate(join(directory, m.file), m.bytes).catch(() => undefined);
        break;
      case "swap":
        await cp(join(directory, m.from), join(directory, m.to)).catch(() => undefined);
        break;
      case "remove":
        await rm(join(directory, m.file), { force: true });
        break;
    }
  }
}

const deadline = <T>(promise: Promise<T>, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: no answer in ${HANG_MS} ms`)), HANG_MS).unref(),
    ),
  ]);

let cases = 0;
describe("fuzz: model directories and manifests", () => {
  it(
    "a model that runs, or ModelCorruptError/ModelFormatError naming the directory; never another error, never a hang",
    async () => {
      const paths = pathsOf(base);
      await fc.assert(
        fc.asyncProperty(
          fc.array(mutation(paths), { minLength: 1, maxLength: 3 }),
          fc.boolean(),
          fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
          async (mutations, rehash, cut) => {
            const target = join(root, `case-${cases++}`);
            const directory = rehash
              ? await forgeExport(source, target, (dir, manifest) => apply(dir, manifest, mutations))
              : await (async () => {
                  await cp(source, target, { recursive: true });
                  const manifest = structuredClone(base);
                  await apply(target, manifest, mutations);
                  await writeFile(join(target, "manifest.json"), JSON.stringify(manifest, null, 2));
                  return target;
                })();
            if (cut !== undefined) {
              // The manifest text cut short, as a half-written copy leaves it.
              const text = await readFile(join(directory, "manifest.json"), "utf8");
              await writeFile(join(directory, "manifest.json"), text.slice(0, cut % (text.length + 1)));
            }
            try {
              const outcome = await deadline(
                openOnnxVersion(directory, { threads: 1 }).then(
                  (engine) => ({ engine }),
                  (error: unknown) => ({ error }),
                ),
                directory,
              );
              if ("error" in outcome) {
                const { error } = outcome;
                expect(
                  error instanceof ModelCorruptError || error instanceof ModelFormatError,
                  `${JSON.stringify(mutations)}: ${String((error as Error)?.stack ?? error)}`,
                ).toBe(true);
                expect((error as ModelCorruptError).directory).toBe(directory);
                return;
              }
              // Opened: it is a model whose numbers are where its manifest says.
              const { engine } = outcome;
              try {
                const { manifest } = engine;
                const [scores] = await deadline(engine.score([{ prompt: [1, 5, 6], criteria: [7, 8] }]), "score");
                expect(scores).toHaveLength(manifest.k);
                for (const x of scores!) expect(Number.isFinite(x)).toBe(true);
                const { ids } = await deadline(engine.generate([[1, 5, 6]], 2, { temperature: 0 }), "generate");
                for (const id of ids[0]!) expect(id).toBeLessThan(manifest.model.vocabularySize);
              } finally {
                await engine.close();
              }
            } finally {
              await rm(directory, { recursive: true, force: true });
            }
          },
        ),
        { seed: 20261204, numRuns: 150 },
      );
    },
    TIMEOUT_MS,
  );
});
