import { createRequire } from "node:module";
import { exitCodeFor, exitCodeTable } from "./exit-codes.js";
import { type CommandDeclaration, commandHelp, parseCommand } from "./flags/command.js";
import { inFlagTerms } from "./flags/option-names.js";
import { UsageError, type CliIO } from "./io.js";
import { nearestName } from "@rubric/core";

/**
 * A command module's declaration, widened once here: each declares its own flag types, the
 * dispatcher only needs the common shape.
 */
async function declaration<M, K extends keyof M>(module: Promise<M>, key: K): Promise<CommandDeclaration> {
  return (await module)[key] as unknown as CommandDeclaration;
}

/**
 * The commands, each loaded only when it runs or its help is asked for: the dialogue stack,
 * training and the verifiers are not needed to validate or score stored verdicts.
 */
const COMMANDS: Readonly<
  Record<
    string,
    {
      readonly summary: string;
      /** The declaration for these operands: a command whose experiments take flags of their own picks one by its first operand. */
      readonly load: (rest: readonly string[]) => Promise<CommandDeclaration>;
    }
  >
> = {
  validate: {
    summary: "check rubric files, every error with its path",
    load: () => declaration(import("./commands/validate.js"), "validateCommand"),
  },
  score: {
    summary: "score stored verdicts (--verdicts) or run the verifiers on outputs (--outputs)",
    load: () => declaration(import("./commands/score.js"), "scoreCommand"),
  },
  report: {
    summary: "a self-contained HTML audit of score results, with live reweighting",
    load: () => declaration(import("./commands/report.js"), "reportCommand"),
  },
  schema: {
    summary: "print the JSON Schema of a rubric file form",
    load: () => declaration(import("./commands/schema.js"), "schemaCommand"),
  },
  elicit: {
    summary: "a manager–stakeholder dialogue on a GDPval task",
    load: () => declaration(import("./commands/elicit.js"), "elicitCommand"),
  },
  repro: {
    summary:
      "reproduce the papers: ARCANE (in the gym, or with --provider), ARCO on HotpotQA (repro arco) and in its gym (repro arco-gym)",
    load: (rest) =>
      rest[0] === "arco"
        ? declaration(import("./commands/repro-arco.js"), "reproArcoCommand")
        : rest[0] === "arco-gym"
          ? declaration(import("./commands/repro-arco-gym.js"), "reproArcoGymCommand")
          : declaration(import("./commands/repro.js"), "reproCommand"),
  },
  hackbench: {
    summary: "probe a rubric reward for hacks",
    load: () => declaration(import("./commands/hackbench.js"), "hackbenchCommand"),
  },
  eval: {
    summary: "score a benchmark's predictions as its official script does (hotpotqa: EM, F1, ARCO's EM)",
    load: () => declaration(import("./commands/eval.js"), "evalCommand"),
  },
  serve: {
    summary: "serve a rubric's rewards over HTTP (POST /score) for trainers: TRL, verl, anything",
    load: () => declaration(import("./commands/serve.js"), "serveCommand"),
  },
  mu: {
    summary: "ARCO's rubric model μ: init a model, train it on your runs, write and score the criteria of agent steps",
    load: () => declaration(import("./commands/mu.js"), "muCommand"),
  },
};

function rootHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length), "help <command>".length);
  const lines = [
    ...Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`),
    `  ${"help <command>".padEnd(width)}  the flags of one command (also: rubric <command> --help)`,
  ];
  return `rubric — rubrics (flat weighted or staged GDPval-style): validate, score, elicit, train and probe them

Usage: rubric <command> [options]

Commands:
${lines.join("\n")}

${exitCodeTable()}
`;
}

function version(): string {
  return (createRequire(import.meta.url)("../package.json") as { version: string }).version;
}

function known(name: string): (typeof COMMANDS)[string] {
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry) return entry;
  const meant = nearestName(name, [...Object.keys(COMMANDS), "help"]);
  throw new UsageError(
    `unknown command ${JSON.stringify(name)}${meant === undefined ? "" : ` (did you mean "${meant}"?)`}`,
  );
}

/**
 * The command `argv` names and its parsed options, without running it (the README test parses
 * every documented command line this way). @throws UsageError as {@link runCli} reports it.
 */
export async function parseArgv(
  argv: readonly string[],
): Promise<{ readonly declaration: CommandDeclaration } & ReturnType<typeof parseCommand>> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("no command given");
  const declaration = await known(name).load(rest);
  return { declaration, ...parseCommand(declaration, rest) };
}

/**
 * Runs the `rubric` command with the given arguments, writing through `io`; returns the exit code.
 *
 * @example
 * const code = await runCli(["validate", "rubrics.jsonl"], { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
 */
export async function runCli(argv: readonly string[], io: CliIO, options: { isTTY?: boolean } = {}): Promise<number> {
  const [name, ...rest] = argv;
  let declaration: CommandDeclaration | undefined;
  let hint: ((error: Error) => string | undefined) | undefined;
  try {
    if (name === undefined || name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
      io.out(rootHelp());
      return 0;
    }
    if (name === "--version" || name === "-v") {
      io.out(`${version()}\n`);
      return 0;
    }
    if (name === "help") {
      if (rest.length > 2) throw new UsageError(`help takes a command (and its experiment), got ${rest.join(" ")}`);
      io.out(commandHelp(await known(rest[0]!).load(rest.slice(1))));
      return 0;
    }
    declaration = await known(name).load(rest);
    const parsed = parseCommand(declaration, rest);
    if (parsed.help) {
      io.out(commandHelp(declaration));
      return 0;
    }
    const { args } = parsed;
    hint = (error) => declaration?.hint?.(error, args);
    return await declaration.run(args, { io, isTTY: options.isTTY ?? false });
  } catch (error) {
    const exit = exitCodeFor(error, declaration?.name);
    if (exit === undefined) throw error;
    const { name: kind, message } = error as Error;
    if (error instanceof UsageError) {
      const help = declaration === undefined ? "rubric help" : `rubric help ${declaration.name}`;
      io.err(`rubric: ${message}\nRun \`${help}\` for usage.\n`);
    } else {
      // A library names its options; the user typed flags.
      const text = declaration === undefined ? message : inFlagTerms(message, declaration.flags);
      const extra = hint?.(error as Error);
      io.err(`${kind}: ${text}\n${extra === undefined ? "" : `${extra}\n`}`);
    }
    return exit;
  }
}
