import type { Rng } from "@rubric/core";
import { RlxarInputError } from "../errors.js";
import type { EntityType } from "./relations.js";

const ONSETS = ["b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kr"];
const MORE_ONSETS = ["tr", "st", "th", "sh", "vr", "sk"];
const VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ei", "ou"];
const CODAS = ["", "", "", "", "l", "n", "r", "s", "x", "m"];
const ALL_ONSETS = [...ONSETS, ...MORE_ONSETS];

/**
 * The second word of a non-person name, by kind: a plain English word, so a name reads as what it
 * names ("Zorvex Labs", "Vost Harbor") and a search for that word alone is a plausible careless
 * search that finds some entity of that kind.
 */
export const NAME_SUFFIXES: Readonly<Record<Exclude<EntityType, "person">, readonly string[]>> = {
  company: ["Labs", "Works", "Motors", "Foods", "Systems", "Holdings", "Textiles", "Mining"],
  city: ["Falls", "Harbor", "Springs", "Crossing", "Heights", "Ford", "Hollow", "Bay"],
  country: ["Union", "Isles", "Republic", "Kingdom", "Federation", "Commonwealth"],
  university: ["University", "Institute", "College", "Academy", "Polytechnic"],
  film: ["Rising", "Nights", "Protocol", "Legacy", "Horizon", "Requiem", "Dawn"],
};

function syllable(rng: Rng, first: boolean): string {
  // A first syllable may start on its vowel ("Ailo"); later ones always have an onset, so two
  // vowels never run together across syllables into something unreadable.
  const onset = first && rng.int(5) === 0 ? "" : ALL_ONSETS[rng.int(ALL_ONSETS.length)]!;
  return onset + VOWELS[rng.int(VOWELS.length)]! + CODAS[rng.int(CODAS.length)]!;
}

/** A made-up word of two or three syllables, capitalised: "Zorvex", "Kailun", "Dratimo". */
export function madeUpWord(rng: Rng): string {
  const syllables = 2 + (rng.int(6) === 0 ? 1 : 0);
  let word = "";
  for (let i = 0; i < syllables; i++) word += syllable(rng, i === 0);
  return word[0]!.toUpperCase() + word.slice(1);
}

/**
 * The made-up words one world has used. Every entity's distinctive word is fresh, so two names
 * share a word only where the generator makes a look-alike on purpose (and in the kind words of
 * `NAME_SUFFIXES`): BM25's matches are then exactly the ones the world was built to have.
 */
export class NameBook {
  readonly #used = new Set<string>();

  /** `reserved`: lower-case words no made-up word may be (the templates' words, the suffixes). */
  constructor(reserved: Iterable<string>) {
    for (const word of reserved) this.#used.add(word.toLowerCase());
    for (const suffixes of Object.values(NAME_SUFFIXES))
      for (const suffix of suffixes) this.#used.add(suffix.toLowerCase());
  }

  /** A made-up word this world has not used yet. */
  freshWord(rng: Rng): string {
    // Two-syllable words alone number in the millions; a world uses a few dozen.
    for (let attempt = 0; attempt < 1000; attempt++) {
      const word = madeUpWord(rng);
      if (!this.#used.has(word.toLowerCase())) {
        this.#used.add(word.toLowerCase());
        return word;
      }
    }
    throw new RlxarInputError("names", "no fresh word after 1,000 draws");
  }

  /** A new entity's name: two fresh words for a person, a fresh word and its kind's suffix otherwise. */
  name(type: EntityType, rng: Rng): string {
    const first = this.freshWord(rng);
    if (type === "person") return `${first} ${this.freshWord(rng)}`;
    const suffixes = NAME_SUFFIXES[type];
    return `${first} ${suffixes[rng.int(suffixes.length)]!}`;
  }

  /**
   * A look-alike of `name`: the same first word, another second word (a fresh family name, or
   * another suffix of the kind, none of `taken`), so a search for the shared first word matches both.
   */
  lookalike(name: string, type: EntityType, rng: Rng, taken: ReadonlySet<string> = new Set()): string {
    const [first, second] = name.split(" ") as [string, string];
    if (type === "person") return `${first} ${this.freshWord(rng)}`;
    const others = NAME_SUFFIXES[type].filter((suffix) => suffix !== second && !taken.has(`${first} ${suffix}`));
    if (others.length === 0)
      throw new RlxarInputError(
        "names",
        `no look-alike of ${JSON.stringify(name)} is left: every ${type} suffix is taken`,
      );
    return `${first} ${others[rng.int(others.length)]!}`;
  }
}
