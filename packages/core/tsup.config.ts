import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base";

export default defineConfig(
  libraryBuild({
    index: "src/index.ts",
    effect: "src/effect/index.ts",
    files: "src/files/index.ts",
    runs: "src/runs/index.ts",
  }),
);
