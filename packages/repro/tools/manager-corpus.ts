/**
 * The text the sidecar manager's tokenizer is learnt from (`managerCorpus`: each first-stakeholder
 * teacher dialogue's rubric prompt and rubric turn), one JSON string per line. With no pretrained
 * model at hand (the GPU machine here reaches no network), python/rubric-trainer/tests/hf_model.py
 * learns a byte-level BPE from it and writes a small random transformers model, which
 * `rubric repro arcane --manager sidecar --model <dir>` then trains:
 *
 *   pnpm --filter @rubric/repro exec tsx tools/manager-corpus.ts --out corpus.txt [--quick]
 *   python3 python/rubric-trainer/tests/hf_model.py --corpus corpus.txt --out /tmp/manager-model
 *
 * Training tasks only: nothing here reads the eval tasks.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { managerCorpus, sidecarManagerConfig, sidecarManagerData } from "@rubric/repro";

const { values: args } = parseArgs({
  options: { out: { type: "string" }, quick: { type: "boolean", default: false }, gdpval: { type: "string" } },
});
if (args.out === undefined) throw new Error("--out <file> is required");
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const config = sidecarManagerConfig({ quick: args.quick, evalTasks: 0, teacherStakeholders: 1 });
const { train, teacher } = await sidecarManagerData(args.gdpval ?? `${shared}/data/gdpval`, config);
const texts = managerCorpus(train, teacher);
writeFileSync(args.out, texts.map((t) => `${JSON.stringify(t)}\n`).join(""));
console.log(`${texts.length} texts from ${train.length} training tasks → ${args.out}`);
