/**
 * The extractive policy's ceiling on HotpotQA (issue 30 item 6): π imitates the oracle (the gold
 * teacher without mistakes: both gold titles, then the gold answer) on the 400 training
 * questions, and is evaluated greedily. What it reaches is what RL from such a warm-up could hope
 * for; the answer choice, not the search, is its limit. Tuned on the training file's 69 held-out
 * questions; `--dev` adds the dev EM, for the report only.
 *
 *   pnpm --filter @rubric/repro exec tsx tools/arco-ceiling.ts [--dev] [--epochs 5] [--word-vectors <dir>]
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createRng, mean, shuffle } from "@rubric/core";
import { hotpotMeasure, splitTrainingQuestions } from "@rubric/repro";
import {
  type AgentView,
  extractiveCandidates,
  extractivePolicy,
  goldTeacher,
  type HotpotQuestion,
  hotpotQa,
  loadHotpotQa,
  rollout,
  teacherAnnotation,
  warmupData,
} from "@rubric/rlxar";

const { values: args } = parseArgs({
  options: {
    dev: { type: "boolean", default: false },
    titles: { type: "boolean", default: false },
    epochs: { type: "string", default: "5" },
  },
});
const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const { train, tune } = splitTrainingQuestions(loadHotpotQa(`${shared}/data/hotpotqa/train.jsonl`));
const environment = hotpotQa({ indexTitles: true });
// The oracle speaks π's language (`--titles`: it searches by title, as ARCO's teacher does).
const queries = (view: AgentView) =>
  extractiveCandidates(view).candidates.flatMap((c) => (c.kind === "search" ? [c.query] : []));
const oracle = await rollout(
  environment,
  train,
  goldTeacher(train, { noise: 0, ...(args.titles ? {} : { queries, retrieval: { indexTitles: true } }) }),
  { temperature: 1, seed: "oracle" },
);
const examples = warmupData(
  oracle,
  oracle.map((episode) => teacherAnnotation(episode, 3)),
).policy;
const policy = extractivePolicy();
const learnable = examples.filter((example) => policy.learnable(example));
const rng = createRng(1).fork("pi-sft");
for (let epoch = 1; epoch <= Number(args.epochs); epoch++) {
  const order = shuffle(learnable, rng.fork(`epoch:${epoch}`));
  for (let start = 0; start < order.length; start += 64)
    await policy.sft(order.slice(start, start + 64), { learningRate: 0.05 });
}
const em = async (questions: readonly HotpotQuestion[]) =>
  mean(
    (await rollout(environment, questions, policy, { temperature: 0, seed: "ceiling" })).map(
      (episode) => hotpotMeasure(episode).em!,
    ),
  );
console.log(
  `oracle imitation: ${learnable.length} of ${examples.length} oracle steps expressible; greedy EM — train ${(100 * (await em(train))).toFixed(1)} %, tune ${(100 * (await em(tune))).toFixed(1)} %` +
    (args.dev ? `, dev ${(100 * (await em(loadHotpotQa(`${shared}/data/hotpotqa/dev.jsonl`)))).toFixed(1)} %` : ""),
);
