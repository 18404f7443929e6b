import { createRng, ndcgAtK, stagedToFlat, type FlatRubric, type LanguageModel, type StagedRubric } from "@rubric/core";
import {
  findGdpvalTask,
  gymTask,
  llmManager,
  llmStakeholder,
  llmWorker,
  loadGdpval,
  runEpisode,
  type GymTask,
} from "@rubric/autointeract";
import { createVerifierRegistry, llmJudge, scoreOutputs, type LlmJudgeOptions } from "@rubric/verifiers";
import { QUESTION_REPERTOIRE } from "@rubric/gspo";
import { managerRubrics } from "../evaluation.js";
import type { TrainedManagers } from "../training.js";
import { ARCANE_LLM_METHODS, type ArcaneLlmMethod, type ArcaneLlmTable, pairedMeans, type TaskRow } from "./table.js";

export interface ArcaneLlmOptions {
  readonly gdpvalDir: string;
  /** Plays stakeholder, manager, worker and judge. */
  readonly model: LanguageModel;
  /** The first this many eval tasks with a gold rubric. Default 2. Ignored when `taskIds` is given. */
  readonly tasks?: number;
  /**
   * Eval tasks by id or unique id prefix, in this order.
   * An entry that names no eval task, or several, throws `GdpvalTaskNotFoundError` / `GdpvalTaskAmbiguousError`.
   */
  readonly taskIds?: readonly string[];
  readonly ns?: readonly number[];
  readonly seed?: number;
  /** Questions the LLM manager may ask. Default 2. */
  readonly questionBudget?: number;
  /** Tokens per worker output. Default 256. */
  readonly maxTokens?: number;
  /** Judge settings (default batched mode). */
  readonly judge?: LlmJudgeOptions;
  /** How error verdicts of a rubric count. Default `fail`: no score unless every needed criterion was verified. */
  readonly errorsAs?: "fail" | "renormalize";
  /**
   * Managers trained by SFT and GSPO in the rubric gym (`trainArcaneManagers`), deployed here
   * with the LLM stakeholder answering their questions. Without them the SFT and GSPO rows are empty.
   */
  readonly managers?: TrainedManagers;
  readonly onProgress?: (event: { task: string; done: number; total: number; step: string }) => void;
  readonly signal?: AbortSignal;
}

type AnyRubric = FlatRubric | StagedRubric;

/** Index of the best proxy score among the first n that could be scored (ties → the first); -1 when none. */
function bestScored(proxy: readonly (number | null)[], n: number): number {
  let best = -1;
  for (let k = 0; k < n; k++) if (proxy[k] !== null && (best < 0 || proxy[k]! > proxy[best]!)) best = k;
  return best;
}

const message = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/**
 * The ARCANE pipeline with LLM roles on the real GDPval eval tasks: an LLM stakeholder holding
 * the gold rubric (as an outline); managers that ask and write a rubric — an untrained LLM
 * manager, and (given `managers`) the SFT and GSPO policies trained in the gym, whose questions
 * the LLM stakeholder answers; an LLM worker producing N candidates — unguided (No Rubric, a
 * seeded random pick), or guided and selected by a manager's rubric, or by the gold rubric
 * (Oracle); U* from the gold rubric scored by the real verifiers (sandboxed Python rules, the
 * model as judge). NDCG@8 ranks 8 unguided candidates by each rubric against U*. A score that
 * cannot be computed is null and its reason is listed, never a 0.
 */
