import { createRng, ndcgAtK, stagedToFlat, type FlatRubric, type LanguageModel, type StagedRubric } from "@rubric/core";
import { gymTask, llmManager, llmStakeholder, llmWorker, loadGdpval, runEpisode, type GymTask } from "@rubric/autointeract";
import { createVerifierRegistry, llmJudge, scoreOutputs } from "@rubric/verifiers";
import { z } from "zod";

const nullableNumbers = z.array(z.number().nullable());

/** `table.json` of `rubric repro arcane --provider`: LLM roles on real GDPval eval tasks, scored against the gold rubrics. */
export const ArcaneLlmTableSchema = z.strictObject({
  kind: z.literal("arcane-llm"),
  model: z.string(),
  seed: z.number().int(),
  ns: z.array(z.number().int().positive()),
  tasks: z.array(
    z.strictObject({
      taskId: z.string(),
      sector: z.string(),
      questions: z.number().int(),
      rubric: z.unknown().nullable(),
      /** U* (the gold rubric's normalised score) of the selected output per N; null where it could not be scored. */
      returns: z.strictObject({ noRubric: nullableNumbers, manager: nullableNumbers, oracle: nullableNumbers }),
      ndcg8: z.strictObject({ noDialogue: z.number().nullable(), manager: z.number().nullable() }),
      errors: z.array(z.string()),
    }),
  ),
  meanReturn: z.strictObject({
    noRubric: z.strictObject({ n1: z.number().nullable(), n8: z.number().nullable() }),
    manager: z.strictObject({ n1: z.number().nullable(), n8: z.number().nullable() }),
    oracle: z.strictObject({ n1: z.number().nullable(), n8: z.number().nullable() }),
  }),
  notes: z.array(z.string()),
});
export type ArcaneLlmTable = z.infer<typeof ArcaneLlmTableSchema>;

export interface ArcaneLlmOptions {
  readonly gdpvalDir: string;
  /** Plays stakeholder, manager, worker and judge. */
  readonly model: LanguageModel;
  /** The first this many eval tasks with a gold rubric. Default 2. */
  readonly tasks?: number;
  readonly ns?: readonly number[];
  readonly seed?: number;
  /** Questions the manager may ask. Default 2. */
  readonly questionBudget?: number;
  /** Tokens per worker output. Default 256. */
  readonly maxTokens?: number;
  readonly onProgress?: (event: { task: string; done: number; total: number; step: string }) => void;
  readonly signal?: AbortSignal;
}

/** The manager rubric flattened into the gold rubric's terms, or the gold staged rubric itself. */
type AnyRubric = FlatRubric | StagedRubric;

/**
 * The ARCANE pipeline with LLM roles on the real GDPval eval tasks: an LLM stakeholder holding
 * the gold rubric (as an outline), an untrained LLM manager that asks and writes a rubric, an LLM
 * worker producing N candidates — unguided (No Rubric, a seeded random pick), guided and selected
 * by the manager's rubric, or by the gold rubric (Oracle) — and U* from the gold rubric scored by
 * the real verifiers (sandboxed Python rules, the model as judge). NDCG@8 ranks 8 unguided
 * candidates by the manager's rubric with and without dialogue. Nothing is trained: SFT and GSPO
 * of an LLM manager need the Python sidecar on a GPU. A score that cannot be computed is null
 * and its reason is listed, never a 0.
 */
