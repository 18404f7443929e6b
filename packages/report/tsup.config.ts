import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base";

// Two builds: the library (Node, ESM + CJS), and the page's script — @rubric/core's scoring and
// the page's own code in one browser bundle, inlined into every report (no network at view time).
// The library's clean keeps page.js, which the other build writes beside it.
export default defineConfig([
  { ...libraryBuild(), clean: ["!page.js"] },
  {
    entry: { page: "src/page/app.ts" },
    format: ["iife"],
    platform: "browser",
    target: "es2020",
    minify: true,
    noExternal: [/.*/],
    outDir: "dist",
    clean: false,
    dts: false,
    sourcemap: false,
    outExtension: () => ({ js: ".js" }),
  },
]);
