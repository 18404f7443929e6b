import { openAICompatible } from "@rubric/providers";
// The OpenAI-wire test server: a real HTTP server, so the real provider client runs.
import { chatReply, type OpenAIChatServer, startOpenAIChatServer } from "@rubric/providers/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AnnotationReplyError } from "../errors.js";
import type { Trajectory } from "../step/step.js";
import { annotateTrajectory, annotationPrompt } from "./annotator.js";
import { museumTrajectory } from "../__fixtures__/museum-trajectory.js";

const trajectory = museumTrajectory;

const step = (n: number, scores: number[], criteria = ["targets the hop", "specific", "no repeat"]) => ({
  step: n,
  criteria,
  scores,
});

describe("annotateTrajectory", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    server = await startOpenAIChatServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());
  const teacher = () => openAICompatible({ baseUrl: server.url, model: "teacher", apiKeyEnv: false, retry: false });

  it("asks once at temperature 0 with the whole-trajectory contract and projects the scores onto R", async () => {
    // Means 0.5 + 0.4 + 0.3 = 1.2 ≠ R = 1: the projection shifts every score by −0.2.
    server.enqueue(
      chatReply.json({ steps: [step(1, [0.5, 0.5, 0.5]), step(2, [0.4, 0.4, 0.4]), step(3, [0.3, 0.3, 0.3])] }),
    );
    const annotation = await annotateTrajectory(teacher(), trajectory);

    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.body!;
    expect(body.temperature).toBe(0);
    expect(body.max_tokens).toBe(3 * 128);
    expect(body.response_format?.json_schema?.name).toBe("trajectory_annotation");
    const user = body.messages?.[1]?.content ?? "";
    expect(user).toContain("Final reward R = 1");
    expect(user).toContain("must sum to exactly 1");
    expect(user).toContain("Action: Finish[Lyon]\nObservation: Episode finished.");
    expect(user).toContain("exactly 3 short criteria");

    expect(annotation.trajectory).toBe("q7");
    expect(annotation.shift).toBeCloseTo(-0.2 / 3, 12);
    expect(annotation.steps[0]?.criteria).toEqual(["targets the hop", "specific", "no repeat"]);
    expect(annotation.steps[0]?.raw).toEqual([0.5, 0.5, 0.5]);
    const means = annotation.steps.map((s) => s.scores.reduce((a, b) => a + b, 0) / 3);
    expect(means.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it("a reply without JSON is an AnnotationReplyError naming the trajectory", async () => {
    server.enqueue(chatReply.completion("The first step is good, the second better."));
    const error = await annotateTrajectory(teacher(), trajectory).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnnotationReplyError);
    expect((error as AnnotationReplyError).code).toBe("arco.annotation-reply");
    expect((error as Error).message).toMatch(/trajectory "q7": \(root\): no JSON in the reply/);
  });

  it("a reply of the wrong shape names the step and field zod found", async () => {
    server.enqueue(
      chatReply.json({ steps: [step(1, [0, 0, 0]), { step: 2, criteria: ["a", "b", "c"], scores: ["high", 0, 0] }] }),
    );
    const error = (await annotateTrajectory(teacher(), trajectory).catch((e: unknown) => e)) as AnnotationReplyError;
    expect(error).toBeInstanceOf(AnnotationReplyError);
    expect(error.problems[0]).toMatch(/^steps\[1\]\.scores\[0\]: /);
  });

  it("wrong K is named per step and field", async () => {
    server.enqueue(
      chatReply.json({
        steps: [step(1, [0.3, 0.3, 0.3]), step(2, [0.3, 0.3], ["a", "b"]), step(3, [0.4, 0.4, 0.4, 0.4])],
      }),
    );
    const error = (await annotateTrajectory(teacher(), trajectory).catch((e: unknown) => e)) as AnnotationReplyError;
    expect(error.problems).toEqual([
      "steps[1].criteria: expected 3 criteria, got 2",
      "steps[1].scores: expected 3 scores, got 2",
      "steps[2].scores: expected 3 scores, got 4",
    ]);
  });

  it("a missing step is named, and so is a step numbered out of order", async () => {
    server.enqueue(chatReply.json({ steps: [step(1, [0.5, 0.5, 0.5]), step(3, [0.5, 0.5, 0.5])] }));
    const error = (await annotateTrajectory(teacher(), trajectory).catch((e: unknown) => e)) as AnnotationReplyError;
    expect(error.problems).toEqual([
      "steps: expected 3 entries (one per step), got 2",
      "steps[1].step: expected 2, got 3",
    ]);
  });

  it("takes K from the options, in the prompt and in the check", async () => {
    server.enqueue(chatReply.json({ steps: [step(1, [1], ["a"]), step(2, [0], ["b"]), step(3, [0], ["c"])] }));
    const annotation = await annotateTrajectory(teacher(), trajectory, { k: 1 });
    expect(annotation.steps.map((s) => s.scores)).toEqual([[1], [0], [0]]);
    expect(server.requests[0]?.body?.messages?.[1]?.content).toContain("exactly 1 short criteria");
  });
});

describe("annotationPrompt", () => {
  it("numbers every step with its budget and cuts long observations", () => {
    const long: Trajectory = {
      ...trajectory,
      turns: [{ action: "Search[a]", observation: "w".repeat(700), budgetLeft: 3 }],
    };
    const [, user] = annotationPrompt(long, { maxObservationChars: 5 });
    expect(user.content).toContain("Step 1 (searches remaining before it: 3)");
    expect(user.content).toContain("Observation: wwwww… [695 more characters]");
    expect(user.content).toContain("Trajectory (1 step):");
  });
});
