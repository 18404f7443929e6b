import { Cause, Effect, Exit, Option } from "effect";

/**
 * Runs an Effect as a plain promise for callers who don't use Effect: it rejects with the typed
 * failure itself (not Effect's `FiberFailure` wrapper), and an aborted `signal` interrupts the
 * fiber (cancelling pending sleeps and in-flight requests) and rejects with the signal's reason.
 */
export async function runEffect<A, E>(effect: Effect.Effect<A, E>, signal?: AbortSignal): Promise<A> {
  signal?.throwIfAborted();
  const exit = await Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal });
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.failureOption(exit.cause);
  if (Option.isSome(failure)) throw failure.value;
  if (Cause.isInterruptedOnly(exit.cause) && signal?.aborted) throw signal.reason;
  throw Cause.squash(exit.cause);
}
