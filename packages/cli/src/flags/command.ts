import { Command, CommanderError, Option } from "commander";
import { z } from "zod";
import { UsageError, type CliIO } from "../io.js";
import { nearestName } from "@rubric/core";
import { type Flag, kebabCase, switchFlag } from "./flag.js";

/** The operands after the flags (`rubric validate a.json b.json`), parsed by a schema of the list. */
export interface Positional<K extends string, T> {
  /** The option name the command receives them under. */
  readonly key: K;
  /** How help writes them: `<file>...`, `[experiment]`. */
  readonly label: string;
  readonly description: string;
  /** Rejections are written as `<command> <message>` (e.g. "validate needs at least one file"). */
  readonly schema: z.ZodType<T, string[]>;
}

/**
 * The operand schema of a command whose one operand is a fixed word (`repro arco`, `repro
 * arco-gym`): that word, or a usage error built by `refusal` from what was given.
 */
export function fixedOperand<const W extends string>(
  word: W,
  refusal: (given: string) => string,
): z.ZodType<W, string[]> {
  return z.array(z.string()).transform((given, context) => {
    if (given.length === 1 && given[0] === word) return word;
    context.addIssue({ code: "custom", message: refusal(given.join(" ")) });
    return z.NEVER;
  });
}

/** What a command receives besides its options. */
export interface CommandContext {
  readonly io: CliIO;
  readonly isTTY: boolean;
}

type FlagValues<F> = { readonly [K in keyof F]: F[K] extends Flag<infer T> ? T : never };

/** The options a command's `run` receives: every flag under its option name, parsed; then the operands. */
export type CommandArgs<F, K extends string, P> = FlagValues<F> & { readonly [key in K]: P };

/**
 * A command as declared once: its flags (by option name), its operands, its help, its body. The
 * parser, the validation, the help text and the flag names in messages all come from this.
 */
export interface CommandDeclaration<
  F extends Record<string, Flag<unknown>> = Record<string, Flag<unknown>>,
  K extends string = string,
  P = unknown,
> {
  readonly name: string;
  /** What follows `rubric <name>` in the usage line. */
  readonly usage: string;
  readonly description: string;
  readonly flags: F;
  readonly positional?: Positional<K, P>;
  /** Help text after the options (notes, exit codes). */
  readonly footer?: string;
  /** A CLI-level hint added below a library error this command let through (e.g. which flag would fix it). */
  hint?(error: Error, args: CommandArgs<F, K, P>): string | undefined;
  run(args: CommandArgs<F, K, P>, context: CommandContext): number | Promise<number>;
}

/** Declares a command (an identity function that lets TypeScript infer the options `run` receives). */
export function defineCommand<F extends Record<string, Flag<unknown>>, K extends string = never, P = never>(
  declaration: CommandDeclaration<F, K, P>,
): CommandDeclaration<F, K, P> {
  return declaration;
}

/** Every command's `--help`: declared here once rather than in each command. */
const HELP_FLAG = switchFlag("print this help").alias("h");

// Help is rendered at a fixed width so that it reads the same in a terminal, a pipe and a test.
const HELP_WIDTH = 100;

function commander(declaration: CommandDeclaration): Command {
  const command = new Command(`rubric ${declaration.name}`)
    .exitOverride()
    .configureOutput({
      writeOut: () => {},
      writeErr: () => {},
      outputError: () => {},
      getOutHelpWidth: () => HELP_WIDTH,
      getErrHelpWidth: () => HELP_WIDTH,
    })
    .helpOption(false)
    .showSuggestionAfterError(false)
    .allowExcessArguments(false)
    .usage(declaration.usage)
    .description(reflow(declaration.description));
  if (declaration.positional)
    command.argument(`[${declaration.positional.key}...]`, declaration.positional.description);
  for (const [name, flag] of Object.entries({ ...declaration.flags, help: HELP_FLAG })) {
    const long = `--${kebabCase(name)}${flag.value === undefined ? "" : ` ${flag.value}`}`;
    command.addOption(new Option(flag.short === undefined ? long : `-${flag.short}, ${long}`, flag.description));
  }
  return command;
}

