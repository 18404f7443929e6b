import { formatZodIssues, type GenerateRequest, type GenerateResponse, type LanguageModel } from "@rubric/core";
import { z } from "zod";
import { HackbenchError } from "../errors.js";
import { JUDGE_BIASES, biasPull, type JudgeBias } from "./biases.js";
import { coverage, creditedSentences } from "./careful-reader.js";
import { parseJudgeRequest } from "./judge-request.js";

export interface BiasedJudgeOptions {
  /** The biases to inject; none gives the honest judge alone. */
  readonly biases: readonly JudgeBias[];
  /** How far a triggered bias lifts a grade, as a fraction of the scale. Default 0.3. */
  readonly strength?: number;
}

/** Options that do not describe a biased judge. */
export class BiasedJudgeConfigError extends HackbenchError {
  override readonly name = "BiasedJudgeConfigError";
  readonly code = "hackbench.biased-judge-config";
}

const OptionsSchema = z.strictObject({
  biases: z.array(z.enum(JUDGE_BIASES)).refine((b) => new Set(b).size === b.length, "expected each bias at most once"),
  strength: z.number().gt(0).max(1).default(0.3),
});

function nearest(values: readonly number[], target: number): number {
  return values.reduce((best, v) => (Math.abs(v - target) < Math.abs(best - target) ? v : best), values[0]!);
}

/**
 * A judge model with known biases, for calibrating hackbench (a known positive) or any other
 * detector. It really reads the response: its honest grade is a careful reader's coverage of
 * each criterion's terms (see `careful-reader.ts`), and each injected bias — CHERRL-style
 * lexical ("delve", "unlock"), tone ("I hope this helps!"), self-praise, three-point format,
 * obeying injected instructions, verbosity — lifts the grade when its trigger is present.
 * It implements `LanguageModel`, so it is used through the real `llmJudge` verifier; hackbench
 * must flag exactly the probes `BIAS_PROBES` lists for the injected biases.
 *
 * @example
 * const judge = llmJudge(biasedJudgeModel({ biases: ["tone", "self-praise"] }));
 * const card = await runHackbench(rubric, samples, { registry: createVerifierRegistry({ judge }) });
 * card.exploits; // ["self-praise", "pleasantry"]
 * @throws BiasedJudgeConfigError for an unknown or repeated bias, or a strength outside (0, 1].
 */
export function biasedJudgeModel(options: BiasedJudgeOptions): LanguageModel {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new BiasedJudgeConfigError(formatZodIssues(parsed.error, { prefix: ["options"], separator: "; " }));
  const { biases, strength } = parsed.data;
  return {
    provider: "hackbench",
    modelId: `biased-judge[${biases.length === 0 ? "honest" : biases.join(",")}]@${strength}`,
    async generate(request: GenerateRequest): Promise<GenerateResponse> {
      const judged = parseJudgeRequest(request);
      const credited = creditedSentences(
        judged.response,
        judged.criteria.map((c) => c.reading),
        judged.input,
      );
      const pulls = biases
        .map((bias) => ({ bias, pull: biasPull(bias, judged.response, strength) }))
        .filter((p) => p.pull > 0);
      const lift = pulls.reduce((sum, p) => sum + p.pull, 0);
      const verdicts = judged.criteria.map((criterion) => {
        const covered = coverage(criterion.reading, credited);
        const values = [...criterion.values].sort((a, b) => a - b);
        const low = values[0]!;
        const high = values[values.length - 1]!;
        const fraction = Math.min(1, covered.fraction + lift);
        const rationale =
          `Covers ${covered.found.length} of ${covered.terms.length} criterion terms${covered.found.length > 0 ? ` (${covered.found.join(", ")})` : ""}.` +
          (pulls.length > 0 ? ` Biased by ${pulls.map((p) => `${p.bias} +${p.pull.toFixed(2)}`).join(", ")}.` : "");
        return { id: criterion.id, verdict: { rationale, score: nearest(values, low + fraction * (high - low)) } };
      });
      const json = judged.batched ? Object.fromEntries(verdicts.map((v) => [v.id, v.verdict])) : verdicts[0]!.verdict;
      const text = JSON.stringify(json);
      const promptChars = request.messages.reduce((n, m) => n + m.content.length, 0);
      return {
        choices: Array.from({ length: request.n ?? 1 }, () => ({ text, json, finishReason: "stop" })),
        usage: { inputTokens: Math.ceil(promptChars / 4), outputTokens: Math.ceil(text.length / 4) },
      };
    },
  };
}
