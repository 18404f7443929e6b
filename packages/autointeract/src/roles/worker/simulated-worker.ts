import { createRng, type FlatRubric, type Rng } from "@rubric/core";
import type { TaskBrief } from "../../dialogue/dialogue.js";
import { CRITERIA_BANK, briefCriterion, briefTerms, type BankCriterion } from "../../gym/bank.js";
import { SECTION_NAMES, renderDocument, type DocumentPlan } from "../../gym/document.js";
import { writtenCriterionVerifier } from "../../gym/written-criterion.js";
import type { Worker, WorkerOutput } from "./worker.js";

export interface SimulatedWorkerOptions {
  /** Probability of following each rubric criterion it understands. Default 0.7: best-of-N selection must matter. */
  readonly follow?: number;
}

function randomPlan(rng: Rng, terms: readonly string[]): DocumentPlan {
  const sections = SECTION_NAMES.filter(() => rng.next() < 0.45);
  return {
    sections: sections.length > 0 ? sections : ["Summary", "Analysis"],
    paragraphsPerSection: 1 + rng.int(3),
    style: rng.next() < 0.5 ? "plain" : "technical",
    bullets: rng.next() < 0.5 ? 0 : 1 + rng.int(6),
    tables: rng.next() < 0.6 ? 0 : 1 + rng.int(2),
    citations: rng.int(4),
    urls: rng.next() < 0.7 ? 0 : 1 + rng.int(2),
    percent: rng.next() < 0.5,
    currency: rng.next() < 0.4,
    year: rng.next() < 0.5,
    recommendation: rng.next() < 0.4,
    hedging: rng.next() < 0.4,
    informal: rng.next() < 0.2,
    briefTerms: terms.filter(() => rng.next() < 0.4),
  };
}

/**
 * The bank criterion a rubric criterion asks for: by its text (the gym's shared vocabulary), else
 * by what its wording means — the rule `writtenCriterionVerifier` reads in it, when that is a
 * bank criterion's rule or a term to address (any term, not only the brief's six).
 */
function understood(text: string): BankCriterion | undefined {
  const said = CRITERIA_BANK.find((c) => c.text === text);
  if (said !== undefined) return said;
  const read = writtenCriterionVerifier(text);
  if (read.kind !== "rule") return undefined;
  const rule = JSON.stringify(read.verifier);
  const bank = CRITERIA_BANK.find((c) => JSON.stringify(c.verifier) === rule);
  if (bank !== undefined) return bank;
  // Verifier specs are open records; a term to address is an `includes` of one string.
  const included = read.verifier.kind === "includes" ? read.verifier.terms : undefined;
  return Array.isArray(included) && included.length === 1 && typeof included[0] === "string"
    ? briefCriterion(included[0])
    : undefined;
}

/**
 * The gym's worker: writes real Markdown documents (sections, sentences, lists, tables,
 * citations, figures) from a randomly drawn plan. Given a rubric, it follows each criterion it
 * understands with probability `follow`, so outputs under the same rubric still differ and
 * choosing among them by the rubric pays. Output k of a call is drawn from seed and k alone.
 */
export function simulatedWorker(options: SimulatedWorkerOptions = {}): Worker {
  const follow = options.follow ?? 0.7;
  return {
    name: `sim-worker:${follow}`,
    async produce(task: TaskBrief, rubric: FlatRubric | undefined, n: number, { seed }): Promise<WorkerOutput[]> {
      const terms = briefTerms(task.prompt, 6);
      return Array.from({ length: n }, (_, k) => {
        const rng = createRng(seed).fork(`${task.id}:${k}`);
        let plan = randomPlan(rng, terms);
        for (const criterion of rubric?.criteria ?? []) {
          const known = understood(criterion.text);
          if (known && rng.next() < follow) plan = known.apply(plan);
        }
        return { text: renderDocument(plan, rng, task.prompt.split(/[.\n]/)[0]!.slice(0, 80).trim() || task.id) };
      });
    },
  };
}
