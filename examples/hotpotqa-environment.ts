/**
 * ARCO's HotpotQA environment on the shared dev questions, driven by a scripted policy that
 * searches each gold paragraph's first sentence and then answers with the gold answer: a check of
 * the plumbing (data, BM25 retrieval, budget, reward), not of any agent.
 *
 *   pnpm --filter @rubric/examples hotpotqa-environment [dev.jsonl] [n]
 */
import { pathToFileURL } from "node:url";
import { type HotpotQuestion, type Policy, hotpotQa, loadHotpotQa, rollout } from "@rubric/rlxar";

/** Searches the gold paragraphs' first sentences in turn, then answers with the gold answer. */
export function oraclePolicy(questions: readonly HotpotQuestion[]): Policy {
  const byId = new Map(questions.map((q) => [q.id, q]));
  return {
    name: "oracle",
    act: async (views) =>
      views.map((view) => {
        const question = byId.get(view.taskId)!;
        const title = question.supportingTitles[view.history.length];
        const paragraph = question.paragraphs.find((p) => p.title === title);
        return view.mustFinish || paragraph === undefined
          ? { text: `Finish[${question.answer}]` }
          : { text: `Thought: look it up.\nAction: Search[${paragraph.sentences[0]}]` };
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const path = process.argv[2] ?? "../../shared/data/hotpotqa/dev.jsonl";
  const questions = loadHotpotQa(path, { sample: { size: Number(process.argv[3] ?? 20), seed: 1 } });
  const episodes = await rollout(hotpotQa(), questions, oraclePolicy(questions), { temperature: 0, seed: 1 });
  const searches = episodes.flatMap((e) => e.steps.filter((s) => s.transition.kind === "tool"));
  const gold = searches.filter((s) => s.transition.info["supporting"] === true).length;
  const em = episodes.reduce((sum, e) => sum + e.reward, 0) / episodes.length;
  console.log(`${episodes.length} episodes: ${gold}/${searches.length} searches found a gold paragraph; EM ${em}`);
}