export async function runArcaneWithModel(options: ArcaneLlmOptions): Promise<ArcaneLlmTable> {
  const seed = options.seed ?? 0;
  const ns = [...(options.ns ?? [1, 2, 4, 8])].sort((a, b) => a - b);
  const maxN = ns.at(-1)!;
  const gdpval = await loadGdpval(options.gdpvalDir);
  const examples = gdpval.eval.slice(0, options.tasks ?? 2);
  const registry = createVerifierRegistry({ judge: llmJudge(options.model, { mode: "batched" }) });
  const worker = llmWorker(options.model, { maxTokens: options.maxTokens ?? 256 });
  const signal = options.signal ? { signal: options.signal } : {};
  const tasks: ArcaneLlmTable["tasks"] = [];
  for (const [i, example] of examples.entries()) {
    const task: GymTask = gymTask(example.task);
    const errors: string[] = [];
    const progress = (step: string) => options.onProgress?.({ task: task.id, done: i, total: examples.length, step });
    /** Normalised scores of outputs under a rubric; null for an output whose score could not be computed. */
    const scores = async (rubric: AnyRubric, outputs: readonly string[], what: string): Promise<(number | null)[]> => {
      const scored = await scoreOutputs(rubric, outputs.map((output, k) => ({ id: `${what}-${k}`, input: task.prompt, output })), { registry, errorsAs: "fail", ...signal });
      return scored.map((s) => {
        const errored = s.verdicts.filter((v) => v.status === "error");
        if (errored.length > 0) errors.push(`${s.id}: ${errored.length} error verdict(s), first: ${(errored[0] as { error?: { message?: string } }).error?.message ?? "unknown"}`);
        if (s.score === null) return null;
        return s.score.normalized;
      });
    };
    const elicit = async (budget: number): Promise<{ rubric?: FlatRubric; questions: number }> => {
      const episode = await runEpisode({ task, manager: llmManager(options.model, { questions: budget, seed }), stakeholder: llmStakeholder(options.model, { rubric: example.rubric, seed }), questionBudget: budget, ...signal });
      if (!episode.rubric) errors.push(`manager (budget ${budget}): ${episode.error?.name ?? "Error"}: ${episode.error?.message ?? "no rubric"}`);
      return { ...(episode.rubric ? { rubric: episode.rubric } : {}), questions: episode.costs.questions };
    };
    progress("dialogue");
    const withDialogue = await elicit(options.questionBudget ?? 2);
    const noDialogue = await elicit(0);
    const returns = { noRubric: [] as (number | null)[], manager: [] as (number | null)[], oracle: [] as (number | null)[] };
    const pick = (utility: readonly (number | null)[], proxy: readonly (number | null)[] | undefined, n: number) => {
      if (!proxy) return utility[createRng(seed).fork(`pick:${task.id}:${n}`).int(n)] ?? null;
      // Best by the rubric among candidates it could score; none scorable → no return, not a 0.
      let best = -1;
      for (let k = 0; k < n; k++) if (proxy[k] !== null && (best < 0 || proxy[k]! > proxy[best]!)) best = k;
      return best < 0 ? null : utility[best]!;
    };
    let ndcg8 = { noDialogue: null as number | null, manager: null as number | null };
    for (const method of ["noRubric", "manager", "oracle"] as const) {
      progress(`worker: ${method}`);
      const guide = method === "noRubric" ? undefined : method === "manager" ? withDialogue.rubric : example.rubric;
      if (method === "manager" && !guide) {
        returns.manager = ns.map(() => null);
        continue;
      }
      // The LLM worker reads a flat list of criteria; the gold staged rubric is shown as its rules.
      const flatGuide = guide && "stages" in guide ? stagedToFlat(guide).rubric : (guide as FlatRubric | undefined);
      let outputs: string[];
      try {
        outputs = (await worker.produce(task, flatGuide, maxN, { seed: seed * 1009 + i, ...signal })).map((o) => o.text);
      } catch (error) {
        // A worker that fails leaves this method without a return for the task; the others go on.
        errors.push(`worker (${method}): ${(error as Error).name}: ${(error as Error).message}`);
        returns[method] = ns.map(() => null);
        continue;
      }
      progress(`scoring: ${method}`);
      const utility = await scores(example.rubric, outputs, `${method}-gold`);
      const proxy = method === "noRubric" ? undefined : method === "oracle" ? utility : await scores(guide!, outputs, `${method}-proxy`);
      returns[method] = ns.map((n) => pick(utility, proxy, n));
      if (method === "noRubric") {
        const pool = outputs.slice(0, 8);
        const truth = utility.slice(0, 8);
        const ndcg = async (rubric: FlatRubric | undefined, what: string) => {
          if (!rubric || truth.some((u) => u === null) || pool.length < 2) return null;
          const predicted = await scores(rubric, pool, what);
          return predicted.some((p) => p === null) ? null : ndcgAtK(predicted as number[], truth as number[], 8);
        };
        ndcg8 = { noDialogue: await ndcg(noDialogue.rubric, "ndcg-no-dialogue"), manager: await ndcg(withDialogue.rubric, "ndcg-manager") };
      }
    }
    tasks.push({ taskId: task.id, sector: task.sector, questions: withDialogue.questions, rubric: withDialogue.rubric ?? null, returns, ndcg8, errors });
    options.onProgress?.({ task: task.id, done: i + 1, total: examples.length, step: "done" });
  }
  const at = (method: keyof ArcaneLlmTable["tasks"][number]["returns"], n: number) => {
    const k = ns.indexOf(n);
    const values = tasks.map((t) => (k < 0 ? null : t.returns[method][k]!)).filter((v): v is number => v !== null);
    return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  };
  const meanReturn = Object.fromEntries((["noRubric", "manager", "oracle"] as const).map((m) => [m, { n1: at(m, 1), n8: at(m, 8) }])) as ArcaneLlmTable["meanReturn"];
  return {
    kind: "arcane-llm",
    model: options.model.modelId,
    seed,
    ns,
    tasks,
    meanReturn,
    notes: [
      `LLM roles (${options.model.modelId}) on ${tasks.length} real GDPval eval task(s) with their gold rubrics; means are over the tasks whose pick could be scored.`,
      "The manager is untrained: SFT and GSPO of an LLM manager run in the Python sidecar (python/rubric-trainer) on a GPU, so those rows are not measured here.",
      "Error verdicts are listed per task and never counted as 0.",
    ],
  };
}

