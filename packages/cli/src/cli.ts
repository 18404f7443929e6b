import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { InputFileError, UsageError, type CliIO } from "./io.js";
import { score, scoreHelp } from "./commands/score.js";
import { schema, schemaHelp } from "./commands/schema.js";
import { suggest } from "./suggest.js";
import { validate, validateHelp } from "./commands/validate.js";

const help = `rubric — rubrics (flat weighted or staged GDPval-style): validate, score, elicit, train and probe them

Usage:
  rubric validate <file>...                       check rubric files, every error with its path
  rubric score --rubric <file> --verdicts <file>  score stored verdicts against a rubric
  rubric score --rubric <file> --outputs <file>   run the verifiers on outputs and score them
  rubric schema <flat|staged|staged-record>       print a JSON Schema
  rubric elicit --task <id> --manager <kind> --out <file>   a manager–stakeholder dialogue
  rubric repro arcane [--quick] --out <dir>       reproduce the ARCANE tables (gym, or --provider)
  rubric hackbench --rubric <file> --samples <file> --out <card.json>   probe a rubric reward for hacks
  rubric help <command>                           details of one command

Exit codes: 0 success, 1 invalid input or unscorable verdicts, 2 usage error or error verdicts;
hackbench: 0 clean, 3 hackable, 2 error.`;

const COMMANDS = ["validate", "score", "schema", "elicit", "repro", "hackbench", "help"];

const helps: Record<string, string> = { validate: validateHelp, score: scoreHelp, schema: schemaHelp };

// Errors that describe bad input: printed as one clean message, never as a stack trace.
const INPUT_ERRORS = new Set([
  "RubricValidationError",
  "VerificationSetupError",
  "ProviderSpecError",
  "ProviderConfigError",
  "VerdictValidationError",
  "CriterionErrorsError",
  "ScoringError",
  "InputFileError",
  "CheckpointError",
  "GdpvalDataError",
]);

function version(): string {
  return (createRequire(import.meta.url)("../package.json") as { version: string }).version;
}

/**
 * Runs the `rubric` command with the given arguments, writing through `io`; returns the exit code.
 *
 * @example
 * const code = await runCli(["validate", "rubrics.jsonl"], { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
 */
