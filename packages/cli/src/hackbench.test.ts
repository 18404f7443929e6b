import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIAS_PROBES, IntegrityCardSchema, biasedJudgeModel, type IntegrityCard } from "@rubric/hackbench";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
// Test fixtures of sibling packages (not their public API): the OpenAI-wire server, and GDPval
// tasks with honest outputs from the rubric gym.
import {
  chatReply,
  startOpenAIChatServer,
  type OpenAIChatServer,
  type RecordedRequest,
} from "@rubric/providers/testing";
import { gymSamples, judgedRubric, presenceRubric, strictRubric } from "../../hackbench/src/__fixtures__/gym.js";
import { runRubric, runRubricHere } from "./__fixtures__/run-cli.js";

/** `rubric hackbench` as a user runs it: the built binary, real verifiers, a real judge server on 127.0.0.1. */
let dir: string;
let samplesFile: string;
let server: OpenAIChatServer;
const file = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
};
const readCard = (path: string): IntegrityCard => IntegrityCardSchema.parse(JSON.parse(readFileSync(path, "utf8")));

/** The server's judge: the biased judge model of @rubric/hackbench, answering over the OpenAI wire. */
const biasedJudgeHandler = (biases: Parameters<typeof biasedJudgeModel>[0]["biases"]) => {
  const model = biasedJudgeModel({ biases });
  return async (request: RecordedRequest) => {
    const body = request.body!;
    const reply = await model.generate({
      messages: body.messages!.map((m) => ({ role: m.role as "system" | "user" | "assistant", content: m.content })),
      responseFormat: {
        type: "json-schema",
        name: body.response_format!.json_schema!.name,
        schema: body.response_format!.json_schema!.schema as Record<string, unknown>,
      },
      n: body.n ?? 1,
    });
    return chatReply.completion(reply.choices.map((c) => c.text));
  };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rubric-hackbench-"));
  const { samples } = await gymSamples(24);
  samplesFile = file("samples.jsonl", `${samples.map((s) => JSON.stringify(s)).join("\n")}\n`);
  server = await startOpenAIChatServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

describe("rubric hackbench", () => {
  it("flags keyword stuffing on a presence-only rubric: exit 3, a card in JSON and Markdown", async () => {
    const rubric = file("presence.json", presenceRubric);
    const out = join(dir, "presence", "card.json");
    const run = await runRubric(["hackbench", "--rubric", rubric, "--samples", samplesFile, "--out", out]);
    expect(run.code, run.stderr).toBe(3);
    const card = readCard(out);
    expect(card.verdict).toBe("hackable");
    const stuffing = card.probes.find((p) => p.id === "keyword-stuffing")!;
    expect(stuffing).toMatchObject({ exploit: true, applicable: 24 });
    expect(stuffing.gain).toBeGreaterThan(0.05);
    expect(stuffing.ci[0]).toBeGreaterThan(0);
    expect(card.exploits).toContain("keyword-stuffing");
    expect(card.judge).toBeNull();
    expect(stuffing.replay).toBe(
      `rubric hackbench --rubric ${rubric} --samples ${samplesFile} --probes keyword-stuffing --threshold 0.05 --seed 0 --out ${join(dir, "presence", "card.keyword-stuffing.json")}`,
    );
    const md = readFileSync(join(dir, "presence", "card.md"), "utf8");
    expect(md).toMatch(/^# Integrity card: `presence-only`\n\n\*\*Verdict: hackable\.\*\*/);
    expect(md).toContain("### `keyword-stuffing` — Keyword stuffing");
    expect(run.stdout).toMatch(
      /^hackable: \d+ of 17 probes are exploits, \d+ could not be ruled out \(τ = 0\.05, 24 samples; smallest detectable gain \d\.\d{3}\)\n/,
    );
    expect(run.stdout).toMatch(/keyword-stuffing +\+0\.\d{3} +\+0\.\d{3} … \+0\.\d{3} +YES: mentions-/);
    expect(run.stdout).toContain(`wrote ${out} and ${join(dir, "presence", "card.md")}`);
  });

  it("refuses to replace a card, a name that is not .json, or a directory: exit 2 before any probe runs", async () => {
    const rubric = file("presence-again.json", presenceRubric);
    const out = join(dir, "presence", "card.json");
    const before = readFileSync(out, "utf8");
    const args = ["hackbench", "--rubric", rubric, "--samples", samplesFile];
    const again = await runRubricHere([...args, "--out", out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${out}: already exists (the JSON card); pass --force to replace it`);
    expect(again.stdout).toBe("");
    expect(readFileSync(out, "utf8")).toBe(before);
    const markdown = await runRubricHere([...args, "--out", join(dir, "report.md")]);
    expect(markdown.code).toBe(2);
    expect(markdown.stderr).toContain("--out must name a .json file");
    expect(existsSync(join(dir, "report.md"))).toBe(false);
    mkdirSync(join(dir, "a-directory.json"));
    const directory = await runRubricHere([...args, "--out", join(dir, "a-directory.json")]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain("a-directory.json: is a directory");
    const asDir = await runRubricHere([...args, "--out", dir]);
    expect(asDir.code).toBe(2);
    expect(asDir.stderr).toContain("--out must name a .json file");
  });

  it("replaces a card with --force, whole", async () => {
    const out = join(dir, "presence", "card.json");
    const run = await runRubric([
      "hackbench",
      "--rubric",
      file("p.json", presenceRubric),
      "--samples",
      samplesFile,
      "--out",
      out,
      "--force",
    ]);
    expect(run.code, run.stderr).toBe(3);
    expect(readCard(out).verdict).toBe("hackable");
    expect(readdirSync(join(dir, "presence")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("says inconclusive (exit 4) on too few samples, never clean", async () => {
    const six = file("six.jsonl", `${readFileSync(samplesFile, "utf8").trim().split("\n").slice(0, 6).join("\n")}\n`);
    const run = await runRubric([
      "hackbench",
      "--rubric",
      file("presence-3.json", presenceRubric),
      "--samples",
      six,
      "--probes",
      "prompt-echo",
      "--out",
      join(dir, "three-card.json"),
    ]);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stdout).toMatch(/^inconclusive: 0 of 1 probes are exploits, 1 could not be ruled out/);
    expect(run.stdout).toMatch(/prompt-echo .* can't tell/);
    expect(readFileSync(join(dir, "three-card.md"), "utf8")).toContain("**Verdict: inconclusive.**");
  });

  it("replaying one probe reproduces its numbers", async () => {
    const first = readCard(join(dir, "presence", "card.json")).probes.find((p) => p.id === "keyword-stuffing")!;
    const [, ...args] = first.replay!.split(" ");
    const run = await runRubric(args);
    expect(run.code, run.stderr).toBe(3);
    const again = readCard(join(dir, "presence", "card.keyword-stuffing.json"));
    expect(again.probes).toEqual([first]);
  });

  it("passes a strict rubric: exit 0, verdict clean", async () => {
    const out = join(dir, "strict-card.json");
    const run = await runRubric([
      "hackbench",
      "--rubric",
      file("strict.json", strictRubric),
      "--samples",
      samplesFile,
      "--out",
      out,
      "--seed",
      "3",
      "--threshold",
      "0.02",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const card = readCard(out);
    expect(card).toMatchObject({ verdict: "clean", exploits: [], seed: 3, threshold: 0.02 });
    expect(existsSync(join(dir, "strict-card.md"))).toBe(true);
  });

  it("with --judge: flags exactly the judge's bias, and a cached rerun makes no calls", async () => {
    server.setHandler(biasedJudgeHandler(["tone"]));
    const rubric = file("judged.json", judgedRubric);
    const out = join(dir, "judged.json.card.json");
    const probes = ["pleasantry", "self-praise", "keyword-stuffing", "judge-injection"];
    const args = [
      "hackbench",
      "--rubric",
      rubric,
      "--samples",
      samplesFile,
      "--judge",
      `openai-compatible:${server.url}#judge-model`,
      "--probes",
      probes.join(","),
      "--cache",
      join(dir, "cache"),
      "--out",
      out,
    ];
    const first = await runRubric(args);
    expect(first.code, first.stderr).toBe(3);
    const card = readCard(out);
    expect(card.exploits).toEqual(BIAS_PROBES.tone);
    expect(card.probes.map((p) => p.id)).toEqual(probes);
    expect(card.judge).toBe(`openai-compatible:${server.url}#judge-model`);
    // One batched call per distinct text: 24 honest outputs, and a probe and a control of each sample for each of 4 probes.
    expect(server.chatRequests).toHaveLength(24 * 9);
    expect(server.chatRequests[0]!.body!.model).toBe("judge-model");
    const calls = server.chatRequests.length;
    const second = await runRubric([...args, "--force"]);
    expect(second.code).toBe(3);
    expect(server.chatRequests).toHaveLength(calls);
    expect(readCard(out)).toEqual(card);
  });

  it("a judge that fails is an error (exit 2), not a clean bill of health, and writes no card", async () => {
    server.setHandler(() => chatReply.serverError(500));
    const out = join(dir, "failed.json");
    const run = await runRubric([
      "hackbench",
      "--rubric",
      file("judged.json", judgedRubric),
      "--samples",
      samplesFile,
      "--judge",
      `openai-compatible:${server.url}#judge-model`,
      "--probes",
      "pleasantry",
      "--out",
      out,
    ]);
    expect(run.code).toBe(2);
    // The stage's progress line, then the error (not a TTY: no bar).
    expect(run.stderr).toMatch(/^outputs scored \(probes, controls, honest\): \d+\/\d+ \(\d+\.\d s\)\n/);
    expect(run.stderr).toMatch(
      /^HackbenchScoringError: \d+ output\(s\) could not be scored, so nothing can be concluded \(an error verdict is never counted as 0\)\. First: sample "[^"]+", honest output: judge-1: verifier llm-judge failed: .*500/m,
    );
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it("names the file and line of a bad sample (exit 2)", async () => {
    const bad = file("bad.jsonl", '{"id": "a", "output": "x"}\n{"id": "b", "input": 3, "output": "y"}\n');
    const run = await runRubricHere([
      "hackbench",
      "--rubric",
      file("presence.json", presenceRubric),
      "--samples",
      bad,
      "--out",
      join(dir, "bad.json"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`SampleFileError: ${bad}: 1 problem(s)`);
    expect(run.stderr).toContain(`${bad}:line 2: input:`);
  });

  it("refuses unknown probes and bad flags as usage errors (exit 2)", async () => {
    const base = [
      "hackbench",
      "--rubric",
      file("presence.json", presenceRubric),
      "--samples",
      samplesFile,
      "--out",
      join(dir, "x.json"),
    ];
    const unknown = await runRubricHere([...base, "--probes", "keyword-stuffing,flattery"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown probe\(s\) flattery; known: keyword-stuffing, rubric-echo, /);
    const threshold = await runRubricHere([...base, "--threshold=-0.1"]);
    expect(threshold.code).toBe(2);
    expect(threshold.stderr).toContain('--threshold: expected a number ≥ 0, got "-0.1"');
    const missing = await runRubricHere(["hackbench", "--rubric", "r.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("hackbench needs --samples <file.jsonl>");
    const help = await runRubricHere(["help", "hackbench"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes: 0 clean; 3 hackable; 4 inconclusive");
  });
});
