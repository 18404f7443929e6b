import { Data, Effect } from "effect";
import { describe, expect, it } from "vitest";
import { runEffect } from "./run-effect.js";

class Boom extends Data.TaggedError("Boom")<{ readonly detail: string }> {}

describe("runEffect", () => {
  it("resolves with the value", async () => {
    await expect(runEffect(Effect.succeed(42))).resolves.toBe(42);
  });

  it("rejects with the typed failure itself, not Effect's FiberFailure wrapper", async () => {
    const error = await runEffect(Effect.fail(new Boom({ detail: "x" }))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Boom);
    expect((error as Boom).detail).toBe("x");
  });

  it("rejects with a defect's own error", async () => {
    const defect = new RangeError("bad");
    await expect(runEffect(Effect.die(defect))).rejects.toBe(defect);
  });

  it("interrupts the fiber on abort and rejects with the signal's reason", async () => {
    const controller = new AbortController();
    let finalized = false;
    const slow = Effect.sleep("10 seconds").pipe(Effect.ensuring(Effect.sync(() => (finalized = true))));
    const reason = new Error("stop");
    setTimeout(() => controller.abort(reason), 10);
    await expect(runEffect(slow, controller.signal)).rejects.toBe(reason);
    expect(finalized).toBe(true);
  });

  it("rejects at once when the signal is already aborted, without running the effect", async () => {
    let ran = false;
    const reason = new Error("already");
    await expect(
      runEffect(
        Effect.sync(() => (ran = true)),
        AbortSignal.abort(reason),
      ),
    ).rejects.toBe(reason);
    expect(ran).toBe(false);
  });
});
