import { describe, expect, it } from "vitest";
import type { AgentView } from "../../environment/environment.js";
import { arcoExactMatch } from "../../hotpotqa/metrics.js";
import type { PolicySample } from "../policy.js";
import { goldView, readGoldRows, type GoldRow } from "./__fixtures__/hotpotqa-views.js";
import { extractivePolicy, type ExtractivePolicy } from "./extractive-policy.js";

interface Question {
  readonly row: GoldRow;
  readonly view: AgentView;
}

// Both gold paragraphs are in the history and only Finish is allowed: one step, rewarded by EM.
const questions = (split: "train" | "dev"): Question[] =>
  readGoldRows(split).map((row) => ({ row, view: goldView(row, { mustFinish: true }) }));
const answerOf = (text: string) => text.replace(/^Finish\[/u, "").replace(/\]$/u, "");

async function greedyEm(policy: ExtractivePolicy, set: readonly Question[]): Promise<number> {
  const decisions = await policy.act(
    set.map((q) => q.view),
    { temperature: 0, seeds: set.map((q) => q.row.id) },
  );
  return decisions.reduce((sum, d, i) => sum + arcoExactMatch(answerOf(d.text), set[i]!.row.answer), 0) / set.length;
}

describe("ExtractivePolicy learns to answer HotpotQA from its gold paragraphs", () => {
  it("raises greedy EM on train, and on dev which it never sees, with group-mean REINFORCE", async () => {
    const train = questions("train");
    const dev = questions("dev");
    const policy = extractivePolicy();
    const start = { train: await greedyEm(policy, train), dev: await greedyEm(policy, dev) };
    const group = 4;
    const batch = 16;
    for (let step = 0; step < 300; step++) {
      const tasks = Array.from({ length: batch }, (_, j) => train[(step * batch + j) % train.length]!);
      const views = tasks.flatMap((q) => Array.from({ length: group }, () => q.view));
      const decisions = await policy.act(views, {
        temperature: 1,
        seeds: views.map((v, k) => `learn/${step}/${v.taskId}/${k % group}`),
      });
      const rewards = decisions.map((d, k) =>
        arcoExactMatch(answerOf(d.text), tasks[Math.floor(k / group)]!.row.answer),
      );
      const samples: PolicySample[] = decisions.map((decision, k) => {
        const first = k - (k % group);
        const mean = rewards.slice(first, first + group).reduce((a, b) => a + b, 0) / group;
        return { view: views[k]!, decision, advantage: rewards[k]! - mean };
      });
      await policy.update(samples, { learningRate: 0.1, klCoef: 0, maxGradNorm: 1 });
    }
    const end = { train: await greedyEm(policy, train), dev: await greedyEm(policy, dev) };
    console.log(
      `greedy EM (arcoExactMatch), 300 updates of 16 questions × 4 samples: train ${start.train.toFixed(3)} → ${end.train.toFixed(3)}, dev ${start.dev.toFixed(3)} → ${end.dev.toFixed(3)}`,
    );
    // Measured when written: train 0.030 → 0.275, dev 0.037 → 0.142 (ceiling: answer recall 0.906 / 0.873).
    expect(end.train - start.train).toBeGreaterThan(0.15);
    expect(end.dev - start.dev).toBeGreaterThan(0.07);
  });
});
