import { createRng, type Rng, shuffle } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { HotpotParagraph } from "../hotpotqa/data.js";
import { NameBook } from "./names.js";
import {
  chainQuestion,
  type EntityType,
  fillSentence,
  GYM_RELATIONS,
  type Relation,
  type RelationKey,
  templateWords,
} from "./relations.js";

/** The most relations a gym question chains (and the longest walk the relation graph is sure to hold). */
export const GYM_MAX_HOPS = 4;

/**
 * Look-alikes per chain entity by default: 2, so a careless search (the shared first word) finds
 * the gold paragraph about one time in three. With one look-alike (a coin flip per hop) outcome-only
 * RL and the true-advantage control both learned the careful search within four updates at every H:
 * successes were common enough that every batch told outcome RL the right direction, and the gym
 * could not show what step credit is worth (see packages/repro/README.md, "The ARCO gym").
 */
export const GYM_LOOKALIKES = 2;

/** Which seed stream a task comes from: training and evaluation tasks never share one. */
export type GymSplit = "train" | "eval";

/** One hop of a task's gold chain: its paragraph (at `paragraph` in the pool) states `relation`(subject) = object. */
export interface GymHop {
  readonly subject: string;
  readonly subjectType: EntityType;
  readonly relation: RelationKey;
  readonly object: string;
  readonly objectType: EntityType;
  readonly paragraph: number;
}

/**
 * A look-alike of a chain entity: it shares the entity's first word, and its paragraph (at
 * `paragraph`) states the same relation the chain needs next, of another object. A careless
 * search for the shared word may find it instead of the gold paragraph.
 */
export interface GymLure {
  /** The chain entity it imitates (`chain[hop].subject`). */
  readonly of: string;
  readonly hop: number;
  readonly name: string;
  readonly sharedWord: string;
  readonly paragraph: number;
}

/**
 * One question of the ARCO gym, a simulation: a procedurally generated world of fictional
 * entities, a question that chains `hops` relations from an entity it names, and the world's
 * paragraphs as a closed pool. The fields HotpotQA's environment reads (`id`, `question`,
 * `answer`, `paragraphs`, `supportingTitles`) have its meaning, so a task is a `HotpotQuestion`
 * too; the rest is gold only teachers and tests read.
 */
export interface GymTask {
  readonly id: string;
  readonly split: GymSplit;
  readonly hops: number;
  readonly question: string;
  /** The last chain entity's name. */
  readonly answer: string;
  /** The pool, shuffled: the gold chain's paragraphs, the look-alikes', and other entities'. */
  readonly paragraphs: readonly HotpotParagraph[];
  /** The gold paragraphs' titles (their subjects' names), in chain order. */
  readonly supportingTitles: readonly string[];
  readonly chain: readonly GymHop[];
  readonly lures: readonly GymLure[];
}

export interface GymTaskOptions {
  /** The hop count H of every task, or a list the tasks take in turn (task i has `hops[i % length]`). */
  readonly hops: number | readonly number[];
  readonly count: number;
  readonly seed: number | string;
  /** Default `"train"`. The split is the first fork of the seed, so the two streams are disjoint. */
  readonly split?: GymSplit;
  /** Look-alikes of each chain entity but the last (default {@link GYM_LOOKALIKES}; at most 4). */
  readonly lookalikes?: number;
  /** Paragraphs per pool, drawn uniformly in [min, max] (default 10 and 20), never fewer than (1 + lookalikes)·H. */
  readonly paragraphs?: { readonly min?: number; readonly max?: number };
}

/** Sentences that say nothing a question asks about, by kind: paragraphs of differing length. */
const FILLERS: Readonly<Record<EntityType, readonly string[]>> = {
  person: [
    "The person rarely gave interviews.",
    "It is said the person kept a large private library.",
    "Friends recall a patient and careful worker.",
    "Later years were spent writing letters and essays.",
    "A portrait of the person hangs in a small museum.",
  ],
  city: [
    "The city is known for its covered markets.",
    "Its old quarter has narrow streets and stone bridges.",
    "A festival of lanterns is held there every spring.",
    "The river port once carried most of its trade.",
    "Many of its buildings date from an earlier century.",
  ],
  country: [
    "The country has a long coastline and few large rivers.",
    "Its flag shows three horizontal bands.",
    "Most of its people live near the southern plains.",
    "It joined a regional trade pact some decades ago.",
    "Its currency is divided into one hundred smaller coins.",
  ],
  company: [
    "The company grew quickly during its first decade.",
    "It employs several thousand people.",
    "Its products are sold in many markets abroad.",
    "The firm went public after a long private period.",
    "Critics have questioned some of its accounting.",
  ],
  university: [
    "The university admits a few thousand students each year.",
    "Its library holds a well known collection of maps.",
    "It was granted a royal charter long ago.",
    "The school is organised into several faculties.",
    "Its rowing team is a fixture of regional races.",
  ],
  film: [
    "The film premiered at a small festival.",
    "Critics praised its photography and its score.",
    "It was shot over a single winter.",
    "The story follows two strangers on a long journey.",
    "It later gained a devoted following on home video.",
  ],
};

