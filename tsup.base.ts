import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Options } from "tsup";

/**
 * The build every published package shares: ESM (`dist/<name>.js` + `.d.ts`) and CommonJS
 * (`dist/<name>.cjs` + `.d.cts`) for Node 20, one pair per library entry. Each entry `name` is the
 * package subpath `./<name>` (`index` is `.`), and package.json's `exports` spells exactly that —
 * `node scripts/package-exports.mjs --check` holds the two together (docs/architecture.md, Packaging).
 *
 * `bins` are entries built as ESM only and without declarations: an executable is run, never
 * imported, and may use top-level await, which CommonJS cannot express.
 *
 * @example
 * export default defineConfig(libraryBuild({ index: "src/index.ts", testing: "src/testing/server.ts" }));
 */
export function libraryBuild(
  entry: Record<string, string> = { index: "src/index.ts" },
  bins: Record<string, string> = {},
): Options {
  return {
    entry: { ...entry, ...bins },
    format: ["esm", "cjs"],
    dts: { entry },
    sourcemap: true,
    clean: true,
    target: "node20",
    // `node:` imports stay as written (tsup's default strips the prefix).
    removeNodeProtocol: false,
    esbuildOptions(options, { format }) {
      if (format !== "cjs") return;
      options.entryPoints = entry;
      // `import.meta` is empty in CommonJS; the file's own URL is what the sources ask it for.
      options.inject = [...(options.inject ?? []), CJS_IMPORT_META_URL];
      options.define = { ...options.define, "import.meta.url": "__rubricImportMetaUrl" };
      // Dynamic `import()` of an external stays `import()`, so an ESM-only dependency (node-llama-cpp)
      // loads from the CommonJS build too, instead of becoming a `require` that cannot load it.
      options.supported = { ...options.supported, "dynamic-import": true };
    },
  };
}

const CJS_IMPORT_META_URL = path.join(path.dirname(fileURLToPath(import.meta.url)), "tsup.cjs-import-meta-url.ts");
