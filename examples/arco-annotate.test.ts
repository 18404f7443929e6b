import { readMuSftExamples, muSftJsonLines } from "@rubric/arco-heads";
import { openAICompatible } from "@rubric/providers";
import { chatReply, startOpenAIChatServer } from "@rubric/providers/testing";
import { describe, expect, it } from "vitest";
import { annotateToSft, cannedAnnotations, trajectories } from "./arco-annotate.js";

describe("the ARCO annotation example (arco-heads README)", () => {
  it("turns annotated trajectories into μ-SFT examples whose scores decompose each reward", async () => {
    const server = await startOpenAIChatServer({ replies: cannedAnnotations.map((a) => chatReply.json(a)) });
    try {
      const teacher = openAICompatible({ baseUrl: server.url, model: "teacher", apiKeyEnv: false, retry: false });
      const { examples, skipped } = await annotateToSft(teacher, trajectories);
      expect(skipped).toEqual({});
      expect(examples.map((e) => e.id)).toEqual(["museum#0", "museum#1", "museum#2", "river#0", "river#1"]);
      for (const id of ["museum", "river"]) {
        const own = examples.filter((e) => e.trajectory === id);
        const sum = own.reduce((total, e) => total + e.scores.reduce((a, b) => a + b, 0) / e.scores.length, 0);
        expect(sum).toBeCloseTo(own[0]!.outcome, 9);
      }
      expect(readMuSftExamples(muSftJsonLines(examples), "mu-sft.jsonl")).toEqual(examples);
    } finally {
      await server.close();
    }
  });
});
