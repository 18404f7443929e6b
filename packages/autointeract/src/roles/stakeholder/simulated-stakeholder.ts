import { createRng, shuffle, type FlatRubric, type Rng } from "@rubric/core";
import type { Question } from "../../dialogue/dialogue.js";
import { CRITERIA_BANK, briefCriterion, briefTerms, type BankCriterion } from "../../gym/bank.js";
import type { GymTask } from "../../gym/task.js";
import type { Answer, Stakeholder } from "./stakeholder.js";

export type Persona = "excellent" | "average" | "vague" | "terse";
type Family = BankCriterion["family"];
const FAMILIES: readonly Family[] = [
  "structure",
  "format",
  "length",
  "evidence",
  "numbers",
  "decision",
  "tone",
  "brief",
];

/** A stakeholder of the gym: its hidden utility U*(y) = Σ w*_j ν_j(y) is a flat rubric over bank criteria. */
export interface SimulatedStakeholder extends Stakeholder {
  readonly persona: Persona;
  readonly utility: FlatRubric;
}

/** Words that tell which family a question is about. */
const FAMILY_CUES: Record<Family, RegExp> = {
  structure: /section|structur|organi[sz]|layout|heading|order|outline/i,
  format: /list|bullet|table|format|layout|visual/i,
  length: /long|length|short|word|concise|detail|brief\b|page/i,
  // `\breferenc`: "preferences" contains "reference".
  evidence: /source|cite|citation|evidence|\breferenc|link|back(ed)? up/i,
  numbers: /number|figure|data|cost|budget|percent|quantif|metric|year|date/i,
  decision: /recommend|decision|conclu|action|verdict/i,
  tone: /tone|style|language|read|formal|voice|register|wording/i,
  brief: /focus|cover|topic|mention|address|include|subject/i,
};

function drawPersona(rng: Rng): Persona {
  const u = rng.next();
  return u < 0.2 ? "excellent" : u < 0.7 ? "average" : u < 0.9 ? "vague" : "terse";
}

/** The bank's exclusive groups (bullets, tables, length, …): criteria no one wants together. */
const GROUPS: readonly string[] = [...new Set(CRITERIA_BANK.flatMap((c) => (c.group === undefined ? [] : [c.group])))];
const FREE: readonly BankCriterion[] = CRITERIA_BANK.filter((c) => c.group === undefined);
/** How likely a stakeholder holds a side in an exclusive group, and wants a free-standing criterion. */
const HOLDS_GROUP = 0.5;
const WANTS_FREE = 0.2;
/** The brief terms a stakeholder picks its two from: the ones the worker knows how to address. */
const BRIEF_POOL = 6;
const MIN_CRITERIA = 6;
const MAX_CRITERIA = 14;

/**
 * Draws the stakeholder of a task for a seed. Its preferences are private: nothing about them
 * follows from the task's sector or text, and no fixed rubric serves the population well.
 *
 * - In each of the bank's exclusive groups (bullets, tables, length, readability, …) it takes a
 *   side with probability 1/2, and the side is drawn uniformly: as many stakeholders want no
 *   bullets as want five, so a rubric written without asking guesses.
 * - Each free-standing criterion (a section, a figure, a recommendation, …) it wants with
 *   probability 1/5.
 * - Two terms of the brief, drawn from the six the worker can address (not the two most
 *   frequent, which the task text alone would give away).
 *
 * 6–14 criteria, weights 1–5. Every draw reads only `seed` and the task's id, so the stakeholders
 * of the training and eval tasks are independent draws.
 */
