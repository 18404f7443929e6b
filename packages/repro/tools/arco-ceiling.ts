/**
 * The extractive policy's ceiling on HotpotQA (issue 30 item 6): π imitates the oracle (the gold
 * teacher without mistakes: both gold titles, then the gold answer) on the 400 training
 * questions, and is evaluated greedily. What it reaches is what RL from such a warm-up could hope
 * for; the answer choice, not the search, is its limit. Tuned on the training file's 69 held-out
 * questions; `--dev` adds the dev EM, for the report only. Each split's EM is also given by what
 * the gold answer is (`answerKind`: yes or no, named in the question, read out of a paragraph), since the splits
 * mix these differently.
 *
 *   pnpm --filter @rubric/repro exec tsx tools/arco-ceiling.ts [--dev] [--titles] [--epochs 5]
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createRng, mean, shuffle } from "@rubric/core";
import { ANSWER_KIND_LABELS, ANSWER_KINDS, answerKind, hotpotMeasure, splitTrainingQuestions } from "@rubric/repro";
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
// Where the EM comes from, by what the gold answer is: the training file holds yes/no answers
// three times as often as dev (16 % against 5 %), so one EM across splits compares mixes.
const percent = (x: number) => `${(100 * x).toFixed(1)} %`;
const measure = async (name: string, questions: readonly HotpotQuestion[]) => {
  const episodes = await rollout(environment, questions, policy, { temperature: 0, seed: "ceiling" });
  const byKind = ANSWER_KINDS.map((kind) => {
    const hits = episodes.flatMap((episode, i) =>
      answerKind(questions[i]!) === kind ? [hotpotMeasure(episode).em!] : [],
    );
    return `${ANSWER_KIND_LABELS[kind]} ${hits.length} (${percent(hits.length / questions.length)}): ${hits.length === 0 ? "—" : percent(mean(hits))}`;
  });
  return `${name} ${percent(mean(episodes.map((episode) => hotpotMeasure(episode).em!)))} [${byKind.join("; ")}]`;
};
console.log(
  `oracle imitation: ${learnable.length} of ${examples.length} oracle steps expressible; greedy EM by split [gold answers by kind: share of the split, EM]:`,
);
console.log(`  ${await measure("train", train)}`);
console.log(`  ${await measure("tune", tune)}`);
if (args.dev) console.log(`  ${await measure("dev", loadHotpotQa(`${shared}/data/hotpotqa/dev.jsonl`))}`);