export async function runArcaneWithModel(options: ArcaneLlmOptions): Promise<ArcaneLlmTable> {
  const seed = options.seed ?? 0;
  const ns = [...(options.ns ?? [1, 2, 4, 8])].sort((a, b) => a - b);
  const maxN = ns.at(-1)!;
  const errorsAs = options.errorsAs ?? "fail";
  const gdpval = await loadGdpval(options.gdpvalDir);
  const examples = options.taskIds
    ? options.taskIds.map((id) => findGdpvalTask(gdpval.eval, id, { pool: "eval" }))
    : gdpval.eval.slice(0, options.tasks ?? 2);
  const registry = createVerifierRegistry({ judge: llmJudge(options.model, { mode: "batched", ...options.judge }) });
  const worker = llmWorker(options.model, { maxTokens: options.maxTokens ?? 256 });
  const signal = options.signal ? { signal: options.signal } : {};
  const managers = options.managers;
  const tasks: TaskRow[] = [];
  for (const [i, example] of examples.entries()) {
    const started = performance.now();
    const task: GymTask = gymTask(example.task);
    const errors: string[] = [];
    const notes: string[] = [];
    /** Gold-rubric scorings of this task, and how many a failed gate stopped (by stage name). */
    const gold = { scored: 0, stopped: new Map<string, number>() };
    const progress = (step: string) => options.onProgress?.({ task: task.id, done: i, total: examples.length, step });
    /** Normalised scores of outputs under a rubric; null for an output whose score could not be computed. */
    const scores = async (rubric: AnyRubric, outputs: readonly string[], what: string): Promise<(number | null)[]> => {
      const scored = await scoreOutputs(
        rubric,
        outputs.map((output, k) => ({ id: `${what}-${k}`, input: task.prompt, output })),
        { registry, errorsAs, ...signal },
      );
      return scored.map((s) => {
        const errored = s.verdicts.flatMap((v) => (v.status === "error" ? [v] : []));
        // One line per output: its first error verdict and, when there is none, why it has no score.
        const why =
          s.score === null ? `no score (${(s.scoreError ?? "unknown").split("\n")[0]})` : "scored on the rest";
        if (errored.length > 0)
          errors.push(
            `${s.id}: ${errored.length} error verdict(s), first ${errored[0]!.criterionId}: ${(errored[0]!.error ?? "unknown").split("\n")[0]}; ${why}`,
          );
        else if (s.score === null) errors.push(`${s.id}: ${why}`);
        if (s.score === null) return null;
        if (rubric === example.rubric) {
          gold.scored += 1;
          if (s.score.kind === "staged" && s.score.stoppedAt !== null)
            gold.stopped.set(s.score.stoppedAt, (gold.stopped.get(s.score.stoppedAt) ?? 0) + 1);
        }
        return s.score.normalized;
      });
    };
    const stakeholder = llmStakeholder(options.model, { rubric: example.rubric, seed });
    const elicit = async (budget: number): Promise<{ rubric?: FlatRubric; questions: number }> => {
      const episode = await runEpisode({
        task,
        manager: llmManager(options.model, { questions: budget, seed }),
        stakeholder,
        questionBudget: budget,
        ...signal,
      });
      if (!episode.rubric)
        errors.push(
          `manager (budget ${budget}): ${episode.error?.name ?? "Error"}: ${episode.error?.message ?? "no rubric"}`,
        );
      return { rubric: episode.rubric ?? undefined, questions: episode.costs.questions };
    };
    progress("dialogue");
    const withDialogue = await elicit(options.questionBudget ?? 2);
    const noDialogue = await elicit(0);

    // The gym-trained managers: the LLM stakeholder answers the repertoire (each question the same
    // way whenever asked, as in the gym), and each policy sees only the replies to the questions it chose.
    const trained = { sft: undefined as FlatRubric | undefined, gspo: undefined as FlatRubric | undefined };
    const trainedQuestions = { sft: null as number | null, gspo: null as number | null };
    if (managers) {
      progress("trained managers: stakeholder replies");
      const replies: string[] = [];
      try {
        for (const text of QUESTION_REPERTOIRE) {
          const answer = await stakeholder.answer(
            { text },
            {
              task,
              exchanges: [],
              questionsLeft: QUESTION_REPERTOIRE.length,
              turnsLeft: QUESTION_REPERTOIRE.length + 1,
              ...signal,
            },
          );
          replies.push(answer.text);
        }
        const written = managerRubrics(managers, { task, replies });
        for (const method of ["sft", "gspo"] as const) {
          trained[method] = written[method].rubric;
          trainedQuestions[method] = written[method].questions;
        }
      } catch (error) {
        // Without every reply the trained managers would see a different dialogue: no rubric, listed.
        errors.push(`stakeholder (trained managers' questions): ${message(error)}`);
      }
    }

    const guides: Record<Exclude<ArcaneLlmMethod, "noRubric">, AnyRubric | undefined> = {
      manager: withDialogue.rubric,
      sft: trained.sft,
      gspo: trained.gspo,
      oracle: example.rubric,
    };
    const returns = Object.fromEntries(ARCANE_LLM_METHODS.map((m) => [m, ns.map(() => null)])) as unknown as Record<
      ArcaneLlmMethod,
      (number | null)[]
    >;
    const ndcg8: TaskRow["ndcg8"] = { noDialogue: null, manager: null, sft: null, gspo: null };
    for (const method of ARCANE_LLM_METHODS) {
      const guide = method === "noRubric" ? undefined : guides[method];
      if (method !== "noRubric" && !guide) continue; // its manager wrote no rubric: listed above
      progress(`worker: ${method}`);
      // The LLM worker reads a flat list of criteria; the gold staged rubric is shown as its rules.
      const flatGuide = guide && "stages" in guide ? stagedToFlat(guide).rubric : (guide as FlatRubric | undefined);
      let outputs: string[];
      try {
        outputs = (await worker.produce(task, flatGuide, maxN, { seed: seed * 1009 + i, ...signal })).map(
          (o) => o.text,
        );
      } catch (error) {
        // A worker that fails leaves this method without a return for the task; the others go on.
        errors.push(`worker (${method}): ${message(error)}`);
        continue;
      }
      progress(`scoring: ${method}`);
      const utility = await scores(example.rubric, outputs, `${method}-gold`);
      if (method === "noRubric") {
        returns.noRubric = ns.map((n) => utility[createRng(seed).fork(`pick:${task.id}:${n}`).int(n)] ?? null);
        // NDCG@8: how each rubric ranks 8 unguided candidates against U*.
        const pool = outputs.slice(0, 8);
        const truth = utility.slice(0, 8);
        if (pool.length >= 2 && truth.every((u) => u !== null) && truth.some((u) => u! > 0)) {
          const rankers: [keyof TaskRow["ndcg8"], FlatRubric | undefined][] = [
            ["noDialogue", noDialogue.rubric],
            ["manager", withDialogue.rubric],
            ["sft", trained.sft],
            ["gspo", trained.gspo],
          ];
          for (const [name, rubric] of rankers) {
            if (!rubric) continue;
            progress(`ndcg: ${name}`);
            const predicted = await scores(rubric, pool, `ndcg-${name}`);
            ndcg8[name] = predicted.some((p) => p === null)
              ? null
              : ndcgAtK(predicted as number[], truth as number[], 8);
          }
        } else if (pool.length >= 2 && truth.every((u) => u === 0)) {
          // Every candidate has U* 0: no ranking is better than another, and NDCG (0/0) is undefined.
          notes.push("NDCG@8 undefined: every unguided candidate has U* 0");
        }
        continue;
      }
      const proxy = method === "oracle" ? utility : await scores(guide!, outputs, `${method}-proxy`);
      // Best by the rubric among candidates it could score; none scorable → no return, not a 0.
      returns[method] = ns.map((n) => {
        const best = bestScored(proxy, n);
        return best < 0 ? null : utility[best]!;
      });
    }
    for (const [stage, count] of gold.stopped)
      notes.push(
        `gold gate ${JSON.stringify(stage)} failed for ${count} of ${gold.scored} scored outputs, stopping their U* at the gate's failure score`,
      );
    tasks.push({
      taskId: task.id,
      sector: task.sector,
      questions: { manager: withDialogue.questions, ...trainedQuestions },
      rubrics: { manager: withDialogue.rubric ?? null, sft: trained.sft ?? null, gspo: trained.gspo ?? null },
      returns,
      ndcg8,
      errors,
      notes,
      seconds: (performance.now() - started) / 1000,
    });
    options.onProgress?.({ task: task.id, done: i + 1, total: examples.length, step: "done" });
  }
  const { meanReturn, pairedTasks } = pairedMeans(
    tasks,
    ns,
    managers ? ARCANE_LLM_METHODS : ARCANE_LLM_METHODS.filter((m) => m !== "sft" && m !== "gspo"),
  );
  return {
    kind: "arcane-llm",
    model: options.model.modelId,
    seed,
    ns,
    errorsAs,
    training: managers
      ? {
          seed: managers.seed,
          sftEpochs: managers.config.sftEpochs,
          gspoBatches: managers.config.gspoBatches,
          objective: managers.config.objective,
          seconds: managers.trainingSeconds,
        }
      : null,
    tasks,
    meanReturn,
    pairedTasks,
    notes: [
      `LLM roles (${options.model.modelId}) on ${tasks.length} real GDPval eval task(s) with their gold rubrics. Means are paired: over the tasks where every method's pick could be scored at that N (${pairedTasks.n1} at N=1, ${pairedTasks.n8} at N=8).`,
      managers
        ? `SFT and GSPO are the in-process managers trained in the rubric gym (seed ${managers.seed}, ${managers.trainingSeconds.toFixed(0)} s on the 175 training tasks), deployed here: the LLM stakeholder answers their questions and the LLM worker follows their rubrics. The LLM manager is the model itself, untrained; training an LLM manager is the Python sidecar's job on a GPU.`
        : "No trained managers were given, so the SFT and GSPO rows are empty; the LLM manager is the model itself, untrained.",
      errorsAs === "renormalize"
        ? "Error verdicts of a rubric are dropped and its weights renormalised (--errors-as renormalize); a stage with nothing left to score still gives no score."
        : "Error verdicts are listed per task and never counted as 0; an output with one has no U*.",
      `The paper's column is GDPval with frontier models; this is ${options.model.modelId} on ${tasks.length} task(s), not a replication.`,
    ],
  };
}
