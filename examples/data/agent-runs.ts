/**
 * Writes agent-runs.jsonl: a simulated coding agent's logged runs, in the trajectories format of
 * `rubric mu train` (`{id, task, steps: [{action, observation}], outcome}`). Every run takes five
 * steps; it succeeds when the agent edits the module the failing test names (the tests then
 * pass), and fails when it edits another module or looks elsewhere instead of editing. Every
 * fourth run also carries a reviewer's annotation (K = 3 criteria and scores per step, written
 * here by rule), the teacher `mu train` warms μ up on. Seeded: `tsx data/agent-runs.ts [out]`
 * from examples/ writes the same file every time (default: data/agent-runs.jsonl beside it).
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRng } from "@rubric/core";

const MODULES = ["parser", "cache", "router", "config", "billing", "auth", "export", "search"];
const FUNCTIONS = ["normalize", "lookup", "resolve", "merge", "total", "refresh", "render", "rank"];
const rng = createRng(20261205);
const pick = <T>(items: readonly T[]): T => items[rng.int(items.length)]!;

type Kind = "fixed" | "wrong module" | "no edit";
const KINDS: readonly Kind[] = ["fixed", "wrong module", "fixed", "no edit"];

const lines = Array.from({ length: 40 }, (_, i) => {
  const module = pick(MODULES);
  const fn = pick(FUNCTIONS);
  const expected = 2 + rng.int(9);
  const kind = KINDS[rng.int(KINDS.length)]!;
  const failure = `FAILED tests/test_${module}.py::test_${fn} - AssertionError: expected ${expected}, got ${expected - 1}`;
  const edited = kind === "wrong module" ? pick(MODULES.filter((m) => m !== module)) : module;
  const third =
    kind === "no edit"
      ? { action: `search_docs(${fn})`, observation: "no results" }
      : { action: `edit(src/${edited}.py, ${fn})`, observation: `src/${edited}.py: 1 line changed` };
  const steps = [
    { action: "run_tests()", observation: `${failure}\n13 passed, 1 failed` },
    { action: `open(src/${edited}.py)`, observation: `def ${fn}(items):\n    return len(items) - 1` },
    third,
    { action: "run_tests()", observation: kind === "fixed" ? "14 passed" : `${failure}\n13 passed, 1 failed` },
    { action: "finish()", observation: "submitted" },
  ];
  const annotate = i % 4 === 0;
  const good = kind === "fixed";
  const review = [
    {
      criteria: ["Runs the tests before changing code", "Reads which test fails", "Spends one step"],
      scores: [0.3, 0.3, 0.1],
    },
    {
      criteria: ["Opens the module the failing test names", "Reads the failing function", "Avoids unrelated files"],
      scores: edited === module ? [0.5, 0.4, 0.4] : [-0.6, 0.1, -0.5],
    },
    {
      criteria: ["Changes the failing function", "Edits the module under test", "Makes a minimal change"],
      scores: good ? [0.8, 0.8, 0.5] : [-0.7, -0.6, -0.2],
    },
    {
      criteria: ["Checks the change with the tests", "Reads the result", "Confirms no other test broke"],
      scores: good ? [0.5, 0.4, 0.4] : [0.2, -0.3, -0.3],
    },
    {
      criteria: ["Finishes only once the tests pass", "Submits a working fix", "Stops within budget"],
      scores: good ? [0.8, 0.8, 0.3] : [-0.8, -0.8, 0],
    },
  ];
  return JSON.stringify({
    id: `run-${String(i + 1).padStart(2, "0")}`,
    task: `The test test_${fn} in tests/test_${module}.py fails. Make it pass without breaking the others.`,
    steps: annotate ? steps.map((step, t) => ({ ...step, ...review[t] })) : steps,
    outcome: good ? 1 : 0,
  });
});
writeFileSync(process.argv[2] ?? fileURLToPath(new URL("agent-runs.jsonl", import.meta.url)), `${lines.join("\n")}\n`);
