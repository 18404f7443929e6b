import { approximateTokens, mean, summarizeSeeds, wilcoxonSignedRank, type FlatRubric } from "@rubric/core";
import { writtenCriterionVerifier } from "@rubric/autointeract";
import type { ArcaneConfig } from "./config.js";
import { describeFixedCriterion } from "./controls.js";
import type { SeedResult, TaskResult } from "./evaluation.js";
import {
  ARCANE_METHODS,
  ARCANE_ROWS,
  methodLabels,
  PAPER,
  type ArcaneMethod,
  type ArcaneRow,
  type ArcaneTable,
  type MeanStd,
} from "./table.js";

function meanStd(values: readonly number[]): MeanStd {
  // The table's cells carry no count.
  const { mean, std } = summarizeSeeds(values);
  return { mean, std };
}

/** Least-squares slope of mean return against log2 N: the gain per doubling of N. */
function slopePerDoubling(ns: readonly number[], values: readonly number[]): number {
  const x = ns.map((n) => Math.log2(n));
  const mx = mean(x);
  const my = mean(values);
  const sxx = x.reduce((s, v) => s + (v - mx) ** 2, 0);
  return x.reduce((s, v, i) => s + (v - mx) * (values[i]! - my), 0) / sxx;
}

/** The table of a run from its seeds' results: means ± std over seeds, the tests per task, the notes. */
export function summarize(results: readonly SeedResult[], config: ArcaneConfig, seconds: number): ArcaneTable {
  const n1 = config.ns.indexOf(1);
  const n8 = config.ns.indexOf(8);
  const perSeed = (f: (t: TaskResult) => number) => results.map((r) => mean(r.tasks.map(f)));
  const methodReturn = (method: ArcaneRow, at: number) => meanStd(perSeed((t) => t.returns[method][at]!));
  const meanReturn = Object.fromEntries(
    ARCANE_ROWS.map((m) => [m, { n1: methodReturn(m, n1), n8: methodReturn(m, n8) }]),
  ) as ArcaneTable["meanReturn"];
  const curves = Object.fromEntries(
    ARCANE_ROWS.map((m) => [m, config.ns.map((_, k) => methodReturn(m, k))]),
  ) as ArcaneTable["scaling"]["curves"];
  const slopes = Object.fromEntries(
    ARCANE_ROWS.map((m) => [
      m,
      slopePerDoubling(
        config.ns,
        curves[m].map((c) => c.mean),
      ),
    ]),
  ) as ArcaneTable["scaling"]["slopePerDoubling"];
  // Per task at N = 8, averaged over seeds: the paired samples of the Wilcoxon test.
  const taskIds = results[0]!.tasks.map((t) => t.taskId);
  const perTask = (method: ArcaneRow) =>
    taskIds.map((_, i) => mean(results.map((r) => r.tasks[i]!.returns[method][n8]!)));
  // Identical returns on every task (a run with no GSPO batches) leave a test undefined; the
  // table says so rather than the whole run failing after its training.
  const gspoTasks = perTask("gspo");
  const against = (other: ArcaneRow) => {
    const otherTasks = perTask(other);
    const result = gspoTasks.some((g, i) => g !== otherTasks[i])
      ? wilcoxonSignedRank(gspoTasks, otherTasks)
      : { statistic: null, pValue: null, n: 0, method: "none" as const };
    return { ...result, meanDifference: mean(gspoTasks) - mean(otherTasks) };
  };
  const test = against("sft");
  const controls = {
    gspoNoQuestions: against("gspoNoQuestions"),
    gspoUninformative: against("gspoUninformative"),
    fixedRubric: against("fixedRubric"),
    sftOracle: against("sftOracle"),
  };
  const pText = test.pValue === null ? "not defined: no task differs" : test.pValue.toPrecision(2);
  const voiAt = (at: "n1" | "n8") => ({
    noDialogue: meanReturn.fixedRubric[at].mean,
    fullPreferences: meanReturn.oracle[at].mean,
    gap: meanReturn.oracle[at].mean - meanReturn.fixedRubric[at].mean,
  });
  const stats = (pick: (t: TaskResult) => FlatRubric, questions?: (t: TaskResult) => number) => {
    const all = results.flatMap((r) => r.tasks);
    const criteria = all.flatMap((t) => pick(t).criteria);
    // Each criterion read back from its text alone, as a verifier author's parser would.
    const read = criteria.map((c) => writtenCriterionVerifier(c.text));
    const written = all.flatMap((t) => {
      const held = new Set(t.rubrics.oracle.criteria.map((c) => c.text));
      return pick(t)
        .criteria.filter((c) => {
          const r = writtenCriterionVerifier(c.text);
          return !(r.kind === "rule" && r.template.startsWith("bank:"));
        })
        .map((c) => held.has(c.text));
    });
    return {
      criteriaPerRubric: mean(all.map((t) => pick(t).criteria.length)),
      tokensPerCriterion: criteria.length > 0 ? mean(criteria.map((c) => approximateTokens(c.text))) : 0,
      readAsRule: criteria.length > 0 ? read.filter((r) => r.kind === "rule").length / criteria.length : 0,
      writtenPerRubric: written.length / all.length,
      writtenHeld: written.length > 0 ? written.filter(Boolean).length / written.length : null,
      ...(questions ? { questionsAsked: mean(all.map(questions)) } : {}),
    };
  };
  const gspoStats = stats(
    (t) => t.rubrics.gspo,
    (t) => t.questions.gspo,
  );
  const sectors = [...new Set(results[0]!.tasks.map((t) => t.sector))].sort();
  const perSector = sectors.map((sector) => {
    const rows = results.flatMap((r) => r.tasks.filter((t) => t.sector === sector));
    return {
      sector,
      tasks: rows.length / results.length,
      ...(Object.fromEntries(ARCANE_METHODS.map((m) => [m, mean(rows.map((t) => t.returns[m][n8]!))])) as Record<
        ArcaneMethod,
        number
      >),
    };
  });
  const timing = results.map((r) => r.timing);
  const rewardMs = timing.reduce((s, t) => s + t.workerMs + t.verifierMs, 0);
  const policyMs = timing.reduce((s, t) => s + t.policyMs, 0);
  const gspo = results.map((r) => r.log.filter((e) => e.stage === "gspo"));
  const sft = results.map((r) => r.log.filter((e) => e.stage === "sft"));
  const gspoWins = meanReturn.gspo.n8.mean > meanReturn.sft.n8.mean;
  const trained = methodLabels({ config: { objective: config.objective } }).gspo;
  return {
    kind: "arcane-gym",
    simulation:
      "These numbers come from the rubric gym — simulated stakeholders, a simulated worker and a log-linear manager trained on this machine — not from the paper's LLMs; the paper's column is for orientation only.",
    config: { ...config, seeds: [...config.seeds], ns: [...config.ns] },
    tasks: { train: config.trainTasks ?? 175, eval: taskIds.length },
    meanReturn,
    scaling: { ns: [...config.ns], curves, slopePerDoubling: slopes },
    ndcg8: {
      noDialogue: meanStd(perSeed((t) => t.ndcg8.noDialogue)),
      sft: meanStd(perSeed((t) => t.ndcg8.sft)),
      gspo: meanStd(perSeed((t) => t.ndcg8.gspo)),
    },
    valueOfInformation: { n1: voiAt("n1"), n8: voiAt("n8") },
    epsSensitivity: [
      {
        epsLow: config.epsLow,
        epsHigh: config.epsHigh,
        clippedFraction: mean(gspo.flat().map((e) => (e as { clippedFraction: number }).clippedFraction)),
        n1: meanReturn.gspo.n1,
        n8: meanReturn.gspo.n8,
      },
      ...config.epsSweep.map(([epsLow, epsHigh], b) => ({
        epsLow,
        epsHigh,
        clippedFraction: mean(results.map((r) => r.epsClipped[b]!)),
        n1: meanStd(perSeed((t) => t.epsReturns[b]![n1]!)),
        n8: meanStd(perSeed((t) => t.epsReturns[b]![n8]!)),
      })),
    ],
    fixedRubrics: results.map((r) => ({
      seed: r.seed,
      criteria: r.fixed.criteria.map(describeFixedCriterion),
      trainReturns: [...r.fixed.trainReturns],
    })),
    wilcoxon: { gspoVsSft: test, gspoVsControls: controls },
    rubricStats: {
      sft: stats(
        (t) => t.rubrics.sft,
        (t) => t.questions.sft,
      ),
      gspo: gspoStats,
      oracle: stats((t) => t.rubrics.oracle),
      sftOracle: stats(
        (t) => t.rubrics.sftOracle,
        (t) => t.questions.sftOracle,
      ),
      fixedRubric: stats((t) => t.rubrics.fixedRubric),
    },
    perSector,
    training: results.map((r, i) => ({
      seed: r.seed,
      sftLoss:
        sft[i]!.length > 0
          ? { first: (sft[i]![0] as { loss: number }).loss, last: (sft[i]!.at(-1) as { loss: number }).loss }
          : null,
      gspoReward:
        gspo[i]!.length > 0
          ? {
              first: (gspo[i]![0] as { meanReward: number }).meanReward,
              last: (gspo[i]!.at(-1) as { meanReward: number }).meanReward,
            }
          : null,
    })),
    timing: {
      seconds,
      fixedRubricSeconds: timing.reduce((s, t) => s + t.fixedRubricSeconds, 0),
      trainingRollouts: timing.reduce((s, t) => s + t.rollouts, 0),
      rolloutsPerSecond: timing.reduce((s, t) => s + t.rollouts, 0) / ((rewardMs + policyMs) / 1000),
      verifierShare: timing.reduce((s, t) => s + t.verifierMs, 0) / (rewardMs + policyMs),
      workerShare: timing.reduce((s, t) => s + t.workerMs, 0) / (rewardMs + policyMs),
      policyShare: policyMs / (rewardMs + policyMs),
    },
    paper: PAPER,
    notes: [
      gspoWins
        ? `${trained} beats SFT at N=8 by ${(meanReturn.gspo.n8.mean - meanReturn.sft.n8.mean).toFixed(3)} (Wilcoxon p = ${pText} over ${taskIds.length} tasks).`
        : `${trained} does not beat SFT at N=8 here (${meanReturn.gspo.n8.mean.toFixed(3)} vs ${meanReturn.sft.n8.mean.toFixed(3)}, Wilcoxon p = ${pText}).`,
      `Clipping band ε = ${config.epsLow} / ${config.epsHigh}${config.epsLow === 3e-4 && config.epsHigh === 4e-4 ? " (the paper's)" : " (the paper's is 3e-4 / 4e-4)"}; ${(100 * mean(gspo.flat().map((e) => (e as { clippedFraction: number }).clippedFraction))).toFixed(0)}% of sequences were clipped at the last step of a batch, on average.`,
      dialogueNote(controls, trained),
      `Value of information: the oracle rubric's U* at N=8 is ${f3(voiAt("n8").fullPreferences)}, the best fixed rubric's (chosen on ${config.fixedRubricTasks} training tasks, no dialogue) ${f3(voiAt("n8").noDialogue)}: a gap of ${f3(voiAt("n8").gap)} that only asking can close.`,
      `The noisy-judge oracle flips each criterion's verdict with probability ${config.judgeNoise} when selecting (the worker still reads the exact rubric): ${f3(meanReturn.oracleNoisy.n8.mean)} at N=8 against ${f3(meanReturn.oracle.n8.mean)} with U* itself as the judge.`,
      "No Rubric picks one of the worker's N unguided outputs at random, so its return does not grow with N.",
      `The manager writes its criteria: the bank's 41 phrases, or a template whose slot copies a term of the task or the replies ('Addresses "<term>" from the brief'); each criterion's verifier is what \`writtenCriterionVerifier\` reads in its text. GSPO's rubrics hold ${gspoStats.writtenPerRubric.toFixed(2)} written criteria each, ${gspoStats.writtenHeld === null ? "none" : `${(100 * gspoStats.writtenHeld).toFixed(0)}%`} of them held by U*.`,
      `Costs are counted in tokens: λ_clarify = ${config.clarifyCostPerToken} per question token, λ_compute = ${config.computeCostPerToken} per criterion token.`,
      "The SFT targets are the gym's default policy manager's rubrics — a teacher's imperfect reconstruction of what the stakeholder said, not the oracle.",
    ],
  };
}

const f3 = (x: number) => x.toFixed(3);

/** The dialogue's measured share: the trained manager against asking nothing and hearing nothing useful. */
function dialogueNote(
  controls: Record<"gspoNoQuestions" | "gspoUninformative", { meanDifference: number; pValue: number | null }>,
  trained: string,
): string {
  const part = (c: { meanDifference: number; pValue: number | null }, what: string) =>
    `${c.meanDifference >= 0 ? "+" : ""}${f3(c.meanDifference)} over ${what} (Wilcoxon p = ${c.pValue === null ? "not defined" : c.pValue.toPrecision(2)})`;
  return `Does the dialogue help? ${trained} scores ${part(controls.gspoNoQuestions, "the same policy asking no questions")} and ${part(controls.gspoUninformative, "the same policy hearing only uninformative replies")} at N=8.`;
}
