/**
 * Warm-up data for ARCO's rubric model μ, the way a user with a capable model makes it: a teacher
 * annotates whole trajectories (K criteria and K scores per step, the per-step means summing to
 * the reward), the scores are projected onto the reward, and each step of a trajectory that
 * decomposes its reward becomes one μ-SFT example in `mu-sft.jsonl`.
 *
 *   pnpm --filter @rubric/examples arco-annotate [out.jsonl]
 *
 * With `ARCO_TEACHER_URL` (an OpenAI-compatible base URL; `ARCO_TEACHER_MODEL`, `OPENAI_API_KEY`)
 * a real model annotates. Without it the teacher is a scripted local OpenAI-wire server, so the
 * script runs offline: the annotations are canned, the client, parsing and projection are real.
 */
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import {
  annotateTrajectory,
  type MuSftExample,
  muSftExamples,
  muSftJsonLines,
  type Trajectory,
} from "@rubric/arco-heads";
import type { LanguageModel } from "@rubric/core";
import { openAICompatible } from "@rubric/providers";
import { chatReply, startOpenAIChatServer } from "@rubric/providers/testing";

export const trajectories: Trajectory[] = [
  {
    id: "museum",
    task: "Which city hosts the museum founded by Ada Vell?",
    outcome: 1,
    turns: [
      {
        action: "Search[museum founded by Ada Vell]",
        observation: "The Vell Museum was founded by Ada Vell in 1921.",
        budgetLeft: 3,
      },
      {
        action: "Search[Vell Museum location]",
        observation: "The Vell Museum stands on the old quay of Lyon.",
        budgetLeft: 2,
      },
      { action: "Finish[Lyon]", observation: "Episode finished.", budgetLeft: 1 },
    ],
  },
  {
    id: "river",
    task: "Which river flows through the birthplace of Tomas Rein?",
    outcome: 0,
    turns: [
      { action: "Search[Tomas Rein]", observation: "Tomas Rein was a painter born in Passau.", budgetLeft: 3 },
      { action: "Finish[Danube only]", observation: "Episode finished.", budgetLeft: 2 },
    ],
  },
];

/** Annotates every trajectory with `teacher` and returns the μ-SFT examples, and why any trajectory gave none. */
export async function annotateToSft(
  teacher: LanguageModel,
  list: readonly Trajectory[],
): Promise<{ examples: MuSftExample[]; skipped: Record<string, string> }> {
  const examples: MuSftExample[] = [];
  const skipped: Record<string, string> = {};
  for (const trajectory of list) {
    const selection = muSftExamples(trajectory, await annotateTrajectory(teacher, trajectory));
    examples.push(...selection.examples);
    if (selection.skipped) skipped[trajectory.id] = selection.skipped;
  }
  return { examples, skipped };
}

/** What the scripted teacher answers: raw scores that do not quite sum to R, as real teachers write them. */
export const cannedAnnotations = [
  {
    steps: [
      {
        step: 1,
        criteria: ["Names the founder exactly", "Targets the first hop", "Short query"],
        scores: [0.8, 0.7, 0.6],
      },
      {
        step: 2,
        criteria: ["Follows up on step 1 evidence", "Resolves the second hop", "No repeated search"],
        scores: [0.6, 0.5, 0.4],
      },
      {
        step: 3,
        criteria: ["Answer is supported", "Answer is concise", "Finishes in budget"],
        scores: [0.1, 0.0, 0.2],
      },
    ],
  },
  {
    steps: [
      { step: 1, criteria: ["Finds the birthplace", "Targets the first hop", "Short query"], scores: [0.5, 0.4, 0.3] },
      {
        step: 2,
        criteria: ["Answer is supported", "Searches the second hop first", "Answer is exact"],
        scores: [-0.6, -0.8, -0.5],
      },
    ],
  },
];

async function main(): Promise<void> {
  const out = process.argv[2] ?? "mu-sft.jsonl";
  const url = process.env.ARCO_TEACHER_URL;
  const server = url
    ? undefined
    : await startOpenAIChatServer({ replies: cannedAnnotations.map((a) => chatReply.json(a)) });
  try {
    const teacher = openAICompatible({
      baseUrl: url ?? server!.url,
      model: process.env.ARCO_TEACHER_MODEL ?? "gpt-4o",
      ...(url ? {} : { apiKeyEnv: false as const }),
    });
    const { examples, skipped } = await annotateToSft(teacher, trajectories);
    writeFileSync(out, muSftJsonLines(examples));
    console.log(`${examples.length} μ-SFT examples written to ${out}`);
    for (const [id, why] of Object.entries(skipped)) console.log(`  ${id}: skipped (${why})`);
  } finally {
    await server?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
