import { loadRubrics, parseWeightFile } from "@rubric/core";
import { prepareCriteria, rubricScorer, serveRewards } from "@rubric/verifiers";
import { type CommandArgs, defineCommand } from "../flags/command.js";
import { integerFlag, switchFlag, textFlag } from "../flags/flag.js";
import { verifierFlags, verifierOptions } from "../flags/verifier-flags.js";
import { type CliIO, UsageError, readJson, readText } from "../io.js";
import { judgeHint, judgeModel, preflightModel } from "../flags/judge-flags.js";
import { checkWeightIds, pick } from "./score.js";

const serveFlags = {
  rubric: textFlag("<file>", "rubric file (.json or .jsonl; flat or staged)").required(),
  task: textFlag("<id>", "which rubric of a multi-rubric file (GDPval task_id, flat id or category name)"),
  weights: textFlag("<file>", '{"weights": {"<criterionId>": weight}}: serve with these weights'),
  port: integerFlag("<n>", "port to listen on (default 8787; 0 = any free port, printed)", { min: 0 }).default(8787),
  host: textFlag("<address>", "address to bind (default 127.0.0.1; any other needs --token-env)").default("127.0.0.1"),
  tokenEnv: textFlag(
    "<VAR>",
    "environment variable holding a token that POST /score must carry as `Authorization: Bearer <token>`",
  ),
  maxBatch: integerFlag("<n>", "largest batch of completions accepted (default 4096; 413 above)", { min: 1 }).default(
    4096,
  ),
  maxBodyMb: integerFlag("<MiB>", "largest request body accepted (default 8; 413 above)", { min: 1 }).default(8),
  ...verifierFlags,
  quiet: switchFlag("no line per scored batch on stderr"),
};

export type ServeArgs = CommandArgs<typeof serveFlags, never, never>;

export const serveCommand = defineCommand({
  name: "serve",
  usage: "--rubric <file> [--port 8787] [--host 127.0.0.1] [--token-env VAR] [--judge <provider>] [options]",
  description: `Serves a rubric's rewards over HTTP, for trainers in Python (TRL, verl) or anything else.

  POST /score  {"prompts": [...], "completions": [...], "ids"?: [...]}
               → {"rewards": [...], "results": [...]}: one reward per completion, the normalised
               score, or null when an error verdict left it unscored (--errors-as fail, the
               default): never a made-up 0
  GET /health  {"ok": true, "name": <rubric id>}

Runs until interrupted (Ctrl-C or SIGTERM), finishing the batches in flight. The Python client and
TRL reward function: pip install ./python/rubric-reward (see its README).`,
  flags: serveFlags,
  footer: "Exit codes: 0 stopped by a signal; 1 invalid input; 2 usage error.",
  hint: (error, args) => judgeHint(error, args.judge),
  run: (args, { io }) => serve(args, io),
});

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export async function serve(args: ServeArgs, io: CliIO): Promise<number> {
  const rubric = pick(loadRubrics(readText(args.rubric), { source: args.rubric }), args.task, args.rubric);
  const weights = args.weights === undefined ? undefined : parseWeightFile(readJson(args.weights), args.weights);
  if (weights !== undefined) checkWeightIds(rubric, weights, args.weights!);
  let token: string | undefined;
  if (args.tokenEnv !== undefined) {
    token = process.env[args.tokenEnv];
    if (!token) throw new UsageError(`--token-env ${args.tokenEnv}: that variable is unset or empty`);
  } else if (!LOOPBACK.has(args.host))
    throw new UsageError(
      `--host ${args.host} lets other machines reach the server: give it a token with --token-env <VAR> (clients send it as a Bearer token)`,
    );
  // Built (and a local judge's model file checked) before the port opens: a server that cannot
  // score is refused at start, not on its first batch.
  const model = judgeModel(args);
  await preflightModel("--judge", args.judge, io, { apiKeyEnv: args.judgeKeyEnv, cache: args.cache });
  const options = verifierOptions(args, model, weights);
  const { registry } = options;
  // Every criterion must have a verifier that accepts its spec (an llm-judge criterion needs
  // --judge): refused now, with each problem, rather than as an error verdict on every request.
  try {
    prepareCriteria(rubric.rubric, registry);
  } catch (error) {
    await model?.dispose?.();
    throw error;
  }
  const scorer = rubricScorer(rubric.rubric, options);
  const id = rubric.kind === "flat" ? rubric.rubric.id : rubric.rubric.taskId;
  let server: Awaited<ReturnType<typeof serveRewards>>;
  try {
    server = await serveRewards(
      async (batch, signal) => {
        const started = performance.now();
        const results = await scorer(batch, signal);
        if (!args.quiet) {
          const unscored = results.filter((r) => r.score === null).length;
          io.err(
            `scored ${results.length} completion(s) in ${((performance.now() - started) / 1000).toFixed(2)} s` +
              (unscored === 0 ? "\n" : `; ${unscored} unscored (${firstCause(results)})\n`),
          );
        }
        return results;
      },
      {
        port: args.port,
        host: args.host,
        maxBatch: args.maxBatch,
        maxBodyBytes: args.maxBodyMb * 1024 * 1024,
        name: id,
        ...(token === undefined ? {} : { token }),
      },
    );
  } catch (error) {
    await model?.dispose?.();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new UsageError(
        `port ${args.port} on ${args.host} is in use: choose another with --port (0 = any free one)`,
      );
    throw error;
  }
  // Listening for the signals before the line that says the server is up: a supervisor that
  // stops it as soon as it reads that line must not kill it outright.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  io.out(
    `serving ${JSON.stringify(id)} at ${server.url} (POST /score, GET /health${token === undefined ? "" : "; Bearer token required"}); Ctrl-C stops\n`,
  );
  await stopped;
  io.err("stopping: finishing the batches in flight\n");
  await server.close();
  await model?.dispose?.();
  return 0;
}

/** The first error verdict's criterion and message among a batch's results. */
function firstCause(results: Awaited<ReturnType<ReturnType<typeof rubricScorer>>>): string {
  for (const result of results) {
    const failed = result.verdicts.find((v) => v.status === "error");
    if (failed !== undefined) return `first: ${failed.criterionId}: ${failed.error ?? "error verdict"}`;
    if (result.scoreError !== undefined) return `first: ${result.scoreError}`;
  }
  return "no cause given";
}
