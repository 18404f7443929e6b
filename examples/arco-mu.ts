/**
 * ARCO's rubric model μ end to end on a CPU: warm-up data from a teacher (as `arco-annotate`), a
 * new μ created and fine-tuned in the Python sidecar, exported, then served by onnxruntime-node to
 * write and score the criteria of an agent's steps, and the same export's checkpoint in torch
 * giving the same criteria.
 *
 *   pnpm --filter @rubric/examples arco-mu [out-dir]        (after `pnpm build`; default runs/arco-mu)
 *
 * It writes <out-dir>/mu-sft.jsonl, <out-dir>/steps.jsonl and the model root <out-dir>/mu, and
 * prints the `rubric mu criteria` command that gives the same numbers. μ here learns five steps by
 * heart (a demonstration of the plumbing, not of a useful μ): its criteria for those steps are
 * the teacher's, and a step it never saw (the last one) shows what a μ trained on five examples
 * writes.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { muSftJsonLines, RubricModel, rateSteps, type StepRecord, stepsOf } from "@rubric/arco-heads";
import { SidecarClient } from "@rubric/sidecar";
import { openAICompatible } from "@rubric/providers";
import { chatReply, startOpenAIChatServer } from "@rubric/providers/testing";
import { createMu, sidecarMuEngine } from "@rubric/rlxar";
import { annotateToSft, cannedAnnotations, trajectories } from "./arco-annotate.js";

const out = resolve(process.argv[2] ?? join("..", "runs", "arco-mu"));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// 1. The teacher's annotations → μ-SFT examples (a scripted teacher: see arco-annotate.ts).
const server = await startOpenAIChatServer({ replies: cannedAnnotations.map((a) => chatReply.json(a)) });
const teacher = openAICompatible({ baseUrl: server.url, model: "teacher", apiKeyEnv: false });
const { examples } = await annotateToSft(teacher, trajectories);
await server.close();
writeFileSync(join(out, "mu-sft.jsonl"), muSftJsonLines(examples));

// 2. The agent's steps to score: the annotated ones, and one μ never saw.
const steps: StepRecord[] = [
  ...trajectories.flatMap((t) => stepsOf(t).map((step, i) => ({ id: `${t.id}#${i}`, ...step }))),
  {
    id: "new#0",
    task: "Who designed the bridge in the town where Ada Vell was born?",
    history: [],
    budgetLeft: 3,
    action: "Search[Ada Vell birthplace]",
  },
];
writeFileSync(join(out, "steps.jsonl"), `${steps.map((s) => JSON.stringify(s)).join("\n")}\n`);

// 3. μ created in the sidecar, fine-tuned, exported as version 1; served by onnxruntime-node.
const client = await SidecarClient.start({ threads: 2 });
try {
  const root = join(out, "mu");
  const { directory } = await createMu(client, root, {
    seed: 1,
    sft: { examples, epochs: 60, batchSize: 5, learningRate: 3e-3 },
  });
  const mu = await RubricModel.load(root);
  const rated = await mu.rateSteps(steps);
  await mu.close();
  console.log(`μ version 1 in ${directory}\n`);
  rated.forEach((step, i) => {
    console.log(`${steps[i]!.id}  s = ${step.s.toFixed(3)}${step.adjusted ? `  (${step.adjusted})` : ""}`);
    step.criteria.forEach((c, k) => console.log(`  ${step.scores[k]!.toFixed(3).padStart(7)}  ${c || "(empty)"}`));
  });

  // 4. The torch backend on the same export writes the same criteria.
  const torch = await rateSteps(await sidecarMuEngine(client, directory), steps);
  const same = torch.every((t, i) => JSON.stringify(t.criteria) === JSON.stringify(rated[i]!.criteria));
  const gap = Math.max(...torch.flatMap((t, i) => t.scores.map((x, k) => Math.abs(x - rated[i]!.scores[k]!))));
  console.log(
    `\ntorch backend: ${same ? "the same criteria" : "DIFFERENT criteria"}, scores within ${gap.toExponential(1)}`,
  );
  if (!same || gap > 1e-4) process.exitCode = 1;
  console.log(
    `\nThe same from the command line:\n  node packages/cli/dist/main.js mu criteria --model ${root} --steps ${join(out, "steps.jsonl")} --json`,
  );
} finally {
  await client.close();
}
