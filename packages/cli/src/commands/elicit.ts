import {
  DEFAULT_POLICY,
  GdpvalTaskAmbiguousError,
  GdpvalTaskNotFoundError,
  appendTurnsTo,
  findGdpvalTask,
  gymTask,
  llmManager,
  llmStakeholder,
  loadGdpval,
  policyManager,
  readManagerPolicy,
  runEpisode,
  simulatedStakeholder,
  terminalStakeholder,
  type GdpvalTask,
  type Manager,
  type Stakeholder,
} from "@rubric/autointeract";
import { providerFromSpec, type SpecifiedModel } from "@rubric/providers";
import { InputFileError, LLAMA_CPP_GDPVAL_CONTEXT, UsageError, gdpvalDir, integer, type CliIO } from "../io.js";

export const elicitHelp = `rubric elicit --task <task_id> --manager <kind> --out <transcript.jsonl> [options]

Runs one manager–stakeholder dialogue on a GDPval task and prints the dialogue and the rubric.

  --task <id>              a GDPval task id or a unique prefix of one (see ../shared/data/gdpval/tasks.jsonl)
  --stakeholder <kind>     sim (default: the rubric gym's simulated stakeholder) | llm:<provider>
                           (a model holding the task's gold rubric as an outline) | terminal (you)
  --manager <kind>         llm:<provider> | policy:<file.json> | policy:default
  --budget <n>             questions the manager may ask (default 5)
  --seed <n>               world seed for sim stakeholders and model sampling (default 0)
  --out <file>             transcript, one JSON line per turn, written as the dialogue happens
  --gdpval <dir>           GDPval data (default $RUBRIC_SHARED_DIR/data/gdpval or ../shared/data/gdpval)
  --context-size <n>       context window for llama-cpp models (default 8192: GDPval prompts with a
                           dialogue run to several thousand tokens)
  --json                   print exactly one JSON object {"rubric", "questions", "costs"} on stdout

<provider>: llama-cpp:<file.gguf> | hf:<model>[@<provider>] | openai-compatible:<baseUrl>#<model>`;

export interface ElicitArgs {
  readonly task?: string;
  readonly stakeholder?: string;
  readonly manager?: string;
  readonly budget?: string;
  readonly seed?: string;
  readonly out?: string;
  readonly gdpval?: string;
  readonly contextSize?: string;
  readonly json: boolean;
}

/** `--task`: a whole id or a unique prefix of one; no match is bad input, an ambiguous prefix a usage error. */
function taskFlag(tasks: readonly GdpvalTask[], wanted: string): GdpvalTask {
  try {
    return findGdpvalTask(tasks, wanted);
  } catch (error) {
    if (error instanceof GdpvalTaskNotFoundError) throw new InputFileError(`no GDPval task ${JSON.stringify(wanted)}`);
    if (error instanceof GdpvalTaskAmbiguousError) {
      const { candidates } = error;
      throw new UsageError(
        `--task ${JSON.stringify(wanted)} is a prefix of ${candidates.length} task ids (${candidates.slice(0, 5).join(", ")}${candidates.length > 5 ? ", …" : ""}); give more of it`,
      );
    }
    throw error;
  }
}

export async function elicit(args: ElicitArgs, io: CliIO): Promise<number> {
  if (!args.task) throw new UsageError("elicit needs --task <task_id>");
  if (!args.manager) throw new UsageError("elicit needs --manager llm:<provider> | policy:<file> | policy:default");
  if (!args.out) throw new UsageError("elicit needs --out <transcript.jsonl>");
  const budget = integer(args.budget, "--budget", 5, 0);
  const seed = integer(args.seed, "--seed", 0, 0);
  const dataset = await loadGdpval(gdpvalDir(args.gdpval));
  const task = taskFlag(dataset.tasks, args.task);
  const example = [...dataset.train, ...dataset.eval].find((e) => e.task.task_id === task.task_id);
  const brief = gymTask(task);
  const models: SpecifiedModel[] = [];
  const contextSize = integer(args.contextSize, "--context-size", LLAMA_CPP_GDPVAL_CONTEXT, 256);
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
        appendTurnsTo(args.out!)(turn);
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
