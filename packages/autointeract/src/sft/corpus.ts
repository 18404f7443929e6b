import { toJsonLines, type ChatMessage, type FlatRubric } from "@rubric/core";
import { runEpisode } from "../dialogue/episode.js";
import { CorpusEpisodeError } from "../dialogue/errors.js";
import { TranscriptError, type Turn } from "../dialogue/transcript.js";
import type { GymTask } from "../gym/task.js";
import { MANAGER_SYSTEM_PROMPT } from "../roles/manager/llm-manager.js";
import type { Manager } from "../roles/manager/manager.js";
import { policyManager } from "../roles/manager/policy-manager.js";
import { simulatedStakeholder } from "../roles/stakeholder/simulated-stakeholder.js";

/** One supervised example in the chat format SFT trainers read: the rubric is the last assistant turn. */
export interface SftExample {
  readonly messages: readonly ChatMessage[];
  readonly metadata: {
    readonly taskId: string;
    readonly source: "gym" | "llm";
    readonly manager: string;
    readonly stakeholder: string;
  };
}

/**
 * Turns a dialogue transcript and a reference rubric into a chat example: system (the manager's
 * instructions), user (the task), then the manager's questions as assistant turns and the
 * stakeholder's answers as user turns, and the reference rubric — in the JSON the LLM manager
 * writes, `{"criteria": [{"text", "weight"}]}` — as the final assistant turn.
 */
export function sftExample(transcript: readonly Turn[], reference: FlatRubric, source: "gym" | "llm"): SftExample {
  const start = transcript.find((t) => t.type === "task");
  if (!start || start.type !== "task") throw new TranscriptError("the transcript has no task turn");
  const messages: ChatMessage[] = [
    { role: "system", content: MANAGER_SYSTEM_PROMPT },
    { role: "user", content: `Task:\n${start.task.prompt}` },
  ];
  for (const turn of transcript) {
    if (turn.type === "question")
      messages.push({ role: "assistant", content: JSON.stringify({ question: turn.text }) });
    if (turn.type === "answer") messages.push({ role: "user", content: turn.text });
  }
  messages.push({
    role: "assistant",
    content: JSON.stringify({ criteria: reference.criteria.map((c) => ({ text: c.text, weight: c.weight })) }),
  });
  return {
    messages,
    metadata: { taskId: start.task.id, source, manager: start.manager, stakeholder: start.stakeholder },
  };
}

/**
 * An SFT corpus from the gym: for each task an episode between a questioning manager (the
 * default policy unless given) and the task's simulated stakeholder. The reference rubric is the
 * stakeholder's own utility by default — the rubric a perfect manager would have written — or,
 * with `reference: "elicited"`, the rubric the manager itself wrote from the replies: a teacher's
 * imperfect reconstruction, which is what ARCANE's Stage I imitates.
 */
export async function gymSftCorpus(
  tasks: readonly GymTask[],
  options: { seed: number; questionBudget?: number; manager?: Manager; reference?: "utility" | "elicited" },
): Promise<SftExample[]> {
  const examples: SftExample[] = [];
  for (const task of tasks) {
    const stakeholder = simulatedStakeholder(task, options.seed);
    const episode = await runEpisode({
      task,
      manager: options.manager ?? policyManager(),
      stakeholder,
      questionBudget: options.questionBudget ?? 5,
    });
    if (episode.error)
      throw new CorpusEpisodeError(`task ${task.id}: ${episode.error.name}: ${episode.error.message}`, {
        cause: episode.error,
      });
    examples.push(
      sftExample(episode.transcript, options.reference === "elicited" ? episode.rubric! : stakeholder.utility, "gym"),
    );
  }
  return examples;
}

export function sftToJsonl(examples: readonly SftExample[]): string {
  return toJsonLines(examples);
}