// The made-up words must never equal a word the gym writes, or BM25 would match a name on a template word.
const RESERVED = new Set([
  ...templateWords(),
  ...Object.values(FILLERS).flatMap((lines) => lines.flatMap((line) => line.toLowerCase().split(/[^a-z]+/u))),
  "it",
  "is",
  "not",
  "to",
  "be",
  "confused",
  "with",
]);

const confusion = (other: string) => `It is not to be confused with ${other}.`;

interface Entity {
  readonly name: string;
  readonly type: EntityType;
}

/** A paragraph stating `relation`(subject) = object, titled by its subject, with 1–3 filler sentences. */
function paragraph(subject: Entity, relation: Relation, object: Entity, rng: Rng, ...extra: string[]): HotpotParagraph {
  const fillers = shuffle(FILLERS[subject.type], rng).slice(0, 1 + rng.int(3));
  for (const sentence of extra) fillers.splice(rng.int(fillers.length + 1), 0, sentence);
  const sentences = [fillSentence(relation, subject.name, object.name), ...fillers];
  return { title: subject.name, sentences, text: sentences.join(" ") };
}

/** A walk of `hops` distinct relations through the type graph, each starting where the last ended. */
function relationWalk(hops: number, rng: Rng): Relation[] {
  for (;;) {
    const walk: Relation[] = [];
    let from = GYM_RELATIONS[rng.int(GYM_RELATIONS.length)]!.subject;
    while (walk.length < hops) {
      const next = GYM_RELATIONS.filter((r) => r.subject === from && !walk.includes(r));
      if (next.length === 0) break;
      const relation = next[rng.int(next.length)]!;
      walk.push(relation);
      from = relation.object;
    }
    // A dead end (a walk that used up its type's relations) starts over: a few draws at most.
    if (walk.length === hops) return walk;
  }
}

interface Placed {
  readonly paragraph: HotpotParagraph;
  readonly role: "gold" | "lure" | "other";
  /** The chain hop a gold or look-alike paragraph belongs to. */
  readonly hop?: number;
}

