// Packs the workspace's published packages into tarballs and installs chosen ones into a scratch
// project outside the workspace with npm, the way a downstream developer meets them. Shared by the
// consumer test (scripts/consumer-test.mjs) and the install-size benchmark (scripts/bench-install.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Every non-private package under packages/, by name → directory. */
export function publishedPackages() {
  const dirs = readdirSync(path.join(root, "packages"));
  const out = new Map();
  for (const dir of dirs) {
    const file = path.join(root, "packages", dir, "package.json");
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    if (manifest.private !== true) out.set(manifest.name, path.join(root, "packages", dir));
  }
  return out;
}

/** `pnpm pack`s every published package (built beforehand) into `dest`; name → tarball path. */
export function packAll(dest) {
  mkdirSync(dest, { recursive: true });
  const tarballs = new Map();
  for (const [name, dir] of publishedPackages()) {
    const out = execFileSync("pnpm", ["pack", "--pack-destination", dest], { cwd: dir, encoding: "utf8" });
    const file = out
      .trim()
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.endsWith(".tgz"))
      .pop();
    if (file === undefined) throw new Error(`pnpm pack printed no tarball for ${name}:\n${out}`);
    tarballs.set(name, path.isAbsolute(file) ? file : path.join(dest, file));
  }
  return tarballs;
}

/**
 * A scratch project in the system temp dir that depends on `wanted` (package names) from the
 * tarballs. With `extra.overrides` (the default) every @rubric/* dependency resolves to its
 * tarball through npm `overrides`, never the registry; without, the project is what
 * `npm i <folder>/<a>.tgz <folder>/<b>.tgz` writes, which is how a user installs before
 * publication (each package's `@rubric/*` ranges must then be met by the tarballs named).
 */
export function scratchProject(wanted, tarballs, extra = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "rubric-consumer-"));
  const file = (name) => `file:${tarballs.get(name)}`;
  const overrides = Object.fromEntries([...tarballs.keys()].map((name) => [name, file(name)]));
  const manifest = {
    name: "rubric-consumer",
    private: true,
    type: extra.type ?? "module",
    dependencies: { ...Object.fromEntries(wanted.map((name) => [name, file(name)])), ...extra.dependencies },
    ...(extra.overrides === false ? {} : { overrides }),
  };
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // onnxruntime-node's install script downloads CUDA libraries from outside the registry (TOOLCHAIN.md).
  writeFileSync(path.join(dir, ".npmrc"), "onnxruntime-node-install=skip\nfund=false\naudit=false\n");
  return dir;
}

/** `npm install` in `dir`; returns the wall time in ms. */
export function npmInstall(dir) {
  const start = performance.now();
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
  return performance.now() - start;
}

/** Bytes on disk under `dir` (files only, symlinks not followed) and the number of packages in it. */
export function treeSize(dir) {
  let bytes = 0;
  let packages = 0;
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== ".bin" && path.basename(d) === "node_modules" && !entry.name.startsWith("@")) packages++;
        if (entry.name.startsWith("@") && path.basename(d) === "node_modules") packages += readdirSync(p).length;
        walk(p);
      } else if (entry.isFile()) bytes += statSync(p).size;
    }
  };
  walk(dir);
  return { bytes, packages };
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}
