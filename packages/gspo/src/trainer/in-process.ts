import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Adam, AdamStateSchema, createRng, klK3 } from "@rubric/core";
import { z } from "zod";
import { CheckpointError } from "../errors.js";
import { readCheckpointFile } from "./checkpoint-file.js";
import { sftStep } from "./sft.js";
import type { TokenPolicy } from "./token-policy.js";
import type { RolloutGroup, SampledSequence, StepMetrics, StepOptions, TrainerBackend } from "./backend.js";
import { clippedObjective } from "./objective.js";

const CheckpointSchema = z.strictObject({
  format: z.literal("token-policy/1"),
  signature: z.string(),
  parameters: z.array(z.array(z.number())),
  reference: z.array(z.array(z.number())).optional(),
  optimizer: AdamStateSchema,
});

/**
 * The in-process backend: a {@link TokenPolicy} (e.g. the log-linear `RubricPolicy`), Adam, and an
 * optional frozen KL reference, all in this process. Sequences are the policy's own tokens.
 */
export class InProcessBackend<Prompt, Policy extends TokenPolicy<Prompt> = TokenPolicy<Prompt>>
  implements TrainerBackend<Prompt>
{
  readonly kind = "in-process";
  #adam: Adam;
  #reference: Policy | undefined;
  /** Reference log-probs per rollout group: π_ref is frozen, so a batch's several steps share them. */
  #referenceLogprobs = new WeakMap<RolloutGroup<Prompt>, number[][]>();

  constructor(
    readonly policy: Policy,
    options: { learningRate?: number } = {},
  ) {
    this.#adam = new Adam(policy.parameters, options.learningRate ?? 0.05);
  }

  async sample(prompt: Prompt, n: number, options: { seed: number; temperature?: number }): Promise<SampledSequence[]> {
    const rng = createRng(options.seed);
    return Array.from({ length: n }, () => {
      if (this.policy.sampleWithLogProbs) return this.policy.sampleWithLogProbs(prompt, rng, options.temperature ?? 1);
      const tokens = this.policy.sample(prompt, rng, options.temperature ?? 1);
      return { tokens, logprobs: this.policy.tokenLogProbs(prompt, tokens) };
    });
  }

  async logprobs(prompt: Prompt, sequences: readonly (readonly number[])[]): Promise<number[][]> {
    return sequences.map((s) => this.policy.tokenLogProbs(prompt, s));
  }

  /**
   * The loss of rollout groups under the current parameters — the mean over groups of the clipped
   * objective (from @rubric/core), plus β·k3 KL to the reference when set — and its gradient
   * ∂(−loss)/∂θ: each token's coefficient is −∂loss/∂logp_new, chained through the policy's exact
   * per-token gradients.
   */
  gradient(
    groups: readonly RolloutGroup<Prompt>[],
    options: Omit<StepOptions, "learningRate">,
  ): StepMetrics & { readonly grads: Float64Array[] } {
    const grads = this.policy.parameters.map((p) => new Float64Array(p.length));
    let loss = 0;
    let clipped = 0;
    let kl = 0;
    const G = groups.length;
    const policy = this.policy;
    const traced = policy.trace !== undefined && policy.accumulateTrace !== undefined;
    for (const group of groups) {
      const traces = group.sequences.map((s) =>
        traced ? policy.trace!(group.prompt, s.tokens) : { logprobs: policy.tokenLogProbs(group.prompt, s.tokens) },
      );
      const logpNew = traces.map((t) => [...t.logprobs]);
      const result = clippedObjective(options.objective, {
        logpNew,
        logpOld: group.sequences.map((s) => [...s.logpOld]),
        advantages: group.sequences.map((s) => s.advantage),
        epsLow: options.epsLow,
        epsHigh: options.epsHigh,
      });
      const coefs = result.gradLogpNew.map((row) => row.map((g) => -g / G));
      loss += result.loss / G;
      clipped += result.clippedFraction / G;
      if (options.klCoef > 0 && this.#reference) {
        const reference = this.#reference;
        let logpRef = this.#referenceLogprobs.get(group);
        if (!logpRef)
          this.#referenceLogprobs.set(
            group,
            (logpRef = group.sequences.map((s) => reference.tokenLogProbs(group.prompt, s.tokens))),
          );
        const penalty = klK3({ logp: logpNew, logpRef });
        penalty.gradLogp.forEach((row, k) => row.forEach((g, t) => (coefs[k]![t]! -= (options.klCoef * g) / G)));
        loss += (options.klCoef * penalty.mean) / G;
        kl += penalty.mean / G;
      }
      group.sequences.forEach((s, k) =>
        traced
          ? policy.accumulateTrace!(traces[k]!, coefs[k]!, grads)
          : policy.accumulateGradient(group.prompt, s.tokens, coefs[k]!, grads),
      );
    }
    return { loss, clippedFraction: clipped, kl, grads };
  }

  /** One Adam step along {@link gradient}. */
  async step(groups: readonly RolloutGroup<Prompt>[], options: StepOptions): Promise<StepMetrics> {
    const { grads, ...metrics } = this.gradient(groups, options);
    this.#adam.ascend(grads, options.learningRate);
    return metrics;
  }

  async sftStep(
    examples: readonly { prompt: Prompt; tokens: readonly number[] }[],
    options: { learningRate: number },
  ): Promise<number> {
    return sftStep(this.policy, this.#adam, examples, options.learningRate);
  }

  async setReference(): Promise<void> {
    this.#reference = this.policy.clone();
    this.#referenceLogprobs = new WeakMap();
  }

  async resetOptimizer(): Promise<void> {
    this.#adam = new Adam(this.policy.parameters, this.#adam.learningRate);
  }

  /** Writes `policy.json` (parameters, reference, optimiser state) atomically: a crash mid-write leaves the previous file. */
  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    const checkpoint: z.input<typeof CheckpointSchema> = {
      format: "token-policy/1",
      signature: this.policy.signature(),
      parameters: this.policy.parameters.map((p) => Array.from(p)),
      ...(this.#reference ? { reference: this.#reference.parameters.map((p) => Array.from(p)) } : {}),
      optimizer: this.#adam.state(),
    };
    const file = join(dir, "policy.json");
    await writeFile(`${file}.tmp`, JSON.stringify(checkpoint));
    await rename(`${file}.tmp`, file);
  }

  async load(dir: string): Promise<void> {
    const file = join(dir, "policy.json");
    const c = await readCheckpointFile(file, CheckpointSchema);
    const p = this.policy;
    if (c.signature !== p.signature())
      throw new CheckpointError(
        `${file}: written by a policy with another shape (${c.signature}); this one is ${p.signature()}`,
      );
    const assign = (target: Policy, blocks: number[][]) => {
      if (
        blocks.length !== target.parameters.length ||
        blocks.some((b, i) => b.length !== target.parameters[i]!.length)
      )
        throw new CheckpointError(`${file}: parameter blocks do not match the policy's`);
      blocks.forEach((b, i) => target.parameters[i]!.set(b));
    };
    assign(p, c.parameters);
    this.#referenceLogprobs = new WeakMap();
    if (c.reference) {
      const reference = p.clone();
      assign(reference, c.reference);
      this.#reference = reference;
    } else this.#reference = undefined;
    try {
      this.#adam.restore(c.optimizer);
    } catch (error) {
      throw new CheckpointError(`${file}: optimizer: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {}
}
