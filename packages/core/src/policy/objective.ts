// What GSPO, GRPO and Dr.GRPO share: their inputs, how those are validated, and the β·KL penalty.
import { accumulateK3 } from "./kl.js";
import { PolicyInputError, describeValue, requireFinite, requireNonNegative } from "./errors.js";
import { readSequenceBatch, type SequenceBatch, type TokenMask, type TokenMatrix } from "./sequences.js";

/** Arguments of the clipped policy objectives ({@link gspoObjective}, {@link grpoObjective}, …). */
export interface ClippedObjectiveInput {
  /** log π_θ of each sampled token under the policy being optimised, [sequence][token]. */
  readonly logpNew: TokenMatrix;
  /** log π_old of the same tokens under the policy that sampled them; same shape. */
  readonly logpOld: TokenMatrix;
  /** Which tokens count (0/1 or booleans); same shape; default all ones. */
  readonly mask?: TokenMask;
  /** One advantage per sequence, e.g. from `groupAdvantages`. */
  readonly advantages: readonly number[];
  /** Lower clip width: ratios below 1 − epsLow are clipped (≥ 0). */
  readonly epsLow?: number;
  /** Upper clip width: ratios above 1 + epsHigh are clipped (≥ 0). */
  readonly epsHigh?: number;
  /** Weight of the k3 KL penalty toward `logpRef` (≥ 0, default 0). */
  readonly beta?: number;
  /** log π_ref of the same tokens; required when beta > 0, and its KL is reported whenever given. */
  readonly logpRef?: TokenMatrix;
}

/** A validated {@link ClippedObjectiveInput} with its defaults filled in. */
export interface ParsedClippedObjective {
  readonly batch: SequenceBatch;
  readonly advantages: readonly number[];
  readonly epsLow: number;
  readonly epsHigh: number;
  readonly beta: number;
  readonly logpRef: TokenMatrix | undefined;
}

/** Validates the shared input of a clipped objective; `defaults` are that objective's clip widths. */
export function readClippedObjectiveInput(
  input: ClippedObjectiveInput,
  defaults: { readonly epsLow: number; readonly epsHigh: number },
): ParsedClippedObjective {
  if (typeof input !== "object" || input === null) {
    throw new PolicyInputError("input", `expected an object, got ${describeValue(input)}`);
  }
  const { logpNew, logpOld, mask, logpRef } = input;
  const companions = [{ name: "logpOld", rows: logpOld }];
  if (logpRef !== undefined) companions.push({ name: "logpRef", rows: logpRef });
  const batch = readSequenceBatch({ name: "logpNew", rows: logpNew }, companions, mask);

  const advantages: unknown = input.advantages;
  if (!Array.isArray(advantages)) {
    throw new PolicyInputError("advantages", `expected an array of numbers, got ${describeValue(advantages)}`);
  }
  if (advantages.length !== batch.size) {
    throw new PolicyInputError(
      "advantages",
      `expected ${batch.size} values (one per sequence of logpNew), got ${advantages.length}`,
    );
  }
  for (let k = 0; k < advantages.length; k++) requireFinite(`advantages[${k}]`, advantages[k]);

  const epsLow = requireNonNegative("epsLow", input.epsLow ?? defaults.epsLow);
  const epsHigh = requireNonNegative("epsHigh", input.epsHigh ?? defaults.epsHigh);
  const beta = requireNonNegative("beta", input.beta ?? 0);
  if (beta > 0 && logpRef === undefined) {
    throw new PolicyInputError("logpRef", `required when beta > 0 (beta is ${beta}), got nothing`);
  }
  return { batch, advantages: advantages as readonly number[], epsLow, epsHigh, beta, logpRef };
}

/**
 * The KL term of sequence k: returns its masked-mean k3 toward `logpRef`, and adds
 * β·∂KL/∂θ = β·(1 − exp(ref − θ)) / (K·|m_k|) into `gradRow` at unmasked tokens when β > 0.
 * Call only when `parsed.logpRef` is set.
 */
export function klPenaltyOfSequence(
  parsed: ParsedClippedObjective,
  k: number,
  logpRow: readonly number[],
  gradRow: number[],
): number {
  const count = parsed.batch.activeCounts[k]!;
  const scale = parsed.beta / (parsed.batch.size * count);
  const sum = accumulateK3(
    logpRow,
    parsed.logpRef![k]!,
    parsed.batch.masks[k]!,
    scale,
    parsed.beta > 0 ? gradRow : undefined,
    undefined,
  );
  return sum / count;
}
