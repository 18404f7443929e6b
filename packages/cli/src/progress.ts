import type { CliIO } from "./io.js";

export interface Progress {
  /** `done` of `total` units of `label`; `detail` is appended (e.g. the latest reward). */
  update(done: number, total: number, label: string, detail?: string): void;
  done(): void;
}

/**
 * Progress on stderr. On a terminal, one bar redrawn in place; when stderr is piped (CI logs),
 * a plain line each time the label changes or a tenth of the work is done, so logs stay short.
 */
export function progressBar(io: CliIO, isTTY: boolean, options: { lines?: boolean } = {}): Progress {
  if (isTTY) {
    let drawn = false;
    return {
      update(done, total, label, detail) {
        const width = 30;
        const filled = Math.round((done / Math.max(1, total)) * width);
        io.err(
          `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${label}${detail ? `  ${detail}` : ""}\x1b[K`,
        );
        drawn = true;
      },
      done() {
        if (drawn) io.err("\n");
        drawn = false;
      },
    };
  }
  if (!options.lines) return { update: () => {}, done: () => {} };
  let last = { label: "", tenth: -1 };
  return {
    update(done, total, label, detail) {
      const tenth = Math.floor((10 * done) / Math.max(1, total));
      if (label === last.label && tenth === last.tenth && done !== total) return;
      last = { label, tenth };
      io.err(`${done}/${total} ${label}${detail ? `  ${detail}` : ""}\n`);
    },
    done() {},
  };
}
