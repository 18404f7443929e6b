import { z } from "zod";

/**
 * The messages between the host and a sandbox worker (`worker-source.ts`). The worker is
 * untyped JavaScript, so its replies are parsed here like any other input from outside.
 */

/** One rule run, as posted to a worker. */
export interface SandboxJob {
  readonly code: string;
  readonly input: string;
  readonly output: string;
  readonly files: readonly { readonly name: string; readonly mimeType?: string }[];
  readonly memoryBytes: number;
  /** Epoch milliseconds (`Date.now()`) after which the rule is interrupted. */
  readonly deadline: number;
}

/** Any number, NaN and ±Infinity included: judging them is the host's business, not the protocol's. */
const anyNumber = z.custom<number>((value) => typeof value === "number", "expected a number");

const PrimitiveSchema = z.union([
  z.object({ type: z.literal("number"), value: anyNumber }),
  z.object({ type: z.literal("string"), value: z.string() }),
  z.object({ type: z.literal("boolean"), value: z.boolean() }),
  z.object({ type: z.enum(["undefined", "null", "function", "symbol", "bigint"]) }),
]);

/** A value from inside the VM: primitives as themselves, anything else by its `typeof`. */
const LeafSchema = z.union([PrimitiveSchema, z.object({ type: z.literal("object") })]);
export type Leaf = z.output<typeof LeafSchema>;

/** What the rule returned; an object is read as its `score` and `rationale` properties only. */
const ReturnedSchema = z.union([
  PrimitiveSchema,
  z.object({ type: z.literal("object"), score: LeafSchema, rationale: LeafSchema }),
]);
export type Returned = z.output<typeof ReturnedSchema>;

/** `function`: the code defined `evaluate` and it was called; `expression`: the script's completion value was used. */
const FormSchema = z.enum(["function", "expression"]);
export type RuleForm = z.output<typeof FormSchema>;

const ThrownSchema = z.object({ name: z.string().optional(), message: z.string(), stack: z.string().optional() });
export type Thrown = z.output<typeof ThrownSchema>;

export const WorkerOutcomeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("returned"), form: FormSchema, value: ReturnedSchema }),
  /** `compile`: the code did not parse; `run`: it threw (or its promise rejected). */
  z.object({
    type: z.literal("threw"),
    phase: z.enum(["compile", "run"]),
    error: ThrownSchema,
    /** The heap reached its limit during the rule, whatever was thrown in the end. */
    outOfMemory: z.boolean(),
  }),
  /** The interrupt handler stopped the rule at its deadline. */
  z.object({ type: z.literal("timeout") }),
  /** `evaluate` returned a promise that nothing left could settle. */
  z.object({ type: z.literal("pending"), form: FormSchema }),
  /** The host side of QuickJS threw; the worker has dropped that engine for a new one. */
  z.object({ type: z.literal("crashed"), message: z.string() }),
]);
export type WorkerOutcome = z.output<typeof WorkerOutcomeSchema>;

export const WorkerReplySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({
    type: z.literal("done"),
    outcome: WorkerOutcomeSchema,
    /** Time the worker spent on the job: setting up the VM, compiling, running, reading the result. */
    durationMs: z.number(),
  }),
]);
export type WorkerReply = z.output<typeof WorkerReplySchema>;
