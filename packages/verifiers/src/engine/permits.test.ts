import { describe, expect, it } from "vitest";
import { PermitPool } from "./permits.js";

describe("PermitPool", () => {
  it("never has more than `size` runs in flight, serves waiters in order, and survives failures", async () => {
    const pool = new PermitPool(3);
    let inFlight = 0;
    let peak = 0;
    const order: number[] = [];
    const runs = Array.from({ length: 2000 }, (_, i) =>
      pool.run(async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        order.push(i);
        if (i % 7 === 0) throw new Error(`run ${i} failed`);
        return i;
      }),
    );
    const results = await Promise.allSettled(runs);
    expect(peak).toBe(3);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(286);
    // FIFO: runs start in submission order, so they finish within a window of `size`.
    order.forEach((i, k) => expect(Math.abs(i - k)).toBeLessThan(3));
    expect(() => new PermitPool(0)).toThrow(expect.objectContaining({ code: "verification.options" }));
  });
});
