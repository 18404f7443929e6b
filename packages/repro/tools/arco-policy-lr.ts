/**
 * How the ARCO reproduction's π learning rate was chosen, on training questions only: the
 * extractive policy after the warm-up's SFT, then outcome-only RL (the baseline) at a few learning
 * rates and batch sizes, evaluated greedily on the training file's tune split (the 69 questions
 * no run trains on, `splitTrainingQuestions`). Nothing here reads the dev file.
 *
 *   pnpm --filter @rubric/repro exec tsx tools/arco-policy-lr.ts [--epochs 3]
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createRng, shuffle } from "@rubric/core";
import {
  type Episode,
  extractivePolicy,
  goldTeacher,
  hotpotQa,
  loadHotpotQa,
  rollout,
  teacherAnnotation,
  trainCoEvolution,
  warmupData,
} from "@rubric/rlxar";
import { splitTrainingQuestions } from "@rubric/repro";

const { values: args } = parseArgs({ options: { epochs: { type: "string", default: "3" } } });
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const { train, tune: heldOut } = splitTrainingQuestions(loadHotpotQa(`${shared}/data/hotpotqa/train.jsonl`));
const environment = hotpotQa({ indexTitles: true });
const teacher = await rollout(environment, train, goldTeacher(train, { noise: 0.25 }), {
  temperature: 1,
  seed: "1/teacher",
  replicas: 3,
});
const warm = warmupData(
  teacher,
  teacher.map((episode) => teacherAnnotation(episode, 3)),
);
const measure = (episode: Episode) => ({ em: episode.reward });

console.log(
  `${train.length} training questions, ${heldOut.length} held out to tune on (the training file's tune split); greedy ARCO EM (the training reward) per epoch:`,
);
for (const learningRate of [0.05, 0.1, 0.2]) {
  for (const rolloutsPerBatch of [16, 32, 64]) {
    const policy = extractivePolicy();
    const sft = warm.policy.filter((example) => policy.learnable(example));
    const rng = createRng(1).fork("pi-sft");
    for (let epoch = 1; epoch <= 5; epoch++) {
      const order = shuffle(sft, rng.fork(`epoch:${epoch}`));
      for (let start = 0; start < order.length; start += 64)
        await policy.sft(order.slice(start, start + 64), { learningRate: 0.05 });
    }
    const result = await trainCoEvolution({
      environment,
      train,
      evaluation: heldOut,
      policy,
      settings: {
        signal: "outcome",
        sparseEpochs: Number(args.epochs),
        denseEpochs: 0,
        rolloutsPerBatch,
        sparseLearningRate: learningRate,
        seed: 1,
      },
      measure,
    });
    const curve = result.log.flatMap((line) => (line.type === "eval" ? [line.metrics["em"]!.toFixed(3)] : []));
    console.log(
      `lr ${learningRate}, ${rolloutsPerBatch} rollouts per update (${result.batches} updates): ${curve.join(" → ")}`,
    );
  }
}
