import { defineConfig } from "vitest/config";
import SummaryLineReporter from "./vitest.summary-reporter";

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 60_000,
    reporters: ["default", new SummaryLineReporter()],
  },
});
