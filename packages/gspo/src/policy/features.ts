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
