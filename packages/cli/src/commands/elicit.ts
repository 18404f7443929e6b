import {
  DEFAULT_POLICY,
  appendTurnsTo,
  gymTask,
  llmManager,
  llmStakeholder,
  loadGdpval,
  policyManager,
  readManagerPolicy,
  runEpisode,
  simulatedStakeholder,
  terminalStakeholder,
  type Manager,
  type Stakeholder,
} from "@rubric/autointeract";
import { providerFromSpec, type SpecifiedModel } from "@rubric/providers";
import { writeFileSync } from "node:fs";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { integerFlag, switchFlag, textFlag } from "../flags/flag.js";
import { InputFileError, LLAMA_CPP_GDPVAL_CONTEXT, UsageError, gdpvalDir, gdpvalTaskFlag, type CliIO } from "../io.js";
import { prepareResultFiles } from "../results/result-files.js";

const elicitFlags = {
  task: textFlag(
    "<id>",
    "a GDPval task id or a unique prefix of one (see ../shared/data/gdpval/tasks.jsonl)",
  ).required(),
  stakeholder: textFlag(
    "<kind>",
    "sim (default: the rubric gym's simulated stakeholder) | llm:<provider> (a model holding the task's gold rubric as an outline) | terminal (you)",
  ),
  manager: textFlag("<kind>", "llm:<provider> | policy:<file.json> | policy:default").required(),
  budget: integerFlag("<n>", "questions the manager may ask (default 5)", { min: 0 }).default(5),
  seed: integerFlag("<n>", "world seed for sim stakeholders and model sampling (default 0)", { min: 0 }).default(0),
  out: textFlag("<file>", "transcript, one JSON line per turn, written as the dialogue happens").required(),
  force: switchFlag("replace an existing transcript (default: refuse, before the dialogue starts)"),
  gdpval: textFlag("<dir>", "GDPval data (default $RUBRIC_SHARED_DIR/data/gdpval or ../shared/data/gdpval)"),
  contextSize: integerFlag(
    "<n>",
    `context window for llama-cpp models (default ${LLAMA_CPP_GDPVAL_CONTEXT}: GDPval prompts with a dialogue run to several thousand tokens)`,
    { min: 256 },
  ).default(LLAMA_CPP_GDPVAL_CONTEXT),
  json: switchFlag('print exactly one JSON object {"rubric", "questions", "costs"} on stdout'),
};

export type ElicitArgs = CommandArgs<typeof elicitFlags, never, never>;

export const elicitCommand = defineCommand({
  name: "elicit",
  usage: "--task <task_id> --manager <kind> --out <transcript.jsonl> [options]",
  description: "Runs one manager–stakeholder dialogue on a GDPval task and prints the dialogue and the rubric.",
  flags: elicitFlags,
  footer: "<provider>: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>",
  run: (args, { io }) => elicit(args, io),
});

export async function elicit(args: ElicitArgs, io: CliIO): Promise<number> {
  const { budget, seed, contextSize } = args;
  const dataset = await loadGdpval(gdpvalDir(args.gdpval));
  const task = gdpvalTaskFlag(dataset.tasks, args.task, "--task");
  const example = [...dataset.train, ...dataset.eval].find((e) => e.task.task_id === task.task_id);
  const brief = gymTask(task);
  // One transcript per file: a second run appending its dialogue to the first's made both unreadable as one episode.
  prepareResultFiles([{ path: args.out, what: "a transcript" }], args.force);
  if (args.force) writeFileSync(args.out, "");
  const models: SpecifiedModel[] = [];
  const model = (spec: string) => {
    const m = providerFromSpec(spec, { llamaCpp: { contextSize } });
    models.push(m);
    return m;
  };
  try {
    const kind = args.stakeholder ?? "sim";
    let stakeholder: Stakeholder;
    if (kind === "sim") stakeholder = simulatedStakeholder(brief, seed);
    else if (kind === "terminal") stakeholder = terminalStakeholder({ input: process.stdin, output: process.stderr });
    else if (kind.startsWith("llm:")) {
      if (!example) throw new InputFileError(`task ${task.task_id} has no gold rubric for an llm stakeholder to hold`);
      stakeholder = llmStakeholder(model(kind.slice(4)), { rubric: example.rubric, seed });
    } else throw new UsageError(`--stakeholder must be sim, terminal or llm:<provider>, got ${JSON.stringify(kind)}`);
    let manager: Manager;
    if (args.manager.startsWith("llm:"))
      manager = llmManager(model(args.manager.slice(4)), { questions: budget, seed });
    else if (args.manager === "policy:default") manager = policyManager(DEFAULT_POLICY);
    else if (args.manager.startsWith("policy:")) {
      try {
        manager = policyManager(readManagerPolicy(args.manager.slice(7)));
      } catch (error) {
        throw new InputFileError((error as Error).message);
      }
    } else
      throw new UsageError(`--manager must be llm:<provider> or policy:<file>, got ${JSON.stringify(args.manager)}`);

    const show = args.json ? io.err : io.out;
    const result = await runEpisode({
      task: brief,
      manager,
      stakeholder,
      questionBudget: budget,
      onTurn: (turn) => {
        appendTurnsTo(args.out)(turn);
        if (turn.type === "question") show(`Q${turn.index + 1}: ${turn.text}\n`);
        if (turn.type === "answer") show(`A${turn.index + 1}: ${turn.text}\n`);
      },
    });
    if (result.error) {
      io.err(
        `${result.error.name} (${result.error.role}): ${result.error.message}\nThe transcript so far is in ${args.out}.\n`,
      );
      return 1;
    }
    const rubric = result.rubric!;
    if (args.json) io.out(`${JSON.stringify({ rubric, questions: result.costs.questions, costs: result.costs })}\n`);
    else {
      io.out(`\nRubric ${rubric.id} (${rubric.criteria.length} criteria):\n`);
      for (const c of rubric.criteria) io.out(`  [${c.weight}] ${c.text}  (${c.verifier.kind})\n`);
      io.out(
        `\ncosts: ${result.costs.questions} question(s), C_clarify ${result.costs.clarify}, ${result.costs.tokens} tokens, $${result.costs.usd.toFixed(6)}\n`,
      );
    }
    return 0;
  } finally {
    for (const m of models) await m.dispose?.();
  }
}
