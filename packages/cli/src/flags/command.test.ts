import { ErrorPolicySchema } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { UsageError } from "../io.js";
import { commandHelp, defineCommand, parseCommand, reflow } from "./command.js";
import { choiceFlag, integerFlag, listFlag, switchFlag, textFlag } from "./flag.js";
import { inFlagTerms } from "./option-names.js";

const demo = defineCommand({
  name: "demo",
  usage: "--rubric <file> [options]",
  description: "A command to test the parser with.",
  flags: {
    rubric: textFlag("<file>", "rubric file").required(),
    errorsAs: choiceFlag("<policy>", "error policy", ErrorPolicySchema),
    maxN: integerFlag("<n>", "largest N", { min: 1 }).default(8),
    seeds: integerFlag("<n>", "seeds", { min: 1, max: 1000 }),
    taskIds: listFlag("<a,b>", "task ids"),
    ignoreGates: switchFlag("ignore gates"),
  },
  run: () => 0,
});

function usageMessage(argv: string[]): string {
  try {
    parseCommand(demo, argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`expected a usage error for ${argv.join(" ")}`);
}

describe("parseCommand", () => {
  it("maps --kebab-case flags to camelCase options, parsed by their schemas, with defaults", () => {
    const parsed = parseCommand(demo, [
      "--rubric",
      "r.json",
      "--errors-as",
      "zero",
      "--task-ids",
      "a, b,",
      "--ignore-gates",
    ]);
    expect(parsed).toEqual({
      help: false,
      args: { rubric: "r.json", errorsAs: "zero", maxN: 8, taskIds: ["a", "b"], ignoreGates: true },
    });
    const given = parseCommand(demo, ["--rubric=r.json", "--max-n=3"]);
    expect(given.help === false && given.args).toEqual({ rubric: "r.json", maxN: 3, ignoreGates: false });
  });

  it("rejects an unknown flag, naming the one a typo meant", () => {
    expect(usageMessage(["--rubric", "r", "--errors-az", "zero"])).toBe(
      "demo: unknown flag --errors-az (did you mean --errors-as?)",
    );
    expect(usageMessage(["--rubric", "r", "--frobnicate"])).toBe("demo: unknown flag --frobnicate");
  });

  it("names the flag whose value its schema rejects, with what it expects and what it got", () => {
    expect(usageMessage(["--rubric", "r", "--errors-as", "maybe"])).toBe(
      '--errors-as: expected one of fail, zero, renormalize, got "maybe"',
    );
    expect(usageMessage(["--rubric", "r", "--max-n", "0"])).toBe('--max-n: expected a positive integer, got "0"');
    expect(usageMessage(["--rubric", "r", "--max-n", "2.5"])).toBe('--max-n: expected a positive integer, got "2.5"');
    // A count that sizes work has a bound: a billion seeds is a usage error, not an aborted Node.
    expect(usageMessage(["--rubric", "r", "--seeds", "1000000000"])).toBe(
      '--seeds: expected an integer in 1..1000, got "1000000000"',
    );
    expect(usageMessage(["--rubric", "r", "--task-ids", ","])).toBe('--task-ids: expected at least one item, got ","');
  });

  it("names a missing required flag, and a flag given without its value", () => {
    expect(usageMessage(["--max-n", "3"])).toBe("demo needs --rubric <file>");
    expect(usageMessage(["--rubric"])).toMatch(/^demo: option '--rubric <file>' argument missing/);
  });

  it("refuses operands a command does not take", () => {
    expect(usageMessage(["--rubric", "r", "extra"])).toMatch(/^demo: too many arguments/);
  });

  it("answers --help (and -h) before checking required flags", () => {
    expect(parseCommand(demo, ["--help"])).toEqual({ help: true });
    expect(parseCommand(demo, ["-h", "--max-n", "0"])).toEqual({ help: true });
  });
});

describe("commandHelp", () => {
  it("lists every declared flag in its command-line spelling with its value and description", () => {
    const help = commandHelp(demo as never);
    expect(help).toMatch(/^Usage: rubric demo --rubric <file> \[options\]\n\nA command to test the parser with\./);
    for (const line of [
      "--rubric <file>",
      "--errors-as <policy>",
      "--max-n <n>",
      "--task-ids <a,b>",
      "--ignore-gates",
      "-h, --help",
    ])
      expect(help).toContain(line);
  });
});

describe("reflow (a description before commander wraps it)", () => {
  it("joins each plain paragraph's lines and keeps indented lines and blank lines as written", () => {
    const text =
      "Reproduces ARCO on HotpotQA: trains on the train file, evaluates greedily\nwith noise.\n\n  init   creates a μ\n         and exports it\nLast line.";
    expect(reflow(text)).toBe(
      "Reproduces ARCO on HotpotQA: trains on the train file, evaluates greedily with noise.\n\n  init   creates a μ\n         and exports it\nLast line.",
    );
  });

  it("leaves no word alone on a line in a real command's help", async () => {
    const { reproArcoCommand } = await import("../commands/repro-arco.js");
    const help = commandHelp(reproArcoCommand as never);
    const description = help.split("\n\n")[1]!.split("\n");
    expect(description.length).toBeGreaterThan(3);
    // Every line but the paragraph's last fills most of the width.
    for (const line of description.slice(0, -1)) expect(line.length).toBeGreaterThan(80);
  });
});

describe("inFlagTerms", () => {
  it("writes a library's option names as the command's flags", () => {
    expect(inFlagTerms('Pass errorsAs: "zero" or errorsAs: "renormalize" to score anyway.', demo.flags)).toBe(
      "Pass --errors-as zero or --errors-as renormalize to score anyway.",
    );
    expect(inFlagTerms("maxN must be ≥ 1; ignoreGates: true skips the gates", demo.flags)).toBe(
      "--max-n must be ≥ 1; --ignore-gates skips the gates",
    );
    // An option the command has no flag for keeps its library name.
    expect(inFlagTerms("raise contextSize", demo.flags)).toBe("raise contextSize");
    // A quoted name is a field of the user's file, not an option: it keeps its real name.
    expect(inFlagTerms('(root): unknown fields "errorsAs", "errors", "ignoreGates"', demo.flags)).toBe(
      '(root): unknown fields "errorsAs", "errors", "ignoreGates"',
    );
    expect(inFlagTerms("results.json: errorsAs: Invalid option", demo.flags)).toBe(
      "results.json: errorsAs: Invalid option",
    );
  });
});
