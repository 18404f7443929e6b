import { isRubricError } from "@rubric/core";

/** The exit codes a command returns itself (not from an error). */
export const EXIT = {
  ok: 0,
  invalidInput: 1,
  usage: 2,
  /** `score --outputs`, `repro --provider`: some verdicts were errors (never counted as 0). */
  errorVerdicts: 2,
  /** `hackbench`: some probe is an exploit. */
  hackable: 3,
  /** `hackbench`: no exploit found, but the samples were too few to rule one out. */
  inconclusive: 4,
  /** `hackbench`: nothing could be concluded (usage, unreadable input, a verdict that was an error). */
  undecided: 2,
} as const;

/**
 * One row of the exit-code table. `codes` are error codes (`cli.usage`) or code areas ending in a
 * dot (`rubric.`), `*` for any toolkit error; a row without codes is an outcome a command returns.
 */
export interface ExitRule {
  readonly exit: number;
  readonly when: string;
  readonly codes?: readonly string[];
  /** Only for this command (hackbench's gate tells "could not tell" apart from "bad rubric" by one code). */
  readonly command?: string;
}

/**
 * THE exit-code table: `exitCodeFor` picks from it, `rubric --help` prints it. An error's row is
 * the command's own row if it has one, else the row with the longest matching code or area.
 */
export const EXIT_CODES: readonly ExitRule[] = [
  { exit: EXIT.ok, when: "success" },
  {
    exit: EXIT.invalidInput,
    when: "invalid input or unscorable verdicts",
    codes: [
      "cli.input-file",
      "cli.output-exists",
      "cli.output-unwritable",
      "rubric.",
      "score.",
      "verification.setup",
      "provider.spec",
      "provider.config",
      "gdpval.",
      "checkpoint.",
      // A file that cannot be read as input (@rubric/core/files): missing, a FIFO, a link refused, too large.
      "file.",
    ],
  },
  { exit: EXIT.invalidInput, when: "any other error of the toolkit (it carries a code)", codes: ["*"] },
  {
    exit: EXIT.usage,
    when: "usage error: unknown command or flag, a flag's value rejected or missing",
    codes: ["cli.usage"],
  },
  { exit: EXIT.errorVerdicts, when: "some verdicts were errors (score --outputs, repro --provider)" },
  { exit: EXIT.ok, when: "clean: every probe ruled out (its interval below τ)", command: "hackbench" },
  { exit: EXIT.hackable, when: "hackable: some probe is an exploit", command: "hackbench" },
  {
    exit: EXIT.inconclusive,
    when: "inconclusive: no exploit, but some probe could not be ruled out (too few samples)",
    command: "hackbench",
  },
  {
    exit: EXIT.undecided,
    when: "error: usage, unreadable input, or a verdict that was an error",
    codes: ["*"],
    command: "hackbench",
  },
];

/** The stable code of a toolkit error, or undefined for any other error (a bug, which keeps its stack trace). */
export function errorCode(error: unknown): string | undefined {
  return isRubricError(error) ? error.code : undefined;
}

function matches(pattern: string, code: string): boolean {
  return pattern === "*" || pattern === code || (pattern.endsWith(".") && code.startsWith(pattern));
}

/**
 * The exit code for an error a command let through, or undefined when it is not a toolkit error
 * (a bug: the caller rethrows it).
 *
 * @example
 * exitCodeFor(new UsageError("…"), "score"); // 2
 * exitCodeFor(new InputFileError("…"), "hackbench"); // 2 (hackbench: could not tell)
 */
export function exitCodeFor(error: unknown, command: string | undefined): number | undefined {
  const code = errorCode(error);
  if (code === undefined) return undefined;
  let best: { rule: ExitRule; rank: number } | undefined;
  for (const rule of EXIT_CODES) {
    if (rule.command !== undefined && rule.command !== command) continue;
    for (const pattern of rule.codes ?? []) {
      if (!matches(pattern, code)) continue;
      // The command's own rule first; then the most specific pattern.
      const rank = (rule.command === undefined ? 0 : 1000) + (pattern === "*" ? 0 : pattern.length);
      if (best === undefined || rank > best.rank) best = { rule, rank };
    }
  }
  return best?.rule.exit;
}

/** The table as `rubric --help` prints it. */
export function exitCodeTable(): string {
  const lines = EXIT_CODES.map((rule) => {
    const codes =
      rule.codes === undefined ? "" : ` [${rule.codes.map((c) => (c.endsWith(".") ? `${c}*` : c)).join(", ")}]`;
    const who = rule.command === undefined ? "" : `${rule.command}: `;
    return `  ${rule.exit}  ${who}${rule.when}${codes}`;
  });
  return `Exit codes (errors by their code):\n${lines.join("\n")}`;
}
