/**
 * Speed of the in-process extractive policy on the trainer's shapes, printed as a Markdown line:
 * `act` on 64 views (a rollout round) and `update` on 200 samples (a batch), on real HotpotQA
 * training questions whose history holds two of their paragraphs (≈ 135 answer candidates).
 * `act` is timed on views whose paragraphs it has never read (the worst case) and again on the
 * same view objects (the per-view cache); `update` on the views `act` read, and by a second
 * policy on copies of them (new view objects, paragraphs already read). Medians of 20 runs after
 * one warm-up.
 *
 *   pnpm --filter @rubric/rlxar run bench:extractive
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type AgentView, extractivePolicy, type PolicySample } from "../src/index.js";

const shared = process.env["RUBRIC_SHARED_DIR"] ?? resolve(import.meta.dirname, "../../../../shared");
const rows = readFileSync(join(shared, "data", "hotpotqa", "train.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map(
    (line) =>
      JSON.parse(line) as { _id: string; question: string; supporting_titles: string[]; context: [string, string[]][] },
  );

// Run r reads batch r mod 7 of the questions with context paragraphs 2k and 2k + 1 (k = ⌊r / 7⌋):
// 21 runs, never the same paragraphs twice, so "fresh" is never helped by the policy's paragraph memo.
const freshViews = (run: number): AgentView[] =>
  rows.slice((run % 7) * 64, (run % 7) * 64 + 64).map((row) => {
    const k = Math.floor(run / 7);
    return {
      taskId: row._id,
      task: row.question,
      history: row.context
        .slice(2 * k, 2 * k + 2)
        .map(([title, sentences]) => ({ action: `Search[${title}]`, observation: sentences.join(" ") })),
      budgetLeft: 1,
      mustFinish: false,
    };
  });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const policy = extractivePolicy();
const times = {
  actFresh: [] as number[],
  actCached: [] as number[],
  updateFresh: [] as number[],
  updateCached: [] as number[],
};
for (let run = 0; run < 21; run++) {
  const views = freshViews(run);
  let t = performance.now();
  await policy.act(views, { temperature: 1, seeds: views.map((v) => `${run}/${v.taskId}`) });
  const actFresh = performance.now() - t;
  t = performance.now();
  const decisions = await policy.act(views, { temperature: 1, seeds: views.map((v) => `${run}/${v.taskId}/2`) });
  const actCached = performance.now() - t;
  const samples: PolicySample[] = Array.from({ length: 200 }, (_, i) => ({
    view: views[i % 64]!,
    decision: decisions[i % 64]!,
    advantage: (i % 3) - 1,
  }));
  t = performance.now();
  await policy.update(samples, { learningRate: 1e-3, klCoef: 0, maxGradNorm: 1 });
  const updateCached = performance.now() - t;
  // Another policy meets the same views as new objects in update: it reads them itself (the
  // paragraphs are in the memo by now, as in a trainer that updates on the views it rolled out).
  const cold = extractivePolicy();
  const coldViews = freshViews(run).map((v) => ({ ...v }));
  const coldBatch = samples.map((s, i) => ({ ...s, view: coldViews[i % 64]! }));
  t = performance.now();
  await cold.update(coldBatch, { learningRate: 1e-3, klCoef: 0, maxGradNorm: 1 });
  const updateFresh = performance.now() - t;
  if (run === 0) continue;
  times.actFresh.push(actFresh);
  times.actCached.push(actCached);
  times.updateCached.push(updateCached);
  times.updateFresh.push(updateFresh);
}
console.log(
  `| extractive policy | act, 64 views: ${median(times.actFresh).toFixed(1)} ms fresh, ${median(times.actCached).toFixed(1)} ms cached | ` +
    `update, 200 samples: ${median(times.updateFresh).toFixed(1)} ms fresh, ${median(times.updateCached).toFixed(1)} ms cached |`,
);
