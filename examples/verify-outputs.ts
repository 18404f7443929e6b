/**
 * Verifiers end to end on a machine with no API keys: rule checks, a sandboxed JavaScript rule,
 * and an LLM judge on the shared local GGUF model (a 260K-parameter TinyStories model: its
 * judgements are meaningless, the plumbing — grammar-constrained verdicts, caching — is real).
 *
 *   pnpm --filter @rubric/examples verify-outputs
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, fileCache, llmJudge, scoreOutputs } from "@rubric/verifiers";
import { llamaCpp } from "@rubric/providers";

const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));

const rubric = parseFlatRubric({
  id: "q3-summary",
  criteria: [
    {
      id: "revenue",
      text: "Mentions revenue and margin",
      weight: 2,
      verifier: { kind: "includes", terms: ["revenue", "margin"] },
    },
    { id: "cites", text: "Cites at least one source", weight: 1, verifier: { kind: "citations", min: 1 } },
    { id: "short", text: "At most 40 words", weight: 1, verifier: { kind: "length", unit: "words", max: 40 } },
    {
      id: "percent",
      text: "States a growth percentage",
      weight: 1,
      verifier: { kind: "js", code: "/\\d+(\\.\\d+)?%/.test(output)" },
    },
    {
      id: "clear",
      text: "Is clear to a non-specialist",
      weight: 1,
      verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } },
    },
  ],
});

const outputs = [
  { id: "good", input: "Summarise Q3", output: "Revenue rose 4.2% and margin held at 31% [1]." },
  {
    id: "vague",
    input: "Summarise Q3",
    output: "Things went fine this quarter, more or less, as expected by most people involved.",
  },
];

const model = llamaCpp({ modelPath: join(shared, "models/stories260K.gguf") });
const cache = fileCache(mkdtempSync(join(tmpdir(), "rubric-example-")));
try {
  const registry = createVerifierRegistry({ judge: llmJudge(model), python: false });
  for (const run of ["first run", "cached rerun"]) {
    const started = performance.now();
    const results = await scoreOutputs(rubric, outputs, { registry, cache });
    console.log(`${run} (${(performance.now() - started).toFixed(0)} ms):`);
    for (const r of results) {
      console.log(`  ${r.id.padEnd(6)} normalized ${r.score?.normalized.toFixed(3)}  errors ${r.errors}`);
      for (const v of r.verdicts)
        console.log(
          `    ${v.criterionId.padEnd(8)} ${v.status} ${v.score?.toFixed(3) ?? "—"}  ${v.verifier}  ${v.rationale ?? v.error ?? ""}`,
        );
    }
  }
} finally {
  await model.dispose();
}
