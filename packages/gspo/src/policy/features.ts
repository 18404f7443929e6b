import type { TaskBrief } from "@rubric/autointeract";

/** A sparse, L2-normalised feature vector: hashed words of the task and of the stakeholder's answers, plus a bias. */
export interface Features {
  readonly indices: Int32Array;
  readonly values: Float64Array;
}

function hash(text: string, dim: number): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0) % dim;
}

/**
 * What the in-process policy conditions on: words of the task brief (sector, occupation, prompt)
 * and of the dialogue's answers, hashed into `dim` buckets (bucket 0 is a constant bias). Answers
 * and task words use separate namespaces, since "tables" in a brief and in an answer mean different things;
 * `state` adds whole-token markers of the dialogue's state.
 */
export function featurize(
  task: TaskBrief,
  answers: readonly string[],
  dim: number,
  state: readonly string[] = [],
): Features {
  const counts = new Map<number, number>([[0, 1]]);
  const add = (prefix: string, text: string) => {
    for (const word of text.toLowerCase().match(/[a-z][a-z0-9-]{2,}/g) ?? []) {
      const i = 1 + hash(`${prefix}:${word}`, dim - 1);
      counts.set(i, (counts.get(i) ?? 0) + 1);
    }
  };
  add("t", `${task.sector ?? ""} ${task.occupation ?? ""} ${task.prompt}`);
  for (const a of answers) add("a", a);
  // State markers (e.g. how many questions were asked) are whole tokens, not words.
  for (const s of state) {
    const i = 1 + hash(`s:${s}`, dim - 1);
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  const indices = Int32Array.from(counts.keys()).sort();
  const raw = Float64Array.from(indices, (i) => counts.get(i)!);
  const norm = Math.hypot(...raw);
  return { indices, values: raw.map((v) => v / norm) };
}

/** Words too common to tell one criterion from another. */
const FILLER = new Set(["the", "and", "with", "its", "has", "any", "for", "such", "than", "that", "this", "from"]);

function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9][a-z0-9-]*/g) ?? []).filter((w) => w.length >= 3 && !FILLER.has(w));
}

/** How one criterion was heard in the replies: the share of its words in the reply sentence that says the most of them, and that sentence's words. */
export interface Mention {
  /** In [0, 1]; 0 when no sentence shares a word with the criterion. */
  readonly share: number;
  /** Hashed words of that sentence (empty when share is 0): how it was said ("essential", "nice to have"). */
  readonly context: Features;
}

const NO_CONTEXT: Features = { indices: new Int32Array(0), values: new Float64Array(0) };

/**
 * What the replies say of each criterion, read by word overlap rather than by any phrasing of
 * the gym's stakeholder: for criterion k, the largest share of its words found in one sentence
 * of the replies heard so far, and that sentence as features — the manager's means to copy a
 * criterion it heard, and to weigh it by how it was said.
 */
export function mentions(criteria: readonly string[], replies: readonly string[], dim: number): Mention[] {
  const sentences = replies
    .flatMap((reply) => reply.split(/(?<=[.!?])\s+/))
    .map((text) => ({ text, words: new Set(words(text)) }))
    .filter((s) => s.words.size > 0);
  return criteria.map((criterion) => {
    const own = [...new Set(words(criterion))];
    let best = { share: 0, text: "" };
    for (const s of sentences) {
      const share = own.length === 0 ? 0 : own.filter((w) => s.words.has(w)).length / own.length;
      if (share > best.share) best = { share, text: s.text };
    }
    if (best.share === 0) return { share: 0, context: NO_CONTEXT };
    return { share: best.share, context: featurize({ id: "", prompt: "" }, [best.text], dim) };
  });
}
