import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base";

// `main` is the `rubric` executable (package.json `bin`): ESM only, it awaits at top level.
export default defineConfig(libraryBuild({ index: "src/index.ts" }, { main: "src/main.ts" }));
