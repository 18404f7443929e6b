// One convention for every published package's entry points, derived from its tsup.config.ts
// (tsup.base.ts `libraryBuild`): each library entry `name` is the subpath `./<name>` (`index` is `.`)
// with an ESM and a CommonJS door, each with its own declarations; a bin entry is ESM only.
//
//   node scripts/package-exports.mjs --check   fails naming each package.json field that differs,
//                                              and each door (src/index.ts) whose groups its README
//                                              does not list, then prints how many names each door exports
//   node scripts/package-exports.mjs --write   rewrites those fields (exports, main, module, types)
//
// Exports that do not point into dist/ (data files such as `./schemas/*.json`) are kept as written.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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

/** A door's group line: `// <group>: <what it holds>`, the group one lowercase word (hyphens allowed). */
const GROUP_LINE = /^\/\/ ([a-z][a-z0-9-]*): \S/;

/**
 * A door's exports by group: each `export` statement belongs to the nearest `// <group>: …` line
 * above it. Statements above the first group line are `ungrouped`, as `{ line, names }`.
 */
export function doorGroups(source) {
  const groups = new Map();
  const ungrouped = [];
  const lines = source.split("\n");
  let group;
  for (let i = 0; i < lines.length; i++) {
    const found = GROUP_LINE.exec(lines[i]);
    if (found) {
      group = found[1];
      if (!groups.has(group)) groups.set(group, { values: [], types: [] });
      continue;
    }
    if (!/^export\b/.test(lines[i])) continue;
    const start = i;
    // An `export { … } from` list runs to the line that closes it.
    if (/^export\s+(type\s+)?\{/.test(lines[i])) while (!lines[i].includes("}") && i < lines.length - 1) i++;
    const names = exportedNames(lines.slice(start, i + 1).join("\n"));
    if (group === undefined) ungrouped.push({ line: start + 1, names: [...names.values, ...names.types] });
    else {
      groups.get(group).values.push(...names.values);
      groups.get(group).types.push(...names.types);
    }
  }
  return { groups, ungrouped };
}

/** The first cells of the table under a README's `## What the door holds`, or undefined without that section. */
export function readmeDoorRows(readme) {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => /^## What the door holds\s*$/.test(l));
  if (start < 0) return undefined;
  const rows = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,2} /.test(line)) break;
    const cell = /^\|([^|]*)\|/.exec(line)?.[1].trim().replaceAll("`", "");
    if (cell === undefined || cell === "group" || /^:?-+:?$/.test(cell)) continue;
    rows.push(cell);
  }
  return rows;
}

/** How a door and its README disagree: an export under no group, a group the README's table lacks, a row for no group. */
export function doorProblems(name, dir) {
  const relative = (file) => path.relative(process.cwd(), path.join(dir, file));
  const { groups, ungrouped } = doorGroups(readFileSync(path.join(dir, "src", "index.ts"), "utf8"));
  const out = ungrouped.map(
    (u) =>
      `${relative("src/index.ts")}:${u.line} (${name}): ${u.names.join(", ")} under no "// <group>: <what it holds>" line`,
  );
  const readme = path.join(dir, "README.md");
  const rows = existsSync(readme) ? readmeDoorRows(readFileSync(readme, "utf8")) : undefined;
  if (rows === undefined) {
    out.push(
      `${relative("README.md")} (${name}): no "## What the door holds" section, a table | group | names | with a row for each group: ${[...groups.keys()].join(", ")}`,
    );
    return out;
  }
  for (const group of groups.keys()) {
    if (!rows.includes(group)) {
      out.push(
        `${relative("README.md")} (${name}): the door's table has no row for the group "${group}" of src/index.ts`,
      );
    }
  }
  for (const row of rows) {
    if (!groups.has(row)) {
      out.push(
        `${relative("README.md")} (${name}): the door's table has a row "${row}", a group src/index.ts does not have`,
      );
    }
  }
  return out;
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
    const doors = [...publishedPackages()].flatMap(([name, dir]) => doorProblems(name, dir));
    if (doors.length > 0) {
      console.error(
        `package doors and their READMEs disagree (each export under a "// <group>: …" line of src/index.ts, each group a row of the README's "## What the door holds"):\n${doors.join("\n")}`,
      );
      process.exit(1);
    }
    const rows = [...publishedPackages()].map(([name, dir]) => {
      const { values, types } = exportedNames(readFileSync(path.join(dir, "src", "index.ts"), "utf8"));
      return `${String(values.length + types.length).padStart(5)} ${String(values.length).padStart(7)} ${String(types.length).padStart(6)}  ${name}`;
    });
    console.log(`names each door exports (src/index.ts):\n total  values  types  package\n${rows.join("\n")}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
