import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArcaneLlmTableSchema } from "@rubric/repro";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { runRubric } from "./__fixtures__/run-cli.js";

/**
 * `rubric repro arcane --provider` as a user runs it: the built binary on the real GDPval data,
 * the roles played by a model behind an OpenAI-compatible server on 127.0.0.1. A file apart from
 * the gym's (repro.test.ts), so that the two run side by side.
 */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../shared/", import.meta.url));
const GDPVAL = join(SHARED, "data/gdpval");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rubric-repro-provider-"));
});

/**
 * A minimal valid instance of a JSON schema (objects, arrays, enums, strings, numbers), with
 * enum choices drawn by a counter so that judges' scores vary: enough for every structured
 * reply the roles ask for (questions, rubrics, per-criterion verdicts).
 */
function instance(schema: Record<string, unknown>, counter: { n: number }): unknown {
  if (Array.isArray(schema["enum"])) {
    const values = schema["enum"] as unknown[];
    return values[counter.n++ % values.length];
  }
  switch (schema["type"]) {
    case "object": {
      const properties = (schema["properties"] ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, instance(s, counter)]));
    }
    case "array":
      return Array.from({ length: Math.max(1, Number(schema["minItems"] ?? 1)) + (counter.n++ % 2) }, () =>
        instance(schema["items"] as Record<string, unknown>, counter),
      );
    case "number":
    case "integer":
      return Number(schema["minimum"] ?? 1);
    default:
      return `The report covers the schedule, the budget and the main risks of item ${counter.n++}.`;
  }
}

describe("rubric repro arcane --provider (OpenAI-compatible server)", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    const counter = { n: 0 };
    server = await startOpenAIChatServer({
      handler: (request) => {
        const schema = request.body?.response_format?.json_schema?.schema as Record<string, unknown> | undefined;
        if (schema) return chatReply.json(instance(schema, counter));
        return chatReply.completion(
          `# Report ${counter.n++}\n\n| Item | Cost |\n|---|---|\n| Staff | $1,200 |\n\nWe recommend proceeding; see [1].`,
        );
      },
    });
  });
  afterAll(() => server.close());

  /** `rubric repro arcane --quick` with every role played by the server, on the real GDPval data. */
  const arcaneWithServer = (out: string, ...flags: string[]) =>
    runRubric([
      "repro",
      "arcane",
      "--provider",
      `openai-compatible:${server.url}#judge-model`,
      "--quick",
      ...flags,
      "--gdpval",
      GDPVAL,
      "--out",
      out,
    ]);

  it("trains the managers in the gym, then runs the LLM-roles pipeline on a real GDPval task: dialogue, guided best-of-N, gold-rubric U*", {
    timeout: 300_000,
  }, async () => {
    const out = join(dir, "llm");
    const run = await arcaneWithServer(out, "--batches", "2", "--task-ids", "b57efde3", "--max-n", "4");
    const table = ArcaneLlmTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    const errors = table.tasks.flatMap((t) => t.errors);
    // Scores that could not be computed are listed and make the exit code 2; nothing else does.
    expect(run.code, run.stderr).toBe(errors.length > 0 ? 2 : 0);
    expect(run.stderr).toMatch(/seed 1 GSPO batches/);
    expect(table.training).toMatchObject({ seed: 1, gspoBatches: 2, objective: "gspo" });
    expect(table.ns).toEqual([1, 2, 4]);
    expect(table.tasks.map((t) => t.taskId.slice(0, 8))).toEqual(["b57efde3"]);
    const [task] = table.tasks;
    expect(task!.questions.manager).toBe(2);
    expect(task!.rubrics.manager).not.toBeNull();
    // The gym-trained managers wrote rubrics over the criteria bank for this real task.
    for (const method of ["sft", "gspo"] as const)
      expect((task!.rubrics[method] as { criteria: unknown[] } | null)?.criteria.length).toBeGreaterThan(0);
    for (const method of ["noRubric", "manager", "sft", "gspo", "oracle"] as const)
      expect(task!.returns[method]).toHaveLength(3);
    // The trained managers' rubrics are rules: their NDCG needs no judge and is always computed here.
    expect(task!.ndcg8.sft).not.toBeNull();
    // Every role was played by the server: manager, stakeholder (also answering the trained managers' repertoire), worker, judge.
    const systems = server.requests.map((r) => r.body?.messages?.[0]?.content ?? "");
    expect(systems.some((s) => s.startsWith("You are a manager."))).toBe(true);
    expect(systems.filter((s) => s.startsWith("You commissioned a piece of work")).length).toBeGreaterThanOrEqual(
      2 + 6,
    );
    expect(systems.some((s) => s.startsWith("You are a careful professional."))).toBe(true);
    expect(systems.some((s) => s.startsWith("You are a strict, fair evaluator."))).toBe(true);
    expect(readFileSync(join(out, "table.md"), "utf8")).toContain("| GSPO (gym-trained) |");
    // A task id that matches nothing is bad input, named.
    const unknown = await arcaneWithServer(join(dir, "llm-unknown"), "--batches", "1", "--task-ids", "zzzz");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--task-ids: no GDPval eval task "zzzz"/);
    // Caught before any training, and as one line, not a stack trace.
    expect(unknown.stderr).not.toMatch(/GSPO batches|Training the managers|\n\s+at /);
    const policy = await arcaneWithServer(join(dir, "llm-zero"), "--errors-as", "zero");
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(
      /--errors-as: expected one of fail, renormalize, got "zero" \(an error is never counted as 0\)/,
    );
  });

  it("a judge that always fails yields exit 2 and listed errors, never zeros", { timeout: 300_000 }, async () => {
    const counter = { n: 0 };
    server.setHandler((request) => {
      const schema = request.body?.response_format?.json_schema?.schema as Record<string, unknown> | undefined;
      const judging = request.body?.messages?.[0]?.content?.startsWith("You are a strict, fair evaluator.") ?? false;
      if (judging) return chatReply.error(400, "judge refused");
      if (schema) return chatReply.json(instance(schema, counter));
      return chatReply.completion("A plain report.");
    });
    const out = join(dir, "llm-failing");
    const run = await arcaneWithServer(out, "--batches", "1", "--tasks", "1", "--max-n", "2");
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/could not be computed.*never counted as 0/);
    const table = ArcaneLlmTableSchema.parse(JSON.parse(readFileSync(join(out, "table.json"), "utf8")));
    expect(table.tasks[0]!.errors.length).toBeGreaterThan(0);
    // Every gold score needs the judge: no method has a return, and none is a 0.
    for (const method of ["noRubric", "manager", "sft", "gspo", "oracle"] as const)
      expect(table.tasks[0]!.returns[method].every((r) => r === null)).toBe(true);
    expect(table.pairedTasks).toEqual({ n1: 0, n8: 0 });
    // Renormalising cannot score a gate made only of judge criteria either: still no U*, still
    // listed (one output per method is enough to show it).
    const renormalized = await arcaneWithServer(
      join(dir, "llm-renormalize"),
      "--batches",
      "1",
      "--tasks",
      "1",
      "--max-n",
      "1",
      "--errors-as",
      "renormalize",
    );
    expect(renormalized.code, renormalized.stderr).toBe(2);
    const again = ArcaneLlmTableSchema.parse(
      JSON.parse(readFileSync(join(dir, "llm-renormalize", "table.json"), "utf8")),
    );
    expect(again.errorsAs).toBe("renormalize");
    expect(again.tasks[0]!.returns.oracle).toEqual([null]);
    expect(again.tasks[0]!.errors.join("\n")).toMatch(/nothing to renormalise/);
  });
});