export async function runCli(argv: readonly string[], io: CliIO, options: { isTTY?: boolean } = {}): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h": {
        const topic = rest[0];
        if (topic === "elicit") return (io.out(`${(await import("./commands/elicit.js")).elicitHelp}\n`), 0);
        if (topic === "repro") return (io.out(`${(await import("./commands/repro.js")).reproHelp}\n`), 0);
        if (topic === "hackbench") return (io.out(`${(await import("./commands/hackbench.js")).hackbenchHelp}\n`), 0);
        io.out(`${topic !== undefined && helps[topic] ? helps[topic] : help}\n`);
        return 0;
      }
      case "--version":
      case "-v":
        io.out(`${version()}\n`);
        return 0;
      case "validate": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { json: { type: "boolean", default: false }, help: { type: "boolean", short: "h" } },
        });
        if (values.help) return (io.out(`${validateHelp}\n`), 0);
        if (positionals.length === 0) throw new UsageError("validate needs at least one file");
        return validate(positionals, { json: values.json ?? false }, io);
      }
      case "score": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: false,
          options: {
            rubric: { type: "string" },
            task: { type: "string" },
            verdicts: { type: "string" },
            weights: { type: "string" },
            outputs: { type: "string" },
            judge: { type: "string" },
            "judge-mode": { type: "string" },
            samples: { type: "string" },
            concurrency: { type: "string" },
            cache: { type: "string" },
            "ignore-gates": { type: "boolean", default: false },
            "errors-as": { type: "string" },
            json: { type: "boolean", default: false },
            help: { type: "boolean", short: "h" },
          },
        });
        void positionals;
        if (values.help) return (io.out(`${scoreHelp}\n`), 0);
        return await score(
          {
            ...(values.rubric === undefined ? {} : { rubric: values.rubric }),
            ...(values.task === undefined ? {} : { task: values.task }),
            ...(values.verdicts === undefined ? {} : { verdicts: values.verdicts }),
            ...(values.weights === undefined ? {} : { weights: values.weights }),
            ...(values.outputs === undefined ? {} : { outputs: values.outputs }),
            ...(values.judge === undefined ? {} : { judge: values.judge }),
            ...(values["judge-mode"] === undefined ? {} : { judgeMode: values["judge-mode"] }),
            ...(values.samples === undefined ? {} : { samples: values.samples }),
            ...(values.concurrency === undefined ? {} : { concurrency: values.concurrency }),
            ...(values.cache === undefined ? {} : { cache: values.cache }),
            ...(values["errors-as"] === undefined ? {} : { errorsAs: values["errors-as"] }),
            ignoreGates: values["ignore-gates"] ?? false,
            json: values.json ?? false,
          },
          io,
          options.isTTY ?? false,
        );
      }
      case "schema":
        if (rest.includes("--help") || rest.includes("-h")) return (io.out(`${schemaHelp}\n`), 0);
        return schema(rest[0], io);
      case "elicit": {
        const { values } = parseArgs({
          args: rest,
          allowPositionals: false,
          options: {
            task: { type: "string" },
            stakeholder: { type: "string" },
            manager: { type: "string" },
            budget: { type: "string" },
            seed: { type: "string" },
            out: { type: "string" },
            gdpval: { type: "string" },
            "context-size": { type: "string" },
            json: { type: "boolean", default: false },
            help: { type: "boolean", short: "h" },
          },
        });
        // Loaded on demand, like the verifiers: the dialogue stack is not needed to validate or score.
        const { elicit, elicitHelp } = await import("./commands/elicit.js");
        if (values.help) return (io.out(`${elicitHelp}\n`), 0);
        const { help: _help, "context-size": contextSize, ...rest2 } = values;
        return await elicit(
          { ...rest2, ...(contextSize === undefined ? {} : { contextSize }), json: values.json ?? false } as Parameters<
            typeof elicit
          >[0],
          io,
        );
      }
      case "repro": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            out: { type: "string" },
            quick: { type: "boolean", default: false },
            seeds: { type: "string" },
            objective: { type: "string" },
            "eps-low": { type: "string" },
            "eps-high": { type: "string" },
            batches: { type: "string" },
            resume: { type: "boolean", default: false },
            gdpval: { type: "string" },
            provider: { type: "string" },
            tasks: { type: "string" },
            "max-n": { type: "string" },
            "context-size": { type: "string" },
            "task-ids": { type: "string" },
            "errors-as": { type: "string" },
            threads: { type: "string" },
            help: { type: "boolean", short: "h" },
          },
        });
        // Loaded on demand: training and the gym are not needed by the other commands.
        const { repro, reproHelp } = await import("./commands/repro.js");
        if (values.help) return (io.out(`${reproHelp}\n`), 0);
        if (positionals.length > 1) throw new UsageError(`repro takes one experiment, got ${positionals.join(" ")}`);
        const {
          help: _h,
          "eps-low": epsLow,
          "eps-high": epsHigh,
          "context-size": contextSize,
          "max-n": maxN,
          "task-ids": taskIds,
          "errors-as": errorsAs,
          ...flags
        } = values;
        return await repro(
          {
            ...flags,
            ...(positionals[0] === undefined ? {} : { experiment: positionals[0] }),
            ...(epsLow === undefined ? {} : { epsLow }),
            ...(epsHigh === undefined ? {} : { epsHigh }),
            ...(contextSize === undefined ? {} : { contextSize }),
            ...(maxN === undefined ? {} : { maxN }),
            ...(taskIds === undefined ? {} : { taskIds }),
            ...(errorsAs === undefined ? {} : { errorsAs }),
            quick: values.quick ?? false,
            resume: values.resume ?? false,
          },
          io,
          options.isTTY ?? false,
        );
      }
      case "hackbench": {
        const { values } = parseArgs({
          args: rest,
          allowPositionals: false,
          options: {
            rubric: { type: "string" },
            task: { type: "string" },
            samples: { type: "string" },
            judge: { type: "string" },
            probes: { type: "string" },
            threshold: { type: "string" },
            seed: { type: "string" },
            cache: { type: "string" },
            concurrency: { type: "string" },
            out: { type: "string" },
            help: { type: "boolean", short: "h" },
          },
        });
        // Loaded on demand: the probes and the verifiers are not needed by the other commands.
        const { hackbench, hackbenchHelp } = await import("./commands/hackbench.js");
        if (values.help) return (io.out(`${hackbenchHelp}\n`), 0);
        const { help: _help, ...flags } = values;
        return await hackbench(flags, io);
      }
      default: {
        const meant = suggest(command, COMMANDS);
        throw new UsageError(
          `unknown command ${JSON.stringify(command)}${meant === undefined ? "" : ` (did you mean "${meant}"?)`}`,
        );
      }
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.err(`rubric: ${(error as Error).message}\nRun \`rubric help\` for usage.\n`);
      return 2;
    }
    if (error instanceof InputFileError || INPUT_ERRORS.has((error as Error).name)) {
      io.err(`${(error as Error).name}: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  }
}
