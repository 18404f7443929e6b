import { type HotpotEvaluation, evaluateHotpotQa, readHotpotPredictions, readHotpotQa } from "@rubric/rlxar";
import { z } from "zod";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { switchFlag, textFlag } from "../flags/flag.js";
import { type CliIO, readText } from "../io.js";

const BENCHMARKS = ["hotpotqa"] as const;
type Benchmark = (typeof BENCHMARKS)[number];

const evalFlags = {
  predictions: textFlag("<preds.json>", 'the official predictions file: {"answer": {id: text}, "sp"?: {…}}').required(),
  data: textFlag(
    "<file.jsonl>",
    "the questions, in HotpotQA's schema (e.g. ../shared/data/hotpotqa/dev.jsonl)",
  ).required(),
  json: switchFlag('print one JSON object: {"count", "em", "f1", "arcoEm", "missing", "unknown", "perQuestion"}'),
};

export type EvalArgs = CommandArgs<typeof evalFlags, "benchmark", Benchmark>;

export const evalCommand = defineCommand({
  name: "eval",
  usage: "hotpotqa --predictions <preds.json> --data <file.jsonl> [--json]",
  description: `Scores answers as a benchmark's official script does.

  hotpotqa  exact match and token F1 with hotpot_evaluate_v1.py's normalisation (and its yes/no/
            noanswer rule for F1), averaged over every question of --data: a question without a
            prediction scores 0, as the official script counts it. ARCO's EM variant (a yes/no
            gold also counts when it starts the prediction) is reported beside EM as arcoEm.
            Predicted ids the data lacks are listed as unknown, never scored. "sp" is read for its
            shape only: no supporting-fact metric is computed.`,
  positional: {
    key: "benchmark",
    label: "hotpotqa",
    description: "which benchmark",
    schema: z.array(z.string()).transform((given, context) => {
      if (given.length === 1 && (BENCHMARKS as readonly string[]).includes(given[0]!)) return given[0] as Benchmark;
      context.addIssue({ code: "custom", message: `takes hotpotqa; got ${JSON.stringify(given.join(" "))}` });
      return z.NEVER;
    }),
  },
  flags: evalFlags,
  footer: "Exit codes: 0 scored, 1 bad input (every bad line or field is listed), 2 usage error.",
  run: (args, { io }) => evalHotpotQa(args, io),
});

const percent = (x: number) => `${(100 * x).toFixed(2)}`;

function summary(result: HotpotEvaluation, data: string): string {
  const lines = [
    `${result.count} questions of ${data}: EM ${percent(result.em)}, F1 ${percent(result.f1)}, ARCO's EM ${percent(result.arcoEm)} (%)`,
  ];
  const list = (ids: readonly string[]) => `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`;
  if (result.missing.length > 0)
    lines.push(`${result.missing.length} without a prediction, scored 0: ${list(result.missing)}`);
  if (result.unknown.length > 0)
    lines.push(
      `${result.unknown.length} predicted id${result.unknown.length === 1 ? "" : "s"} not in the data, not scored: ${list(result.unknown)}`,
    );
  return `${lines.join("\n")}\n`;
}

/** `rubric eval hotpotqa`: the official answer metrics, and ARCO's EM beside them. */
export function evalHotpotQa(args: EvalArgs, io: CliIO): number {
  const questions = readHotpotQa(readText(args.data), args.data);
  const predictions = readHotpotPredictions(readText(args.predictions), args.predictions);
  const result = evaluateHotpotQa(questions, predictions);
  if (args.json) {
    const { count, em, f1, arcoEm, missing, unknown, perQuestion } = result;
    io.out(`${JSON.stringify({ count, em, f1, arcoEm, missing, unknown, perQuestion })}\n`);
  } else io.out(summary(result, args.data));
  return 0;
}
