import { RoleOutputError } from "./errors.js";
import type { Manager } from "../roles/manager/manager.js";
import type { Stakeholder } from "../roles/stakeholder/stakeholder.js";
import type { Turn } from "./transcript.js";

/**
 * A manager and a stakeholder that say exactly what a transcript records, in order: running an
 * episode with them reproduces the transcript, which is how a dialogue is replayed, audited, or
 * turned into SFT data without calling a model again.
 */
export function replayRoles(transcript: readonly Turn[]): { manager: Manager; stakeholder: Stakeholder } {
  const task = transcript.find((t) => t.type === "task");
  const moves = transcript.filter((t) => t.type === "question" || t.type === "rubric");
  const answers = transcript.filter((t) => t.type === "answer");
  let nextMove = 0;
  let nextAnswer = 0;
  const spend = (t: { usage?: unknown; costUsd?: unknown; model?: unknown }) => ({
    ...(t.usage ? { usage: t.usage as { inputTokens: number; outputTokens: number } } : {}),
    ...(typeof t.costUsd === "number" ? { costUsd: t.costUsd } : {}),
    ...(typeof t.model === "string" ? { model: t.model } : {}),
  });
  return {
    manager: {
      name: task?.type === "task" ? task.manager : "replay",
      async next() {
        const move = moves[nextMove++];
        if (!move) throw new RoleOutputError("the transcript records no further manager move");
        if (move.type === "rubric") return { type: "submit", rubric: move.rubric, ...spend(move) };
        if (move.type !== "question") throw new RoleOutputError("unexpected turn in transcript");
        return {
          type: "ask",
          question: { text: move.text, difficulty: move.difficulty },
          ...spend(move),
        };
      },
    },
    stakeholder: {
      name: task?.type === "task" ? task.stakeholder : "replay",
      async answer() {
        const answer = answers[nextAnswer++];
        if (!answer || answer.type !== "answer") throw new RoleOutputError("the transcript records no further answer");
        return { text: answer.text, ...spend(answer) };
      },
    },
  };
}
