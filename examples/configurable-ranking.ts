/**
 * Test-time configurability: a stakeholder changes one weight, the ranking of candidates changes,
 * and the audit shows why, criterion by criterion — recomputed from stored verdicts with `reweight`,
 * without calling a single verifier again.
 *
 *   pnpm --filter @rubric/examples configurable
 */
import { fileURLToPath } from "node:url";
import { reweight, type FlatScore } from "@rubric/core";
import { gymTask, loadGdpval, simulatedStakeholder, simulatedWorker } from "@rubric/autointeract";
import { bestOfK } from "@rubric/gspo";
import { createVerifierRegistry } from "@rubric/verifiers";

const shared = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../shared/", import.meta.url));
const example = (await loadGdpval(`${shared}/data/gdpval`)).eval[2]!;
const task = gymTask(example.task);
const rubric = simulatedStakeholder(task, 6).utility;
const registry = createVerifierRegistry({ python: false, js: false });
const { candidates } = await bestOfK(simulatedWorker(), task, rubric, 6, { seed: 6, registry, guideWorker: false });

const ranking = (scores: FlatScore[]) =>
  scores.map((s, i) => ({ i, s: s.normalized })).sort((a, b) => b.s - a.s || a.i - b.i);
const before = candidates.map((c) => c.score);
const first = ranking(before);
console.log(`Task ${task.id} (${task.occupation}); ${rubric.criteria.length} criteria; 6 candidates.\n`);
console.log(`Ranking as written:  ${first.map((r) => `#${r.i} ${r.s.toFixed(3)}`).join("  ")}`);

// The stakeholder decides one criterion the leader fails matters most: weight 5 → 20.
const leader = first[0]!.i;
const edited = rubric.criteria.find((c) => before.some((s) => fraction(s, c.id) > fraction(before[leader]!, c.id)));
if (!edited)
  throw new Error(
    "the leader satisfies every criterion at least as well as every other candidate; no single edit can change the ranking",
  );
const weights = { [edited.id]: 20 };
const after = before.map((s) => reweight(s, weights));
const second = ranking(after);
console.log(`Edit: "${edited.text}" weight ${edited.weight} → 20`);
console.log(`Ranking after edit:  ${second.map((r) => `#${r.i} ${r.s.toFixed(3)}`).join("  ")}\n`);

function fraction(score: FlatScore, id: string): number {
  return score.criteria.find((c) => c.criterionId === id)?.fraction ?? 0;
}

// The audit: why the old leader and the new one swapped, criterion by criterion.
const newLeader = second[0]!.i;
console.log(`Audit: candidate #${leader} (old leader) vs #${newLeader} (new leader)`);
console.log(`${"criterion".padEnd(58)} ${"weight".padStart(9)}   #${leader} verdict  #${newLeader} verdict`);
for (const c of rubric.criteria) {
  const w = c.id === edited.id ? `${c.weight}→20` : String(c.weight);
  console.log(
    `${c.text.slice(0, 57).padEnd(58)} ${w.padStart(9)}   ${fraction(before[leader]!, c.id).toFixed(2).padStart(9)}  ${fraction(before[newLeader]!, c.id).toFixed(2).padStart(9)}`,
  );
}
console.log(
  `\nû before: #${leader} ${before[leader]!.normalized.toFixed(3)}, #${newLeader} ${before[newLeader]!.normalized.toFixed(3)}; after: #${leader} ${after[leader]!.normalized.toFixed(3)}, #${newLeader} ${after[newLeader]!.normalized.toFixed(3)} — no verifier was called for the edit.`,
);
