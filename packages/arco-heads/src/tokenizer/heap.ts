/**
 * A binary heap ordered by `before` (its top is the item no other comes before): the merge queue of
 * both tokenizers, whose encoders pop the next merge in O(log n) instead of rescanning the text.
 */
export class BinaryHeap<T> {
  readonly #items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    const items = this.#items;
    let at = items.push(item) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(items[at]!, items[parent]!)) break;
      [items[parent], items[at]] = [items[at]!, items[parent]!];
      at = parent;
    }
  }

  /** The top item, removed; the heap must not be empty. */
  pop(): T {
    const items = this.#items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        const right = left + 1;
        let first = at;
        if (left < items.length && this.before(items[left]!, items[first]!)) first = left;
        if (right < items.length && this.before(items[right]!, items[first]!)) first = right;
        if (first === at) break;
        [items[first], items[at]] = [items[at]!, items[first]!];
        at = first;
      }
    }
    return top;
  }
}
