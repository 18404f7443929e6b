import { RlxarInputError } from "../errors.js";

/** A prompt's ids after fitting, and how many of its oldest turns were left out. */
export interface FittedPrompt {
  readonly ids: number[];
  readonly droppedTurns: number;
}

/**
 * Each item's prompt ids at most `maxTokens` long, its oldest turns dropped first (the latest
 * observations matter most to the next step): every item is rendered in one call of `render`
 * (one sidecar request for a model's own tokenizer), and the few that do not fit are rendered
 * again with one more turn dropped, one call per round. An item that does not fit with no history
 * left is an `RlxarInputError` naming it (`label`). π's prompts and μ's go through here.
 */
export async function fitHistories<T extends { readonly history: readonly unknown[] }>(
  items: readonly T[],
  render: (items: readonly T[]) => Promise<number[][]>,
  maxTokens: number,
  label: (index: number) => string,
  owner = "the model",
): Promise<FittedPrompt[]> {
  if (items.length === 0) return [];
  const ids = await render(items);
  const dropped = items.map(() => 0);
  let over = items.flatMap((_, i) => (ids[i]!.length > maxTokens ? [i] : []));
  for (let round = 1; over.length > 0; round++) {
    const stuck = over.find((i) => round > items[i]!.history.length);
    if (stuck !== undefined)
      throw new RlxarInputError(
        label(stuck),
        `its prompt takes ${ids[stuck]!.length} tokens with no history, more than the ${maxTokens} ${owner} leaves for a prompt`,
      );
    const again = await render(over.map((i) => ({ ...items[i]!, history: items[i]!.history.slice(round) })));
    over.forEach((i, k) => {
      ids[i] = again[k]!;
      dropped[i] = round;
    });
    over = over.filter((i) => ids[i]!.length > maxTokens);
  }
  return ids.map((row, i) => ({ ids: row, droppedTurns: dropped[i]! }));
}