/**
 * A description as commander should wrap it: the lines of each plain paragraph joined into one, so
 * a source line a little longer than the help's width does not leave one word on a line of its
 * own; indented lines (tables of subcommands or endpoints) and blank lines are kept as written.
 */
export function reflow(text: string): string {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const previous = out.at(-1);
    const plain = line.trim() !== "" && !/^\s/.test(line);
    if (plain && previous !== undefined && previous.trim() !== "" && !/^\s/.test(previous))
      out[out.length - 1] = `${previous} ${line}`;
    else out.push(line);
  }
  return out.join("\n");
}

/** `rubric <name> --help`, `rubric help <name>`: one text, generated from the declaration. */
export function commandHelp(declaration: CommandDeclaration): string {
  const text = commander(declaration).helpInformation().trimEnd();
  return `${text}\n${declaration.footer === undefined ? "" : `\n${declaration.footer}\n`}`;
}

/**
 * Parses a command's arguments against its declaration: `help` when `--help` was given, else the
 * options its `run` receives. @throws UsageError naming the flag at fault: an unknown flag (with
 * the flag a typo meant), a value its schema rejects, a required flag that is missing.
 */
export function parseCommand<F extends Record<string, Flag<unknown>>, K extends string, P>(
  declaration: CommandDeclaration<F, K, P>,
  argv: readonly string[],
): { readonly help: true } | { readonly help: false; readonly args: CommandArgs<F, K, P> } {
  const command = commander(declaration as unknown as CommandDeclaration);
  try {
    command.parse([...argv], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    throw usageErrorFrom(error, declaration as unknown as CommandDeclaration);
  }
  const { help, ...given } = command.opts<Record<string, string | boolean | undefined>>();
  if (help === true) return { help: true };
  const input: Record<string, unknown> = { ...given };
  const shape: Record<string, z.ZodType> = {};
  for (const [name, flag] of Object.entries(declaration.flags)) shape[name] = flag.schema;
  if (declaration.positional) {
    shape[declaration.positional.key] = declaration.positional.schema;
    input[declaration.positional.key] = command.args;
  }
  const parsed = z.strictObject(shape).safeParse(input);
  if (!parsed.success) {
    const messages = parsed.error.issues.map((issue) =>
      describeIssue(declaration as unknown as CommandDeclaration, issue, input),
    );
    throw new UsageError([...new Set(messages)].join("\n"));
  }
  return { help: false, args: parsed.data as CommandArgs<F, K, P> };
}

function describeIssue(
  declaration: CommandDeclaration,
  issue: z.core.$ZodIssue,
  input: Record<string, unknown>,
): string {
  const key = String(issue.path[0]);
  if (key === declaration.positional?.key) return `${declaration.name} ${issue.message}`;
  const flag = declaration.flags[key]!;
  const name = `--${kebabCase(key)}`;
  const given = input[key];
  if (given === undefined)
    return `${declaration.name} needs ${name}${flag.value === undefined ? "" : ` ${flag.value}`}`;
  const expected =
    issue.code === "invalid_value" ? `expected one of ${issue.values.map(String).join(", ")}` : issue.message;
  return `${name}: ${expected}, got ${JSON.stringify(given)}${flag.note === undefined ? "" : ` (${flag.note})`}`;
}

function usageErrorFrom(error: CommanderError, declaration: CommandDeclaration): UsageError {
  // Commander's own wording, less its "error: " prefix; an unknown flag gets our did-you-mean.
  const message = error.message.replace(/^error: /, "");
  if (error.code !== "commander.unknownOption") return new UsageError(`${declaration.name}: ${message}`);
  const typed = /'([^']+)'/.exec(message)?.[1] ?? "";
  const known = [...Object.keys(declaration.flags), "help"].map((name) => `--${kebabCase(name)}`);
  const meant = nearestName(typed.split("=")[0]!, known);
  return new UsageError(
    `${declaration.name}: unknown flag ${typed}${meant === undefined ? "" : ` (did you mean ${meant}?)`}`,
  );
}
