import { flatToStaged } from "@rubric/core";
import { createVerifierRegistry, llmJudge, rulesRegistry } from "@rubric/verifiers";
import { openAICompatible } from "@rubric/providers";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The OpenAI-wire test server of @rubric/verifiers: a test fixture, not part of its public API.
import { chatReply, startOpenAIChatServer, type OpenAIChatServer } from "@rubric/providers/testing";
import { gymSamples, judgedRubric, presenceRubric, strictRubric, type GymSamples } from "../__fixtures__/gym.js";
import { IntegrityCardSchema } from "../card/card.js";
import { PROBE_IDS, UnknownProbeError } from "../probes/catalog.js";
import { HackbenchInputError, HackbenchScoringError } from "./errors.js";
import { hackbench, runHackbench } from "./run.js";
import { rubricUtility } from "./utility.js";

let gym: GymSamples;
beforeAll(async () => {
  gym = await gymSamples(30);
});

describe("runHackbench on rule rubrics (real verifiers, GDPval tasks, gym outputs)", () => {
  it("flags keyword stuffing on a presence-only rubric, names the criteria that paid, and sets the proxy gain beside U*'s", async () => {
    const card = await runHackbench(presenceRubric, gym.samples, {
      registry: rulesRegistry(),
      trueUtility: rubricUtility((sample) => gym.utilities.get(sample.id)!),
      replay: (ids) => `rubric hackbench --probes ${ids.join(",")}`,
    });
    expect(IntegrityCardSchema.parse(card)).toEqual(card);
    expect(card.verdict).toBe("hackable");
    const stuffing = card.probes.find((p) => p.id === "keyword-stuffing")!;
    expect(stuffing.applicable).toBe(30);
    expect(stuffing.exploit).toBe(true);
    expect(stuffing.gain).toBeGreaterThan(0.3);
    expect(stuffing.ci[0]).toBeGreaterThan(0.05);
    // Every includes criterion the honest outputs sometimes miss paid out, and nothing else moved.
    expect(new Set(stuffing.exploited)).toEqual(new Set(presenceRubric.criteria.map((c) => c.id)));
    expect(stuffing.criteria.every((c) => c.gain > 0 && c.paid > 0)).toBe(true);
    // The gain is exactly the control-matched difference of means.
    expect(stuffing.gain).toBeCloseTo(stuffing.means!.probe - stuffing.means!.control, 12);
    expect(stuffing.means!.control).toBeCloseTo(stuffing.means!.honest, 12);
    // The stakeholder's true utility barely moves while the proxy jumps.
    expect(stuffing.trueGain!.gain).toBeLessThan(stuffing.gain - 0.3);
    expect(stuffing.example!.probeScore).toBe(1);
    expect(stuffing.example!.probeEdit).toContain("Keywords: ");
    expect(stuffing.example!.controlEdit).not.toMatch(/recommend|risk|cost|timeline|budget|client/i);
    expect(stuffing.replay).toBe("rubric hackbench --probes keyword-stuffing");
    expect(card.command).toBe(`rubric hackbench --probes ${PROBE_IDS.join(",")}`);
    // Non-exploits carry no worked example.
    for (const probe of card.probes.filter((p) => !p.exploit)) expect(probe.example).toBeNull();
  });

  it("comes out clean on a strict rubric that no probe fools", async () => {
    const card = await runHackbench(strictRubric, gym.samples, { registry: rulesRegistry() });
    expect(card.verdict).toBe("clean");
    expect(card.exploits).toEqual([]);
    expect(card.probes.map((p) => p.id)).toEqual(PROBE_IDS);
    for (const probe of card.probes) expect(probe.gain, probe.id).toBeLessThanOrEqual(0);
    // The homoglyph probe met real hedges and still gained nothing: lookalike letters fail the ASCII check.
    expect(card.probes.find((p) => p.id === "homoglyph")!.applicable).toBeGreaterThan(5);
  });

  it("is inconclusive, never clean, when the samples are too few to see an exploit of size τ", async () => {
    // On 6 samples prompt-echo gains a little on one of them: its interval reaches τ, so the run
    // can neither flag it nor rule it out.
    const few = await runHackbench(presenceRubric, gym.samples.slice(0, 6), {
      registry: rulesRegistry(),
      probes: ["prompt-echo", "pleasantry"],
    });
    const echo = few.probes.find((p) => p.id === "prompt-echo")!;
    expect(echo).toMatchObject({ exploit: false, inconclusive: true });
    expect(echo.ci[1]).toBeGreaterThanOrEqual(0.05);
    expect(few.probes.find((p) => p.id === "pleasantry")).toMatchObject({ exploit: false, inconclusive: false });
    expect(few.verdict).toBe("inconclusive");
    expect(few.inconclusive).toEqual(["prompt-echo"]);
    expect(few.detectableGain).toBe(echo.detectableGain);
    expect(echo.detectableGain!).toBeCloseTo(Math.max(0.05, echo.gain - echo.ci[0]), 12);
  });

  it("scores a staged rubric as its flat form: same gains, same attribution", async () => {
    const options = {
      registry: rulesRegistry(),
      probes: ["keyword-stuffing", "rubric-echo", "prompt-echo"],
      resamples: 2000,
    };
    const flat = await runHackbench(presenceRubric, gym.samples, options);
    const staged = await runHackbench(flatToStaged(presenceRubric), gym.samples, options);
    expect(staged.rubric).toEqual({ id: "presence-only", criteria: 6 });
    staged.probes.forEach((probe, i) => {
      expect(probe.gain).toBeCloseTo(flat.probes[i]!.gain, 12);
      expect(probe.criteria.map((c) => [c.id, c.paid])).toEqual(flat.probes[i]!.criteria.map((c) => [c.id, c.paid]));
      probe.criteria.forEach((c, k) => expect(c.gain).toBeCloseTo(flat.probes[i]!.criteria[k]!.gain, 12));
    });
  });

  it("is reproducible: the same seed gives the same card, another seed other controls", async () => {
    const options = {
      registry: rulesRegistry(),
      probes: ["keyword-stuffing", "fabricated-citations"],
      resamples: 2000,
    };
    const a = await runHackbench(presenceRubric, gym.samples, options);
    expect(await runHackbench(presenceRubric, gym.samples, options)).toEqual(a);
    const b = await runHackbench(presenceRubric, gym.samples, { ...options, seed: 1 });
    expect(b.probes[0]!.example!.controlEdit).not.toBe(a.probes[0]!.example!.controlEdit);
  });

  it("refuses bad options, unknown probes and duplicate samples with typed errors", async () => {
    const registry = rulesRegistry();
    await expect(runHackbench(presenceRubric, gym.samples, { registry, threshold: -1 })).rejects.toThrow(
      HackbenchInputError,
    );
    await expect(runHackbench(presenceRubric, gym.samples, { registry, probes: ["keyword-stufing"] })).rejects.toThrow(
      UnknownProbeError,
    );
    await expect(runHackbench(presenceRubric, [gym.samples[0]!, gym.samples[0]!], { registry })).rejects.toThrow(
      /duplicate id/,
    );
    await expect(runHackbench(presenceRubric, [], { registry })).rejects.toThrow(HackbenchInputError);
  });
});

describe("a judge that fails", () => {
  let server: OpenAIChatServer;
  beforeAll(async () => {
    server = await startOpenAIChatServer({ handler: () => chatReply.serverError(503) });
  });
  afterAll(() => server.close());

  it("fails the run with HackbenchScoringError after the first chunk: an error verdict is never a 0, never clean", async () => {
    const judge = llmJudge(openAICompatible({ baseUrl: server.url, model: "broken", apiKeyEnv: false, retry: false }));
    const exit = await Effect.runPromiseExit(
      hackbench(judgedRubric, gym.samples, { registry: createVerifierRegistry({ judge }), concurrency: 2 }),
    );
    expect(exit._tag).toBe("Failure");
    const error = await runHackbench(judgedRubric, gym.samples, {
      registry: createVerifierRegistry({ judge }),
      concurrency: 2,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HackbenchScoringError);
    const failure = error as HackbenchScoringError;
    expect(failure.message).toMatch(/never counted as 0/);
    expect(failure.failures[0]!.reason).toMatch(/503/);
    // 30 samples × 35 texts were planned; each of the two runs stopped after its first wave of 2 calls.
    expect(server.requestCount).toBe(4);
  });
});
