import type { AgentView } from "../environment/environment.js";
import { namesIn, questionHops, readStatedRelation, type StatedRelation } from "./relations.js";
import { queryKey } from "../policy/log-linear/query-key.js";

/**
 * A view of the gym read as a chain, from the view alone (no gold): how many relations the
 * question chains, how many of them the searches so far have found in order, and which entity the
 * chain needs next. A search is on the chain when the paragraph it retrieved is about the entity
 * the chain needed (its subject is that name); a look-alike's paragraph, or any other, is off it.
 */
export interface ChainReading {
  /** Relations the question chains (H). */
  readonly hops: number;
  /** Hops found so far, in order. */
  readonly found: number;
  /** The entity the chain needs next: the question's entity, then each found hop's object; the answer once all are found. */
  readonly expected: string | undefined;
  /** What the last search retrieved, when it was a gym paragraph. */
  readonly last: StatedRelation | undefined;
  /** The last search found the chain's next hop. */
  readonly lastOnChain: boolean;
  /** Every name the question and the observations hold, first appearance first. */
  readonly names: readonly string[];
  readonly questionEntity: string | undefined;
  /** Subjects of the paragraphs retrieved so far. */
  readonly retrieved: ReadonlySet<string>;
  /** Objects of paragraphs retrieved before the last. */
  readonly earlierObjects: ReadonlySet<string>;
  /** Queries issued so far, lower-cased. */
  readonly issued: ReadonlySet<string>;
  readonly budgetLeft: number;
  readonly mustFinish: boolean;
}

const SEARCH = /^Search\[([\s\S]*)\]$/u;

/** Reads a view as a chain (see {@link ChainReading}). */
export function readChain(view: AgentView): ChainReading {
  const hops = questionHops(view.task);
  const questionEntity = namesIn(view.task)[0];
  const names = new Set<string>(questionEntity === undefined ? [] : [questionEntity]);
  const retrieved = new Set<string>();
  const earlierObjects = new Set<string>();
  const issued = new Set<string>();
  let expected = questionEntity;
  let found = 0;
  let last: StatedRelation | undefined;
  let lastOnChain = false;
  for (const turn of view.history) {
    const query = SEARCH.exec(turn.action)?.[1];
    if (query !== undefined) issued.add(queryKey(query));
    if (last !== undefined) earlierObjects.add(last.object);
    last = query === undefined ? undefined : readStatedRelation(turn.observation);
    lastOnChain = false;
    if (last === undefined) continue;
    for (const name of namesIn(turn.observation)) names.add(name);
    retrieved.add(last.subject);
    if (last.subject === expected && found < hops) {
      found++;
      expected = last.object;
      lastOnChain = true;
    }
  }
  return {
    hops,
    found,
    expected,
    last,
    lastOnChain,
    names: [...names],
    questionEntity,
    retrieved,
    earlierObjects,
    issued,
    budgetLeft: view.budgetLeft,
    mustFinish: view.mustFinish,
  };
}

/** How a search query is taken from a name: the whole name, or one of its two words alone (a careless search). */
export type QueryForm = "full" | "first-word" | "last-word";

/** What a name is to the chain, for the features: each is true or false of one name. */
export interface NameRoles {
  readonly expected: boolean;
  readonly question: boolean;
  readonly lastSubject: boolean;
  readonly lastObject: boolean;
  readonly earlierObject: boolean;
  readonly retrieved: boolean;
  /** Named in an observation but in no relation it states (a "not to be confused with" aside). */
  readonly aside: boolean;
}

export interface GymSearchCandidate {
  readonly kind: "search";
  readonly text: string;
  readonly query: string;
  readonly form: QueryForm;
  /** The roles of the names the query is taken from (a shared first word has two). */
  readonly roles: NameRoles;
  readonly repeat: boolean;
}

export interface GymFinishCandidate {
  readonly kind: "finish";
  readonly text: string;
  readonly answer: string;
  readonly roles: NameRoles;
}

export type GymCandidate = GymSearchCandidate | GymFinishCandidate;

function rolesOf(name: string, reading: ChainReading): NameRoles {
  const lastSubject = reading.last?.subject === name;
  const lastObject = reading.last?.object === name;
  const earlierObject = reading.earlierObjects.has(name);
  const retrieved = reading.retrieved.has(name);
  const question = reading.questionEntity === name;
  return {
    expected: reading.expected === name,
    question,
    lastSubject,
    lastObject,
    earlierObject,
    retrieved,
    aside: !question && !lastObject && !earlierObject && !retrieved,
  };
}

const anyRole = (a: NameRoles, b: NameRoles): NameRoles => ({
  expected: a.expected || b.expected,
  question: a.question || b.question,
  lastSubject: a.lastSubject || b.lastSubject,
  lastObject: a.lastObject || b.lastObject,
  earlierObject: a.earlierObject || b.earlierObject,
  retrieved: a.retrieved || b.retrieved,
  aside: a.aside || b.aside,
});

/**
 * A view's candidate actions: for every name in the question and the observations, a search for
 * the whole name and for each of its two words alone, and a Finish with the name; at `mustFinish`
 * the Finishes only. Queries that read the same (a look-alike pair's shared word) are one
 * candidate with both names' roles. The order is deterministic: the searches, then the
 * Finishes, each in the names' order of first appearance.
 *
 * @example
 * gymCandidates(view).candidates.map((c) => c.text); // ["Search[Zorvex Labs]", "Search[Zorvex]", "Search[Labs]", "Finish[Zorvex Labs]", …]
 */
export function gymCandidates(view: AgentView): { reading: ChainReading; candidates: GymCandidate[] } {
  const reading = readChain(view);
  const searches = new Map<string, GymSearchCandidate>();
  const finishes: GymFinishCandidate[] = [];
  for (const name of reading.names) {
    const roles = rolesOf(name, reading);
    const [first, second] = name.split(" ") as [string, string];
    if (!reading.mustFinish) {
      const forms: [QueryForm, string][] = [
        ["full", name],
        ["first-word", first],
        ["last-word", second],
      ];
      for (const [form, query] of forms) {
        const key = `${form}:${queryKey(query)}`;
        const known = searches.get(key);
        searches.set(
          key,
          known === undefined
            ? {
                kind: "search",
                text: `Search[${query}]`,
                query,
                form,
                roles,
                repeat: reading.issued.has(queryKey(query)),
              }
            : { ...known, roles: anyRole(known.roles, roles) },
        );
      }
    }
    finishes.push({ kind: "finish", text: `Finish[${name}]`, answer: name, roles });
  }
  return { reading, candidates: [...searches.values(), ...finishes] };
}
