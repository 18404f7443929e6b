/**
 * The gym's controlled language: the kinds of fictional entity, the typed relations between them,
 * and the sentence, noun phrase and question each relation is written as. The generator writes
 * with it and the gym policy reads with it, so the two can never disagree about what a paragraph
 * or a question says. Everything here is a simulation: no entity or relation refers to the real
 * world.
 */

/** The kinds of fictional entity a world holds. */
export type EntityType = "person" | "city" | "country" | "company" | "university" | "film";

export type RelationKey =
  | "bornIn"
  | "studiedAt"
  | "mentoredBy"
  | "liesIn"
  | "foundedBy"
  | "headquarteredIn"
  | "campusIn"
  | "directedBy"
  | "producedBy"
  | "ledBy";

/**
 * A typed relation and its three written forms. `sentence` states it in a paragraph, subject
 * first (`{s}` and `{o}` are the names); `phrase` names its object from its subject inside a
 * longer question (`{x}` is the inner phrase or the name); `question` asks for its object as the
 * outermost relation. `cues` are words only this relation's phrase and question use, so a reader
 * counts a question's relations by its cues.
 */
export interface Relation {
  readonly key: RelationKey;
  readonly subject: EntityType;
  readonly object: EntityType;
  readonly sentence: string;
  readonly phrase: string;
  readonly question: string;
  readonly cues: readonly string[];
}

export const GYM_RELATIONS: readonly Relation[] = [
  {
    key: "bornIn",
    subject: "person",
    object: "city",
    sentence: "{s} was born in {o}.",
    phrase: "the city where {x} was born",
    question: "In which city was {x} born?",
    cues: ["born"],
  },
  {
    key: "studiedAt",
    subject: "person",
    object: "university",
    sentence: "{s} studied at {o}.",
    phrase: "the university where {x} studied",
    question: "At which university did {x} study?",
    cues: ["studied", "study"],
  },
  {
    key: "mentoredBy",
    subject: "person",
    object: "person",
    sentence: "{s} was mentored by {o}.",
    phrase: "the mentor of {x}",
    question: "Who mentored {x}?",
    cues: ["mentor", "mentored"],
  },
  {
    key: "liesIn",
    subject: "city",
    object: "country",
    sentence: "{s} lies in {o}.",
    phrase: "the country in which {x} lies",
    question: "In which country does {x} lie?",
    cues: ["lies", "lie"],
  },
  {
    key: "foundedBy",
    subject: "company",
    object: "person",
    sentence: "{s} was founded by {o}.",
    phrase: "the founder of {x}",
    question: "Who founded {x}?",
    cues: ["founder", "founded"],
  },
  {
    key: "headquarteredIn",
    subject: "company",
    object: "city",
    sentence: "{s} is headquartered in {o}.",
    phrase: "the city where {x} is headquartered",
    question: "In which city is {x} headquartered?",
    cues: ["headquartered"],
  },
  {
    key: "campusIn",
    subject: "university",
    object: "city",
    sentence: "{s} has its campus in {o}.",
    phrase: "the city where {x} has its campus",
    question: "In which city does {x} have its campus?",
    cues: ["campus"],
  },
  {
    key: "directedBy",
    subject: "film",
    object: "person",
    sentence: "{s} was directed by {o}.",
    phrase: "the director of {x}",
    question: "Who directed {x}?",
    cues: ["director", "directed"],
  },
  {
    key: "producedBy",
    subject: "film",
    object: "company",
    sentence: "{s} was produced by {o}.",
    phrase: "the company that produced {x}",
    question: "Which company produced {x}?",
    cues: ["produced"],
  },
  {
    key: "ledBy",
    subject: "country",
    object: "person",
    sentence: "{s} is led by {o}.",
    phrase: "the leader of {x}",
    question: "Who leads {x}?",
    cues: ["leader", "leads"],
  },
];

/**
 * A name as the gym writes every name: two capitalised words of plain letters ("Kalen Muro",
 * "Zorvex Labs"). No template word is capitalised except a sentence's first, and no sentence
 * starts with two capitalised words unless they are a name, so this pattern finds exactly the
 * names in any gym text.
 */
const NAME = "[A-Z][a-z]+ [A-Z][a-z]+";
const NAMES = new RegExp(`(?<![A-Za-z])${NAME}(?![A-Za-z])`, "gu");

/** Every name in a text, in order of appearance, repeats included. */
export function namesIn(text: string): string[] {
  return text.match(NAMES) ?? [];
}

export function fillSentence(relation: Relation, subject: string, object: string): string {
  return relation.sentence.replace("{s}", subject).replace("{o}", object);
}

/** The question for a chain of relations, innermost first, starting from `entity`. */
export function chainQuestion(relations: readonly Relation[], entity: string): string {
  let inner = entity;
  relations.slice(0, -1).forEach((relation) => {
    inner = relation.phrase.replace("{x}", inner);
  });
  return relations.at(-1)!.question.replace("{x}", inner);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");

const SENTENCE_READERS = GYM_RELATIONS.map((relation) => ({
  relation,
  pattern: new RegExp(
    `^${escapeRegExp(relation.sentence).replace(escapeRegExp("{s}"), `(${NAME})`).replace(escapeRegExp("{o}"), `(${NAME})`)}`,
    "u",
  ),
}));

/** What a paragraph's first sentence states. */
export interface StatedRelation {
  readonly subject: string;
  readonly relation: RelationKey;
  readonly object: string;
}

/**
 * The relation a gym paragraph states in its first sentence, or undefined for any other text (the
 * environment's notes, a paragraph of another world).
 *
 * @example
 * readStatedRelation("Kalen Muro was born in Vost Harbor. The person kept bees.");
 * // { subject: "Kalen Muro", relation: "bornIn", object: "Vost Harbor" }
 */
export function readStatedRelation(text: string): StatedRelation | undefined {
  for (const { relation, pattern } of SENTENCE_READERS) {
    const match = pattern.exec(text);
    if (match !== null) return { subject: match[1]!, relation: relation.key, object: match[2]! };
  }
  return undefined;
}

/**
 * How many relations a gym question chains: each relation's cue words are its own, so the count
 * of relations whose cue is among the question's lower-case words is the hop count H.
 *
 * @example
 * questionHops("In which country does the city where the founder of Zorvex Labs was born lie?"); // 3
 */
export function questionHops(question: string): number {
  const words = new Set(question.split(/[^a-z]+/u));
  return GYM_RELATIONS.filter((relation) => relation.cues.some((cue) => words.has(cue))).length;
}

/** Every lower-case word the templates write: a made-up name must be none of them. */
export function templateWords(): Set<string> {
  const words = new Set<string>();
  for (const relation of GYM_RELATIONS)
    for (const text of [relation.sentence, relation.phrase, relation.question])
      for (const word of text.toLowerCase().split(/[^a-z]+/u)) if (word !== "") words.add(word);
  return words;
}
