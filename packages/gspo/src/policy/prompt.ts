import { briefTerms, type TaskBrief } from "@rubric/autointeract";
import { featurize, type Features, type Mention, mentions } from "./features.js";
import type { PolicyVocabulary } from "./vocabulary.js";

/**
 * What the policy conditions on: the task, and the stakeholder's reply to each question of the
 * repertoire (index-aligned). The policy only ever sees the replies to the questions it chose to
 * ask; having them all up front keeps log-probabilities exact and synchronous — the gym
 * stakeholder answers a question the same way whenever it is asked.
 */
export interface PolicyPrompt {
  readonly task: TaskBrief;
  readonly replies: readonly string[];
}

/** A term the policy may copy into a template's slot, with what it knows of it. */
export interface CopyCandidate {
  readonly text: string;
  /** Features of the candidate for the slot head (S): where it came from and whether it was heard. */
  readonly features: Features;
}

/** The task's salient words offered for copying: more than the worker's six, so a guess can miss. */
const TASK_TERMS = 8;
/** Slot features: bias, task rank 0…7, heard in a reply, template words heard with it, quoted in a reply, from the replies only. */
export const SLOT_DIM = 5 + TASK_TERMS;
const SLOT = { bias: 0, rank: 1, heard: 1 + TASK_TERMS, said: 2 + TASK_TERMS, quoted: 3 + TASK_TERMS } as const;
const SLOT_REPLY_ONLY = SLOT_DIM - 1;

/**
 * What a policy reads off a prompt after some questions: its features, what the replies say of
 * each phrase, and the terms a slot may copy. Each is cached per prompt and question list: a walk
 * asks for them at every step, and every walk of a group shares its prompt.
 */
export class PromptReader {
  readonly #features = new WeakMap<PolicyPrompt, Map<string, Features>>();
  readonly #mentions = new WeakMap<PolicyPrompt, Map<string, Mention[]>>();
  readonly #terms = new WeakMap<PolicyPrompt, Map<string, CopyCandidate[]>>();
  readonly #written = new WeakMap<PolicyPrompt, Map<string, Map<string, Mention>>>();

  constructor(
    readonly vocabulary: PolicyVocabulary,
    readonly dim: number,
  ) {}

  /** Features of the task and the replies to the questions asked so far (plus how many). */
  features(prompt: PolicyPrompt, asked: readonly number[]): Features {
    return cachedFor(this.#features, prompt, asked, (replies) =>
      featurize(prompt.task, replies, this.dim, [`asked-${asked.length}`]),
    );
  }

  /** What the replies to the questions asked say of each phrase (see `mentions`; a template's words without its slot). */
  mentions(prompt: PolicyPrompt, asked: readonly number[]): Mention[] {
    return cachedFor(this.#mentions, prompt, asked, (replies) =>
      mentions(
        Array.from({ length: this.vocabulary.phrases }, (_, k) => this.vocabulary.phraseText(k).replace("{term}", "")),
        replies,
        this.dim,
      ),
    );
  }

  /**
   * The terms a template's slot may copy after `asked`: the task's salient words (`briefTerms`,
   * most frequent first), then the terms quoted in the replies heard that the task did not
   * offer. Each with its features for the slot head.
   */
  terms(prompt: PolicyPrompt, asked: readonly number[]): CopyCandidate[] {
    return cachedFor(this.#terms, prompt, asked, (replies) => {
      const fromTask = briefTerms(prompt.task.prompt, TASK_TERMS);
      const quoted = new Set(
        replies.flatMap((r) => [...r.matchAll(/"([^"\n]{2,40})"/g)].map((m) => m[1]!.toLowerCase())),
      );
      const texts = [...fromTask, ...[...quoted].filter((q) => !fromTask.includes(q))];
      const heard = replies.join(" ").toLowerCase();
      return texts.map((text, rank) => {
        const said = Math.max(
          0,
          ...this.vocabulary.templates.map(
            (template) => mentions([template.replace("{term}", text)], replies, this.dim)[0]!.share,
          ),
        );
        const dense = new Map<number, number>([[SLOT.bias, 1]]);
        if (rank < fromTask.length) dense.set(SLOT.rank + rank, 1);
        else dense.set(SLOT_REPLY_ONLY, 1);
        if (new RegExp(`\\b${escapeRegex(text)}\\b`).test(heard)) dense.set(SLOT.heard, 1);
        if (said > 0) dense.set(SLOT.said, said);
        if (quoted.has(text)) dense.set(SLOT.quoted, 1);
        const indices = Int32Array.from([...dense.keys()].sort((a, b) => a - b));
        return { text, features: { indices, values: Float64Array.from(indices, (i) => dense.get(i)!) } };
      });
    });
  }

  /** What the replies say of one written criterion (its mention). */
  writtenMention(prompt: PolicyPrompt, asked: readonly number[], text: string): Mention {
    const byText = cachedFor(this.#written, prompt, asked, () => new Map<string, Mention>());
    let mention = byText.get(text);
    if (mention === undefined) {
      mention = mentions(
        [text],
        asked.map((q) => prompt.replies[q] ?? ""),
        this.dim,
      )[0]!;
      byText.set(text, mention);
    }
    return mention;
  }
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What `make` computes from the replies to the questions `asked`, once per prompt and question list. */
function cachedFor<T>(
  caches: WeakMap<PolicyPrompt, Map<string, T>>,
  prompt: PolicyPrompt,
  asked: readonly number[],
  make: (replies: string[]) => T,
): T {
  let cache = caches.get(prompt);
  if (!cache) caches.set(prompt, (cache = new Map()));
  const key = asked.join(",");
  let value = cache.get(key);
  if (value === undefined) {
    value = make(asked.map((q) => prompt.replies[q] ?? ""));
    cache.set(key, value);
  }
  return value;
}