export function simulatedStakeholder(task: GymTask, seed: number): SimulatedStakeholder {
  const rng = createRng(seed).fork(`stakeholder:${task.id}`);
  const chosen: BankCriterion[] = [];
  for (const group of GROUPS) {
    const members = CRITERIA_BANK.filter((c) => c.group === group);
    if (rng.next() < HOLDS_GROUP) chosen.push(members[rng.int(members.length)]!);
  }
  for (const c of FREE) if (rng.next() < WANTS_FREE) chosen.push(c);
  const pool = briefTerms(task.prompt, BRIEF_POOL);
  const brief = shuffle(pool, rng.fork("brief")).slice(0, 2).map(briefCriterion);
  // Within bounds: drop at random above the maximum, add free-standing ones below the minimum.
  let criteria = shuffle(chosen, rng.fork("order")).slice(0, MAX_CRITERIA - brief.length);
  const spare = shuffle(
    FREE.filter((c) => !criteria.includes(c)),
    rng.fork("spare"),
  );
  while (criteria.length + brief.length < MIN_CRITERIA && spare.length > 0) criteria = [...criteria, spare.pop()!];
  criteria = [...criteria, ...brief];
  const persona = drawPersona(rng);
  const utility: FlatRubric = {
    id: `${task.id}-utility`,
    title: `What the stakeholder of ${task.id} values`,
    criteria: criteria.map((c) => ({
      id: c.id,
      text: c.text,
      weight: 1 + rng.int(5),
      polarity: "reward",
      verifier: c.verifier,
    })),
  };
  const answerRng = rng.fork("answers");
  return {
    name: `sim-stakeholder:${persona}`,
    persona,
    utility,
    async answer(question: Question): Promise<Answer> {
      return { text: answerQuestion(question.text, utility, criteria, persona, answerRng.fork(question.text)) };
    },
  };
}

function lower(text: string): string {
  return text[0]!.toLowerCase() + text.slice(1);
}

const VAGUE: Record<Family, string> = {
  structure: "I like documents that are well organised.",
  format: "How it is laid out matters to me.",
  length: "Length matters, I suppose.",
  evidence: "I want to trust where things come from.",
  numbers: "Some hard numbers would help.",
  decision: "I need to know what to do at the end.",
  tone: "The tone should fit the audience.",
  brief: "Stay on the subject of the brief.",
};

/**
 * Answers in natural language from the utility: the criteria of the families a question names
 * (by its cues), or, for a broad question that names none, the one criterion it weighs most —
 * a broad question reveals a little, specific ones reveal more. Told according to the persona,
 * with noise: an average stakeholder now and then forgets a point or adds one it does not hold.
 */
function answerQuestion(
  text: string,
  utility: FlatRubric,
  chosen: readonly BankCriterion[],
  persona: Persona,
  rng: Rng,
): string {
  const asked = FAMILIES.filter((f) => FAMILY_CUES[f].test(text));
  const ranked = chosen
    .map((c, i) => ({ c, weight: utility.criteria[i]!.weight }))
    .filter(({ c }) => asked.length === 0 || asked.includes(c.family))
    .sort((a, b) => b.weight - a.weight);
  const relevant = asked.length === 0 ? ranked.slice(0, 1) : ranked;
  if (relevant.length === 0) return persona === "terse" ? "No." : "I don't have strong views on that.";
  const say = (c: BankCriterion, weight: number) =>
    `${weight >= 4 ? "Essential:" : weight === 3 ? "I'd like this:" : "Nice to have:"} it ${lower(c.text)}.`;
  switch (persona) {
    case "excellent":
      return relevant.map(({ c, weight }) => say(c, weight)).join(" ");
    case "terse":
      return `${relevant[0]!.c.text}.`;
    case "vague": {
      const hints = [...new Set(relevant.filter(() => rng.next() < 0.6).map(({ c }) => VAGUE[c.family]))];
      return hints.length > 0 ? hints.join(" ") : "Hard to say; you'll know it when you see it.";
    }
    case "average": {
      const told = relevant.filter(() => rng.next() < 0.7).map(({ c, weight }) => say(c, weight));
      if (rng.next() < 0.15) {
        const decoy = CRITERIA_BANK[rng.int(CRITERIA_BANK.length)]!;
        if (!chosen.includes(decoy)) told.push(`Also, ${lower(decoy.text)}, I think.`);
      }
      return told.length > 0 ? told.join(" ") : "Nothing specific comes to mind.";
    }
  }
}
