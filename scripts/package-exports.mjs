// One convention for every published package's entry points, derived from its tsup.config.ts
// (tsup.base.ts `libraryBuild`): each library entry `name` is the subpath `./<name>` (`index` is `.`)
// with an ESM and a CommonJS door, each with its own declarations; a bin entry is ESM only.
//
//   node scripts/package-exports.mjs --check   fails naming each package.json field that differs,
//                                              then prints how many names each package's door exports
//   node scripts/package-exports.mjs --write   rewrites those fields (exports, main, module, types)
//
// Exports that do not point into dist/ (data files such as `./schemas/*.json`) are kept as written.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { tsImport } from "tsx/esm/api";
import { publishedPackages } from "./packed.mjs";

/** The `exports` condition object of one library entry. */
export function entryExport(name) {
  return {
    import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
    require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
  };
}

/** The package.json fields the convention owns, for a package whose build has these entries. */
export function conventionFields(manifest, libraryEntries) {
  if (!libraryEntries.includes("index")) throw new Error(`${manifest.name}: tsup.config.ts has no "index" entry`);
  const exports = {};
  for (const name of ["index", ...libraryEntries.filter((n) => n !== "index")]) {
    exports[name === "index" ? "." : `./${name}`] = entryExport(name);
  }
  for (const [key, target] of Object.entries(manifest.exports ?? {})) {
    if (key === "./package.json" || key in exports) continue;
    if (JSON.stringify(target).includes("./dist/")) continue; // a build output the convention no longer names
    exports[key] = target;
  }
  exports["./package.json"] = "./package.json";
  // `main`/`types` serve resolvers that predate `exports` (CommonJS, moduleResolution node10).
  return { exports, main: "./dist/index.cjs", module: "./dist/index.js", types: "./dist/index.d.cts" };
}

/** Library and bin entry names of a package's tsup.config.ts. */
export async function buildEntries(dir) {
  const config = (await tsImport(pathToFileURL(path.join(dir, "tsup.config.ts")).href, import.meta.url)).default;
  const found = config.default ?? config;
  // A package may add builds of assets beside its library (the report page's browser script): the
  // library is the one config with declarations; the others name no package entry.
  const options = Array.isArray(found) ? found.filter((o) => o?.dts?.entry).at(0) : found;
  if (typeof options !== "object" || Array.isArray(options) || typeof options.entry !== "object") {
    throw new Error(`${dir}/tsup.config.ts: expected one libraryBuild(...) config`);
  }
  const library = Object.keys(options.dts?.entry ?? {});
  const bins = Object.keys(options.entry).filter((name) => !library.includes(name));
  return { library, bins };
}

/** The differences between a package.json and the convention, as readable lines. */
export function differences(manifest, fields, bins) {
  const out = [];
  for (const [field, want] of Object.entries(fields)) {
    if (!isDeepStrictEqual(manifest[field], want)) {
      out.push(`"${field}" is ${JSON.stringify(manifest[field])}, the convention wants ${JSON.stringify(want)}`);
    }
  }
  const binTargets = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
  for (const target of binTargets) {
    if (!bins.some((name) => target === `./dist/${name}.js`)) {
      out.push(`"bin" ${target} is not a bin entry of tsup.config.ts (./dist/<bin entry>.js)`);
    }
  }
  if (!manifest.files?.includes("dist")) out.push(`"files" does not include "dist"`);
  return out;
}

/**
 * The names a door (`src/index.ts`) exports, values and types apart: every `export { … } from`,
 * `export type { … } from` and declared export. A door should hold what a user or a sibling
 * package needs, nothing only tests use; the count makes a widening door visible in review.
 */
export function exportedNames(source) {
  const values = new Set();
  const types = new Set();
  for (const [, typeOnly, list] of source.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of list.split(",")) {
      const entry = raw.replace(/\/\/.*$/gm, "").trim();
      if (entry === "") continue;
      const isType = typeOnly !== undefined || entry.startsWith("type ");
      const name = entry
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .pop()
        .trim();
      (isType ? types : values).add(name);
    }
  }
  for (const [, kind, name] of source.matchAll(
    /export\s+(?:declare\s+)?(const|let|function|class|type|interface|enum)\s+(\w+)/g,
  )) {
    (kind === "type" || kind === "interface" ? types : values).add(name);
  }
  return { values: [...values], types: [...types] };
}

/** JSON with non-ASCII characters escaped, as the package.json files are written. */
function asciiJson(value) {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

async function main() {
  const mode = process.argv[2];
  if (mode !== "--check" && mode !== "--write")
    throw new Error("usage: node scripts/package-exports.mjs --check | --write");
  const failures = [];
  for (const [name, dir] of publishedPackages()) {
    const file = path.join(dir, "package.json");
    const manifest = JSON.parse(readFileSync(file, "utf8"));
    const { library, bins } = await buildEntries(dir);
    const fields = conventionFields(manifest, library);
    const diff = differences(manifest, fields, bins);
    if (diff.length === 0) continue;
    if (mode === "--write") {
      // Keeps the key order of the manifest; a field it lacked goes after "main".
      const next = {};
      for (const [key, value] of Object.entries(manifest)) {
        next[key] = key in fields ? fields[key] : value;
        if (key === "main") for (const [k, v] of Object.entries(fields)) if (!(k in manifest)) next[k] = v;
      }
      writeFileSync(file, `${asciiJson(next)}\n`);
      const left = differences(next, fields, bins);
      if (left.length > 0) failures.push(...left.map((d) => `${path.relative(process.cwd(), file)}: ${d}`));
    } else {
      failures.push(...diff.map((d) => `${path.relative(process.cwd(), file)} (${name}): ${d}`));
    }
  }
  if (failures.length > 0) {
    console.error(
      `package entry points break the convention of docs/architecture.md (Packaging):\n${failures.join("\n")}`,
    );
    if (mode === "--check") console.error("fix with: node scripts/package-exports.mjs --write");
    process.exit(1);
  }
  if (mode === "--check") {
    const rows = [...publishedPackages()].map(([name, dir]) => {
      const { values, types } = exportedNames(readFileSync(path.join(dir, "src", "index.ts"), "utf8"));
      return `${String(values.length + types.length).padStart(5)} ${String(values.length).padStart(7)} ${String(types.length).padStart(6)}  ${name}`;
    });
    console.log(`names each door exports (src/index.ts):\n total  values  types  package\n${rows.join("\n")}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
