// Packs every published package into one folder, so the toolkit installs before (or without) the
// npm registry: `npm i <folder>/*.tgz` installs them all, each @rubric/* dependency resolved to its
// tarball in the same command. Builds first when a package has no dist/.
//
//   pnpm pack:all [folder]        (default: packed/, replaced)
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { packAll, publishedPackages, root } from "./packed.mjs";

const folder = path.resolve(process.argv[2] ?? path.join(root, "packed"));
const unbuilt = [...publishedPackages()].filter(([, dir]) => !existsSync(path.join(dir, "dist")));
if (unbuilt.length > 0) {
  console.error(`building first: ${unbuilt.map(([name]) => name).join(", ")} have no dist/`);
  execFileSync("pnpm", ["build"], { cwd: root, stdio: "inherit" });
}
rmSync(folder, { recursive: true, force: true });
const tarballs = packAll(folder);
for (const [name, file] of tarballs) console.log(`${name.padEnd(22)} ${path.relative(process.cwd(), file)}`);
const shown = path.relative(process.cwd(), folder) || ".";
console.log(`\n${tarballs.size} packages in ${shown}. Install them in your project with:\n  npm i ${shown}/*.tgz`);
