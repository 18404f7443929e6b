import { createRng, type FlatRubric, type Rng } from "@rubric/core";
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
  /** The families this stakeholder's sector tends to care about (what a learner can pick up). */
  readonly sectorFamilies: readonly Family[];
}

/** Words that tell which family a question is about. */
const FAMILY_CUES: Record<Family, RegExp> = {
  structure: /section|structur|organi[sz]|layout|heading|order|outline/i,
  format: /list|bullet|table|format|layout|visual/i,
  length: /long|length|short|word|concise|detail|brief\b|page/i,
  evidence: /source|cite|citation|evidence|reference|link|back(ed)? up/i,
  numbers: /number|figure|data|cost|budget|percent|quantif|metric|year|date/i,
  decision: /recommend|decision|conclu|action|verdict/i,
  tone: /tone|style|language|read|formal|voice|register|wording/i,
  brief: /focus|cover|topic|mention|address|include|subject/i,
};

function drawPersona(rng: Rng): Persona {
  const u = rng.next();
  return u < 0.2 ? "excellent" : u < 0.7 ? "average" : u < 0.9 ? "vague" : "terse";
}

/**
 * Draws the stakeholder of a task for a world seed. Its sector (shared with other tasks of the
 * sector under the same seed) makes some families of criteria three times likelier; the rest are
 * idiosyncratic, so only dialogue reveals them. 6–14 criteria, weights 1–5, no two from one
 * exclusive group, two of the task's own brief terms among the candidates.
 */
export function simulatedStakeholder(task: GymTask, seed: number): SimulatedStakeholder {
  const world = createRng(seed);
  const sectorRng = world.fork(`sector:${task.sector}`);
  const sectorFamilies = [...FAMILIES];
  // Fisher–Yates with the sector's stream: its three favourite families.
  for (let i = sectorFamilies.length - 1; i > 0; i--) {
    const j = sectorRng.int(i + 1);
    [sectorFamilies[i], sectorFamilies[j]] = [sectorFamilies[j]!, sectorFamilies[i]!];
  }
  const favourites = sectorFamilies.slice(0, 3);
  const rng = world.fork(`task:${task.id}`);
  const candidates = [...CRITERIA_BANK, ...briefTerms(task.prompt, 2).map(briefCriterion)];
  const size = 6 + rng.int(9);
  const chosen: BankCriterion[] = [];
  const groups = new Set<string>();
  while (chosen.length < size) {
    const open = candidates.filter((c) => !chosen.includes(c) && (c.group === undefined || !groups.has(c.group)));
    if (open.length === 0) break;
    const weights = open.map((c) => (favourites.includes(c.family) ? 3 : 1));
    let u = rng.next() * weights.reduce((a, b) => a + b, 0);
    let k = 0;
    while (u >= weights[k]!) u -= weights[k++]!;
    const c = open[k]!;
    chosen.push(c);
    if (c.group) groups.add(c.group);
  }
  const persona = drawPersona(rng);
  const utility: FlatRubric = {
    id: `${task.id}-utility`,
    title: `What the stakeholder of ${task.id} values`,
    criteria: chosen.map((c) => ({
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
    sectorFamilies: favourites,
    async answer(question: Question): Promise<Answer> {
      return { text: answerQuestion(question.text, utility, chosen, persona, answerRng.fork(question.text)) };
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
 * Answers in natural language from the utility: which criteria the question touches (by family
 * cues; a general question touches all), told according to the persona, with noise — an average
 * stakeholder now and then forgets a point or adds one it does not really hold.
 */
function answerQuestion(
  text: string,
  utility: FlatRubric,
  chosen: readonly BankCriterion[],
  persona: Persona,
  rng: Rng,
): string {
  const asked = FAMILIES.filter((f) => FAMILY_CUES[f].test(text));
  const relevant = chosen
    .map((c, i) => ({ c, weight: utility.criteria[i]!.weight }))
    .filter(({ c }) => asked.length === 0 || asked.includes(c.family))
    .sort((a, b) => b.weight - a.weight);
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
