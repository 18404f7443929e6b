import { defineConfig } from "vitest/config";
import SummaryLineReporter from "./vitest.summary-reporter";

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 60_000,
    // Two files at once on the 2-core CI machine (vitest's default is cores − 1 = 1): many files
    // wait on child processes (the sidecar, the built CLI, bubblewrap, chromium), and the whole
    // suite took 905 s with two workers against 1,284 s with one, measured back to back here.
    maxWorkers: 2,
    reporters: ["default", new SummaryLineReporter()],
  },
});
