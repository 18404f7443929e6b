import { z } from "zod";
import { PolicyInputError } from "./errors.js";

/** Adam's moments and step count as a checkpoint stores them (JSON numbers round-trip doubles exactly). */
export const AdamStateSchema = z.strictObject({
  t: z.number().int().min(0),
  m: z.array(z.array(z.number())),
  v: z.array(z.array(z.number())),
});
export type AdamState = z.infer<typeof AdamStateSchema>;

/**
 * Adam over a list of parameter blocks, in place; it ascends (the gradients given are of an
 * objective to maximise). The in-process manager (`@rubric/gspo`) and ARCO's extractive policy
 * (`@rubric/rlxar`) both train with it, which is why it lives with the rest of the policy math.
 *
 * @example
 * const weights = Float64Array.from([0, 0]);
 * const adam = new Adam([weights], 0.1);
 * adam.ascend([Float64Array.from([1, -2])]);   // weights ≈ [0.1, -0.1]: Adam's first step is ±lr per coordinate
 */
export class Adam {
  #t = 0;
  #m: Float64Array[];
  #v: Float64Array[];
  constructor(
    readonly params: readonly Float64Array[],
    public learningRate: number,
    readonly beta1 = 0.9,
    readonly beta2 = 0.999,
    readonly eps = 1e-8,
  ) {
    this.#m = params.map((p) => new Float64Array(p.length));
    this.#v = params.map((p) => new Float64Array(p.length));
  }

  /** Moves the parameters along `grads`, at `learningRate` if given (else the optimiser's own). */
  ascend(grads: readonly Float64Array[], learningRate = this.learningRate): void {
    if (grads.length !== this.params.length || grads.some((g, b) => g.length !== this.params[b]!.length))
      throw new PolicyInputError(
        "grads",
        `expected blocks of ${this.params.map((p) => p.length).join("/")} values, got ${grads.map((g) => g.length).join("/")}`,
      );
    this.#t++;
    const c1 = 1 - this.beta1 ** this.#t;
    const c2 = 1 - this.beta2 ** this.#t;
    this.params.forEach((p, b) => {
      const g = grads[b]!;
      const m = this.#m[b]!;
      const v = this.#v[b]!;
      for (let i = 0; i < p.length; i++) {
        if (g[i] === 0 && m[i] === 0) continue;
        m[i] = this.beta1 * m[i]! + (1 - this.beta1) * g[i]!;
        v[i] = this.beta2 * v[i]! + (1 - this.beta2) * g[i]! * g[i]!;
        p[i]! += (learningRate * (m[i]! / c1)) / (Math.sqrt(v[i]! / c2) + this.eps);
      }
    });
  }

  /** The moments and step count, for checkpoints (JSON numbers round-trip doubles exactly). */
  state(): AdamState {
    return { t: this.#t, m: this.#m.map((a) => Array.from(a)), v: this.#v.map((a) => Array.from(a)) };
  }

  /** Puts back moments a checkpoint stored; they must have the parameters' block shapes. */
  restore(state: AdamState): void {
    const shapes = this.params.map((p) => p.length);
    if (
      state.m.length !== shapes.length ||
      state.v.length !== shapes.length ||
      state.m.some((m, b) => m.length !== shapes[b] || state.v[b]?.length !== shapes[b])
    )
      throw new PolicyInputError(
        "state",
        `optimiser state has blocks of ${state.m.map((m) => m.length).join("/")} values; the parameters have ${shapes.join("/")}`,
      );
    this.#t = state.t;
    this.#m = state.m.map((m) => Float64Array.from(m));
    this.#v = state.v.map((v) => Float64Array.from(v));
  }
}
