import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest test files the run's end names. */
const SLOWEST = 10;

/**
 * Ends the run with the ten slowest test files (so a file that grows past a minute is seen the
 * day it does, and made cheaper) and one plain line, `N passed, N failed, N skipped`, without
 * colours, so that CI logs can be read by tools that do not know vitest's own summary.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but is still a failure.
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++;
    }
    const slowest = testModules
      .map((module) => ({ file: module.relativeModuleId, ms: module.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    if (slowest.length > 0) {
      process.stdout.write(`\nslowest test files (of ${testModules.length}):\n`);
      for (const { file, ms } of slowest) process.stdout.write(`${(ms / 1000).toFixed(1).padStart(8)} s  ${file}\n`);
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
