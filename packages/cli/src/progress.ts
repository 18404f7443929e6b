import cliProgress from "cli-progress";
import type { CliIO } from "./io.js";

export interface Progress {
  /** `done` of `total` units of `label` (a stage: "SFT epochs", "outputs"); `detail` is appended (e.g. the latest reward). */
  update(done: number, total: number, label: string, detail?: string): void;
  /** The work is over (also after a failure: a terminal bar stops redrawing, and the last stage's line is written). */
  done(): void;
}

/**
 * Progress on stderr. On a terminal, a bar drawn by cli-progress, one per stage: when the label
 * changes, the finished stage's bar stays on its line and a new one starts. When stderr is not a
 * terminal (CI logs, a pipe), one plain line per stage, written when the stage ends — its units,
 * its last detail and how long it took — so logs stay short and never hold escape codes.
 */
export function progressBar(io: CliIO, isTTY: boolean): Progress {
  return isTTY ? terminalBar(io) : stageLines(io);
}

function terminalBar(io: CliIO): Progress {
  // cli-progress writes to a stream; this one forwards to the command's stderr (tests capture it).
  const stream = {
    isTTY: true,
    columns: 120,
    write: (text: string) => {
      io.err(text);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  const make = () =>
    new cliProgress.SingleBar({
      stream,
      format: "[{bar}] {value}/{total} {label}{detail}",
      barsize: 30,
      barCompleteChar: "#",
      barIncompleteChar: ".",
      hideCursor: false,
      gracefulExit: false,
      clearOnComplete: false,
      stopOnComplete: false,
    });
  let bar: cliProgress.SingleBar | undefined;
  let label = "";
  // The bar redraws on a timer; a command that fails before `done()` must still be able to exit.
  const unref = () => (bar as unknown as { timer?: NodeJS.Timeout } | undefined)?.timer?.unref?.();
  return {
    update(done, total, nextLabel, detail) {
      const payload = { label: nextLabel, detail: detail ? `  ${detail}` : "" };
      if (bar !== undefined && nextLabel !== label) {
        bar.stop(); // the finished stage keeps its line
        bar = undefined;
      }
      if (bar === undefined) {
        bar = make();
        bar.start(Math.max(1, total), done, payload);
      } else {
        bar.setTotal(Math.max(1, total));
        bar.update(done, payload);
      }
      label = nextLabel;
      unref();
    },
    done() {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** How long a stage runs in a log before a line says it is still running. */
export const HEARTBEAT_MS = 60_000;

/**
 * The plain lines of a log: one per stage when it ends, and for a long stage one more each
 * `HEARTBEAT_MS` (at its next update), so a 20-minute warm-up does not look like a hang.
 */
export function stageLines(io: CliIO, now: () => number = () => performance.now()): Progress {
  let stage: { label: string; done: number; total: number; detail?: string } | undefined;
  // A stage's time runs from the end of the one before it (or from the start), not from its first
  // report, which comes only after its first unit of work.
  let since = now();
  let spoke = since;
  const line = (s: NonNullable<typeof stage>, at: number, suffix: string) =>
    `${s.label}: ${s.done}/${s.total}${s.detail ? `  ${s.detail}` : ""} (${((at - since) / 1000).toFixed(1)} s${suffix})\n`;
  const flush = () => {
    if (stage === undefined) return;
    const at = now();
    io.err(line(stage, at, ""));
    stage = undefined;
    since = at;
    spoke = at;
  };
  return {
    update(done, total, label, detail) {
      if (stage !== undefined && stage.label !== label) flush();
      stage = { label, done, total, ...(detail ? { detail } : {}) };
      const at = now();
      if (done < total && at - spoke >= HEARTBEAT_MS) {
        io.err(line(stage, at, ", still running"));
        spoke = at;
      }
    },
    done: flush,
  };
}

/**
 * Where a long run stands among its units of work (a method of a seed): "3 of 33" and, once a unit
 * has finished, the time left. `plan` names every unit in the order the run takes them; a unit's
 * time is estimated by the mean of the finished units of the same name (a method costs about the
 * same on every seed), else by the mean of all finished units. Each `next()` marks the start of the
 * next unit and returns that text.
 *
 * @example
 * const overall = overallProgress(["outcome", "arco", "outcome", "arco"]);
 * overall.next(); // "1 of 4"
 * overall.next(); // "2 of 4, about 3 min left" (outcome took 1 minute; arco and outcome are left)
 */
export function overallProgress(
  plan: readonly string[],
  now: () => number = () => performance.now(),
): { next(): string } {
  const took = new Map<string, number[]>();
  let all: number[] = [];
  let begun = 0;
  let startedAt = now();
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    next() {
      const at = now();
      if (begun > 0) {
        const key = plan[begun - 1]!;
        took.set(key, [...(took.get(key) ?? []), at - startedAt]);
        all = [...all, at - startedAt];
      }
      startedAt = at;
      begun++;
      if (all.length === 0) return `${begun} of ${plan.length}`;
      const left = plan.slice(begun - 1).reduce((sum, key) => sum + mean(took.get(key) ?? all), 0);
      return `${begun} of ${plan.length}, about ${duration(left)} left`;
    },
  };
}

/** A span for a person: seconds under two minutes, minutes under two hours, else hours. */
function duration(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