function generateTask(hops: number, lookalikes: number, size: number, rng: Rng, id: string, split: GymSplit): GymTask {
  const book = new NameBook(RESERVED);
  const relations = relationWalk(hops, rng.fork("walk"));
  const names = rng.fork("names");
  const text = rng.fork("text");
  const entities: Entity[] = [{ name: book.name(relations[0]!.subject, names), type: relations[0]!.subject }];
  for (const relation of relations) entities.push({ name: book.name(relation.object, names), type: relation.object });
  const placed: Placed[] = [];
  const lures: { of: string; hop: number; name: string }[] = [];
  const lureObjects: Entity[][] = [];
  relations.forEach((relation, hop) => {
    const subject = entities[hop]!;
    const taken = new Set([subject.name]);
    const group: Entity[] = [subject];
    for (let l = 0; l < lookalikes; l++) {
      const lure: Entity = { name: book.lookalike(subject.name, subject.type, names, taken), type: subject.type };
      taken.add(lure.name);
      group.push(lure);
    }
    const objects = group
      .slice(1)
      .map((): Entity => ({ name: book.name(relation.object, names), type: relation.object }));
    // Half the groups say their members are not to be confused, each naming the next in a ring,
    // so every paragraph of the group holds the shared word equally often and BM25 favours none.
    const confused = text.next() < 0.5;
    const aside = (i: number) => (confused ? [confusion(group[(i + 1) % group.length]!.name)] : []);
    placed.push({ paragraph: paragraph(subject, relation, entities[hop + 1]!, text, ...aside(0)), role: "gold", hop });
    objects.forEach((object, l) => {
      const lure = group[l + 1]!;
      placed.push({ paragraph: paragraph(lure, relation, object, text, ...aside(l + 1)), role: "lure", hop });
      lures.push({ of: subject.name, hop, name: lure.name });
    });
    lureObjects.push(objects);
  });
  // Where a look-alike's object has a next relation in the chain, its paragraph continues the wrong
  // chain as plausibly as the gold one goes on; then other entities under the chain's relations.
  for (let hop = 0; hop + 1 < hops; hop++) {
    const relation = relations[hop + 1]!;
    for (const object of lureObjects[hop]!) {
      if (placed.length >= size) break;
      placed.push({
        paragraph: paragraph(
          object,
          relation,
          { name: book.name(relation.object, names), type: relation.object },
          text,
        ),
        role: "other",
      });
    }
  }
  while (placed.length < size) {
    const relation = relations[text.int(relations.length)]!;
    const subject = { name: book.name(relation.subject, names), type: relation.subject };
    const object = { name: book.name(relation.object, names), type: relation.object };
    placed.push({ paragraph: paragraph(subject, relation, object, text), role: "other" });
  }
  const pool = shuffle(placed, rng.fork("pool"));
  const at = (role: Placed["role"], hop: number) => pool.findIndex((p) => p.role === role && p.hop === hop);
  const lureAt = (name: string) => pool.findIndex((p) => p.role === "lure" && p.paragraph.title === name);
  const chain: GymHop[] = relations.map((relation, hop) => ({
    subject: entities[hop]!.name,
    subjectType: entities[hop]!.type,
    relation: relation.key,
    object: entities[hop + 1]!.name,
    objectType: entities[hop + 1]!.type,
    paragraph: at("gold", hop),
  }));
  const gymLures: GymLure[] = lures.map((lure) => ({
    ...lure,
    sharedWord: lure.name.split(" ")[0]!,
    paragraph: lureAt(lure.name),
  }));
  return {
    id,
    split,
    hops,
    question: chainQuestion(relations, entities[0]!.name),
    answer: entities[hops]!.name,
    paragraphs: pool.map((p) => p.paragraph),
    supportingTitles: chain.map((hop) => hop.subject),
    chain,
    lures: gymLures,
  };
}

function checkInteger(value: number, path: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RlxarInputError(path, `expected an integer in [${min}, ${max}], got ${value}`);
}

/**
 * Generates ARCO gym tasks (a simulation): each task is its own fictional world, built from
 * `createRng(seed).fork(split).fork("task-<i>")`, so task i is the same whatever `count` is, and
 * training and evaluation tasks come from disjoint streams of one seed. A world holds the chain
 * entities e₀ … e_H (fresh made-up names), a look-alike of each e₀ … e_{H−1} sharing its first
 * word whose paragraph states the same relation of another object, look-alikes' objects
 * continuing their wrong chains, and other entities under the chain's relations, up to the pool
 * size. Every paragraph states one relation of its subject and is titled by it.
 *
 * @example
 * const [task] = generateGymTasks({ hops: 2, count: 1, seed: 7 });
 * task!.question; // e.g. "In which city was the founder of Zorvex Labs born?"
 * task!.answer; // the city's made-up name
 */
export function generateGymTasks(options: GymTaskOptions): GymTask[] {
  const hopsList = typeof options.hops === "number" ? [options.hops] : options.hops;
  if (hopsList.length === 0) throw new RlxarInputError("options.hops", "expected at least one hop count");
  hopsList.forEach((h, i) =>
    checkInteger(h, typeof options.hops === "number" ? "options.hops" : `options.hops[${i}]`, 1, GYM_MAX_HOPS),
  );
  checkInteger(options.count, "options.count", 0);
  const split = options.split ?? "train";
  if (split !== "train" && split !== "eval")
    throw new RlxarInputError("options.split", `expected "train" or "eval", got ${JSON.stringify(split)}`);
  const min = options.paragraphs?.min ?? 10;
  const max = options.paragraphs?.max ?? 20;
  checkInteger(min, "options.paragraphs.min", 1);
  checkInteger(max, "options.paragraphs.max", min);
  const lookalikes = options.lookalikes ?? GYM_LOOKALIKES;
  checkInteger(lookalikes, "options.lookalikes", 1, 4);
  const stream = createRng(options.seed).fork(split);
  return Array.from({ length: options.count }, (_, i) => {
    const rng = stream.fork(`task-${i}`);
    const hops = hopsList[i % hopsList.length]!;
    const size = Math.max((1 + lookalikes) * hops, min + rng.fork("size").int(max - min + 1));
    return generateTask(hops, lookalikes, size, rng, `gym-${split}-${options.seed}-${i}`, split);
  });
}
