/**
 * μ trained whole against μ trained through LoRA (ARCO's r 8, α 32 on q and v), in the sidecar on
 * the CPU: the time of one `mu.step` (ARCO's decomposition loss + KL to μ_ref), of scoring, and of
 * an export (LoRA: the merged weights), and of the version a sidecar-served μ saves instead
 * (`SidecarMuModel.save`: the checkpoint and its fingerprint), printed as a Markdown section.
 *
 *   pnpm --filter @rubric/rlxar run bench:mu-lora            (after `pnpm build`)
 *
 * The workload is bench:mu's: steps of ARCO's QA agent shape from real HotpotQA training
 * questions (bench/hotpot-steps.ts), μ of the default `rubric mu init` shape, its tokenizer learnt
 * from other questions' steps; 16 trajectories of 4 steps an update (64 steps), each step with
 * teacher-like criteria. Medians over repeated calls after one warm-up, in one process.
 */
import { cpus } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BOS_ID, criteriaIds, promptText, readModel, stepPrompt } from "@rubric/arco-heads";
import { RemoteMu, type RemoteMuLora, SidecarClient } from "@rubric/sidecar";
import { createMu, exportMu, SidecarMuModel } from "../src/index.js";
import { hotpotSteps, teacherCriteria } from "./hotpot-steps.js";
import { seconds, time } from "./timing.js";

const shared = process.env["RUBRIC_SHARED_DIR"] ?? resolve(import.meta.dirname, "..", "..", "..", "..", "shared");
const THREADS = cpus().length;
const RUNS = 2;

const note = (text: string) =>
  process.stderr.write(`[bench:mu-lora ${(performance.now() / 1000).toFixed(1)} s] ${text}\n`);

async function main() {
  const steps = hotpotSteps(shared, 16);
  const corpus = hotpotSteps(shared, 60, 64).filter((_, i) => i % 4 === 3);
  const root = await mkdtemp(join(tmpdir(), "bench-mu-lora-"));
  const client = await SidecarClient.start({ threads: THREADS });
  try {
    note("creating μ (tokenizer)");
    const first = await createMu(client, join(root, "whole"), { seed: 1, corpus });
    const { tokenizer, manifest } = await readModel(first.directory);
    const ids = steps.map((step) => ({
      prompt: [BOS_ID, ...tokenizer.encode(promptText(stepPrompt(step)))],
      criteria: criteriaIds(tokenizer, teacherCriteria(step), true),
    }));
    // 16 trajectories of 4 steps (hotpotSteps writes each trajectory's steps in order), half successes.
    const trajectories = Array.from({ length: ids.length / 4 }, (_, i) => ({
      steps: ids.slice(4 * i, 4 * i + 4),
      reward: i % 2,
    }));
    const model = {
      kind: "tiny" as const,
      vocab_size: tokenizer.vocabularySize,
      d_model: 64,
      n_heads: 4,
      n_layers: 2,
      max_seq_len: 1024,
    };
    const rows: string[] = [];
    const results: Record<
      string,
      { step: number; scores: number; export: number; save: number; trainable: number; total: number }
    > = {};
    for (const [name, lora] of [
      ["whole", undefined],
      ["LoRA r 8, α 32, q and v", { r: 8, loraAlpha: 32, loraDropout: 0.05 }],
    ] as [string, RemoteMuLora | undefined][]) {
      note(`${name}: init`);
      const mu = await RemoteMu.init(client, { model, k: 3, seed: 1, ...(lora === undefined ? {} : { lora }) });
      await mu.setReference();
      note(`${name}: mu.step`);
      const step = (await time(() => mu.step(trajectories, { learningRate: 1e-4, headLearningRate: 1e-3 }), RUNS))
        .median;
      note(`${name}: mu.scores`);
      const scores = (await time(() => mu.scores(ids), RUNS)).median;
      note(`${name}: export`);
      const exported = (
        await time(
          () => exportMu(mu, join(root, name === "whole" ? "whole" : "lora"), tokenizer, manifest.maxLengths.criteria),
          1,
        )
      ).median;
      // Served by the sidecar itself (SidecarMuModel, how a transformers μ runs), an update ends
      // with a saved version (checkpoint + fingerprint) instead of an ONNX export and a reload.
      note(`${name}: save`);
      const served = await SidecarMuModel.create(mu, join(root, `${name === "whole" ? "whole" : "lora"}-served`), {
        tokenizer,
      });
      const save = (await time(() => served.save(), RUNS)).median;
      const summary = mu.summary;
      results[name] = {
        step,
        scores,
        export: exported,
        save,
        trainable: summary.trainable_parameters ?? Number.NaN,
        total: summary.parameters ?? Number.NaN,
      };
    }
    const whole = results["whole"]!;
    for (const [name, r] of Object.entries(results))
      rows.push(
        `| ${name} | ${r.trainable.toLocaleString("en")} of ${r.total.toLocaleString("en")} | ${seconds(r.step)} | ${seconds(r.scores)} | ${seconds(r.export)} | ${seconds(r.save)} (${(r.save / r.export).toFixed(2)}× the export) | ${name === "whole" ? "—" : `${(r.step / whole.step).toFixed(2)}× the step, ${(r.export / whole.export).toFixed(2)}× the export`} |`,
      );
    const lines = [
      "## μ through LoRA (sidecar, CPU)",
      "",
      `Command: \`pnpm --filter @rubric/rlxar run bench:mu-lora\` (Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${THREADS} torch threads).`,
      `Workload: μ of the default \`rubric mu init\` shape (d 64, 2 layers, vocabulary ${tokenizer.vocabularySize}); one update = ${trajectories.length} trajectories × 4 HotpotQA-shaped steps (${ids.length} steps, prompts of ${(ids.reduce((n, s) => n + s.prompt.length, 0) / ids.length).toFixed(0)} tokens on average) with teacher-like criteria, ARCO's decomposition loss + β·KL(μ_ref‖μ); medians of ${RUNS} calls after a warm-up; the export is one ONNX export (LoRA: of the merged weights) with its manifest and hashes.`,
      "",
      "| μ | trainable parameters | `mu.step` (64 steps) | `mu.scores` (64 steps) | export | served: saved version | against whole |",
      "|---|---|---|---|---|---|---|",
      ...rows,
      "",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await client.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
