// What a user pays to install and load one package: packs the workspace (built beforehand),
// installs the named package alone from its tarball into a scratch project with npm, and reports
// node_modules' size, the package count, and the cold `import()` time (median of fresh processes).
//
//   node scripts/bench-install.mjs @rubric/verifiers [@rubric/providers …] [--runs 9] [--baseline DIR]
//
// `--baseline DIR` also measures the same packages from tarballs packed earlier into DIR (e.g. from
// an older commit with `node scripts/bench-install.mjs --pack-only DIR`), in the same run.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
// The workspace is built before this runs (it packs the built packages), so core's own median is there to use.
import { median } from "../packages/core/dist/index.js";
import { npmInstall, packAll, removeDir, scratchProject, treeSize } from "./packed.mjs";

const args = process.argv.slice(2).filter((a) => a !== "--");
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 9;
const packOnlyAt = args.indexOf("--pack-only");
if (packOnlyAt >= 0) {
  packAll(path.resolve(args[packOnlyAt + 1]));
  process.exit(0);
}
const baselineAt = args.indexOf("--baseline");
const baselineDir = baselineAt >= 0 ? path.resolve(args.splice(baselineAt, 2)[1]) : undefined;
if (args.length === 0) throw new Error("name at least one package, e.g. @rubric/verifiers");

/** Tarballs packed earlier: `@rubric/x` ← `rubric-x-<version>.tgz`. */
function savedTarballs(dir) {
  const out = new Map();
  for (const file of readdirSync(dir)) {
    const match = /^rubric-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(file);
    if (match) out.set(`@rubric/${match[1]}`, path.join(dir, file));
  }
  return out;
}

const packDir = mkdtempSync(path.join(tmpdir(), "rubric-pack-"));
const sets = [
  ...(baselineDir === undefined
    ? []
    : [{ label: `baseline (${path.basename(baselineDir)})`, tarballs: savedTarballs(baselineDir) }]),
  { label: "this tree", tarballs: packAll(packDir) },
];
const rows = [];
for (const { label, tarballs } of sets)
  for (const name of args) {
    if (!tarballs.has(name)) continue; // a package the baseline did not have yet
    const dir = scratchProject([name], tarballs);
    const installMs = npmInstall(dir);
    const { bytes, packages } = treeSize(path.join(dir, "node_modules"));
    const probe = `const t = performance.now(); await import(${JSON.stringify(name)}); console.log(performance.now() - t);`;
    const times = [];
    for (let i = 0; i < runs; i++) {
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: dir, encoding: "utf8" });
      times.push(Number(out.trim()));
    }
    rows.push({ label, name, mb: bytes / 1e6, packages, installS: installMs / 1000, importMs: median(times) });
    removeDir(dir);
  }
removeDir(packDir);

console.log(
  `Measured ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, npm ${execFileSync("npm", ["--version"], { encoding: "utf8" }).trim()}; cold import: median of ${runs} fresh processes.`,
);
console.log("");
console.log("| tree | package installed alone | node_modules | packages | npm install | cold `import()` |");
console.log("| --- | --- | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.name} | ${r.mb.toFixed(1)} MB | ${r.packages} | ${r.installS.toFixed(1)} s | ${r.importMs.toFixed(0)} ms |`,
  );
}
