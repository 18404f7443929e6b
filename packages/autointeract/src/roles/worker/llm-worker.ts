import type { FlatRubric, LanguageModel } from "@rubric/core";
import type { TaskBrief } from "../../dialogue/dialogue.js";
import type { Worker, WorkerOutput } from "./worker.js";

/** A worker played by a language model; steered by the rubric's criteria when given one. Sample k uses seed + k. */
export function llmWorker(
  model: LanguageModel,
  options: { readonly maxTokens?: number; readonly temperature?: number } = {},
): Worker {
  return {
    name: `llm-worker:${model.modelId}`,
    async produce(
      task: TaskBrief,
      rubric: FlatRubric | undefined,
      n: number,
      { seed, signal },
    ): Promise<WorkerOutput[]> {
      const guide = rubric
        ? `\n\nYour work will be judged on these criteria (weight in brackets):\n${rubric.criteria.map((c) => `- ${c.polarity === "penalty" ? "Avoid: " : ""}${c.text} [${c.weight}]`).join("\n")}`
        : "";
      const outputs: WorkerOutput[] = [];
      for (let k = 0; k < n; k++) {
        const response = await model.generate({
          messages: [
            {
              role: "system",
              content: "You are a careful professional. Produce the deliverable the task asks for, as text.",
            },
            { role: "user", content: `${task.prompt}${guide}` },
          ],
          temperature: options.temperature ?? 0.8,
          seed: seed + k,
          maxTokens: options.maxTokens ?? 800,
          signal,
        });
        outputs.push({
          text: response.choices[0]?.text ?? "",
          usage: response.usage,
          model: model.modelId,
          costUsd: response.costUsd,
        });
      }
      return outputs;
    },
  };
}
