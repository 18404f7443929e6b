import type { Options } from "tsup";

/** The build every published package shares: ESM for Node 20 with type declarations. */
export function libraryBuild(entry: string[] | Record<string, string> = ["src/index.ts"]): Options {
  return { entry, format: ["esm"], dts: true, sourcemap: true, clean: true, target: "node20" };
}
