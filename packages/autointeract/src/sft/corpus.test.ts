import { fileURLToPath } from "node:url";
import { ChatMessageSchema } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runEpisode } from "../dialogue/episode.js";
import { loadGdpval } from "../gdpval/dataset.js";
import { gymTask } from "../gym/task.js";
import { policyManager } from "../roles/manager/policy-manager.js";
import { simulatedStakeholder } from "../roles/stakeholder/simulated-stakeholder.js";
import { gymSftCorpus, sftExample, sftToJsonl } from "./corpus.js";

const GDPVAL = `${process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url))}/data/gdpval`;

describe("SFT corpus", () => {
  it("writes chat-format JSONL with the reference rubric as the final assistant turn, reproducibly", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    const tasks = gdpval.train.slice(0, 12).map((e) => gymTask(e.task));
    const corpus = await gymSftCorpus(tasks, { seed: 4, questionBudget: 3 });
    expect(corpus).toHaveLength(12);
    const jsonl = sftToJsonl(corpus);
    expect(sftToJsonl(await gymSftCorpus(tasks, { seed: 4, questionBudget: 3 }))).toBe(jsonl);
    const Line = z.object({ messages: z.array(ChatMessageSchema).min(4) });
    for (const line of jsonl.trim().split("\n")) {
      const { messages } = Line.parse(JSON.parse(line));
      expect(messages[0]!.role).toBe("system");
      expect(messages.at(-1)!.role).toBe("assistant");
      const rubric = z
        .object({ criteria: z.array(z.object({ text: z.string(), weight: z.number() })).min(1) })
        .parse(JSON.parse(messages.at(-1)!.content));
      expect(rubric.criteria.length).toBeGreaterThanOrEqual(6);
      // Roles alternate after the system turn, as chat templates require.
      messages.slice(1).forEach((m, i) => expect(m.role).toBe(i % 2 === 0 ? "user" : "assistant"));
    }
    // The reference is the stakeholder's own utility.
    const first = corpus[0]!;
    const utility = simulatedStakeholder(tasks[0]!, 4).utility;
    expect(JSON.parse(first.messages.at(-1)!.content).criteria).toEqual(
      utility.criteria.map((c) => ({ text: c.text, weight: c.weight })),
    );
  });

  it("with reference: elicited, the target is the rubric the manager wrote, not the utility", async () => {
    const gdpval = await loadGdpval(GDPVAL);
    const tasks = gdpval.train.slice(0, 6).map((e) => gymTask(e.task));
    const corpus = await gymSftCorpus(tasks, { seed: 4, reference: "elicited" });
    let differs = 0;
    for (const [i, task] of tasks.entries()) {
      const episode = await runEpisode({
        task,
        manager: policyManager(),
        stakeholder: simulatedStakeholder(task, 4),
        questionBudget: 5,
      });
      const target = JSON.parse(corpus[i]!.messages.at(-1)!.content).criteria;
      expect(target).toEqual(episode.rubric!.criteria.map((c) => ({ text: c.text, weight: c.weight })));
      const utility = simulatedStakeholder(task, 4).utility.criteria.map((c) => ({ text: c.text, weight: c.weight }));
      if (JSON.stringify(target) !== JSON.stringify(utility)) differs++;
    }
    // An imperfect teacher: its rubrics are not the stakeholder's utility.
    expect(differs).toBeGreaterThan(3);
  });

  it("turns any episode into an example", async () => {
    const task = {
      id: "t",
      prompt: "Write a memo about revenue forecasting.",
      sector: "Finance",
      occupation: "Analyst",
    };
    const episode = await runEpisode({
      task,
      manager: policyManager(),
      stakeholder: simulatedStakeholder(task, 1),
      questionBudget: 2,
    });
    const example = sftExample(episode.transcript, episode.rubric!, "llm");
    expect(example.metadata).toEqual({
      taskId: "t",
      source: "llm",
      manager: "policy:family-questions",
      stakeholder: expect.stringMatching(/^sim-stakeholder:/),
    });
    expect(example.messages.filter((m) => m.role === "assistant")).toHaveLength(3);
  });
});
