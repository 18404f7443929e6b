import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base";

// The Python sandbox's harness runs as a file beside the bundle (dist/harness.py).
export default defineConfig({ ...libraryBuild(), onSuccess: "cp src/sandbox/python/harness.py dist/harness.py" });
