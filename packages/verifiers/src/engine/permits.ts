import { VerifierOptionsError } from "../errors.js";
/**
 * A FIFO pool of permits bounding verifier calls in flight. Effect's semaphore did this first,
 * but its cost per call grew with the number of waiters (measured here: ~50 µs with 64 waiting,
 * ~400 µs with 500, out of memory with 20,000), and a large batch queues every call at once.
 * This one is O(1) per acquire and release.
 */
export class PermitPool {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  #head = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new VerifierOptionsError(`permits must be an integer ≥ 1, got ${size}`);
    this.#free = size;
  }

  /** Runs `work` once a permit is free, and frees it when `work` settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #release(): void {
    if (this.#head < this.#waiting.length) {
      // Hand the permit straight to the next waiter; compact the queue now and then.
      const next = this.#waiting[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
        this.#waiting.splice(0, this.#head);
        this.#head = 0;
      }
      next();
    } else this.#free++;
  }
}