/** Markdown for an LLM-roles run. */
export function arcaneLlmMarkdown(table: ArcaneLlmTable): string {
  const f = (v: number | null) => (v === null ? "—" : v.toFixed(3));
  const lines = [`# ARCANE with LLM roles (${table.model})`, "", ...table.notes.map((n) => `> ${n}`), "", "## Mean return (gold-rubric U* of the selected output)", "", "| Method | N=1 | N=8 |", "|---|---|---|"];
  lines.push(`| No Rubric | ${f(table.meanReturn.noRubric.n1)} | ${f(table.meanReturn.noRubric.n8)} |`);
  lines.push(`| LLM manager (untrained) | ${f(table.meanReturn.manager.n1)} | ${f(table.meanReturn.manager.n8)} |`);
  lines.push(`| SFT / GSPO | not trained here | not trained here |`);
  lines.push(`| Oracle (gold rubric) | ${f(table.meanReturn.oracle.n1)} | ${f(table.meanReturn.oracle.n8)} |`);
  lines.push("", "## Per task", "", `| Task | sector | questions | ${table.ns.map((n) => `manager N=${n}`).join(" | ")} | NDCG@8 no dialogue | NDCG@8 manager | errors |`, `|---|---|---|${table.ns.map(() => "---|").join("")}---|---|---|`);
  for (const t of table.tasks) lines.push(`| ${t.taskId.slice(0, 8)} | ${t.sector} | ${t.questions} | ${t.returns.manager.map(f).join(" | ")} | ${f(t.ndcg8.noDialogue)} | ${f(t.ndcg8.manager)} | ${t.errors.length} |`);
  const errors = table.tasks.flatMap((t) => t.errors.map((e) => `- ${t.taskId.slice(0, 8)}: ${e}`));
  if (errors.length > 0) lines.push("", "## Errors", "", ...errors);
  return `${lines.join("\n")}\n`;
}
