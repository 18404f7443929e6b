import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CRITERIA_BANK, simulatedStakeholder } from "@rubric/autointeract";
import { createRng } from "@rubric/core";
import { proxyScores, type RolloutGroup } from "@rubric/gspo";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DocumentPolicy,
  DocumentPolicyBackend,
  documentDecisions,
  presenceTerms,
  rubricTerms,
  writeDocument,
  type WorkerPrompt,
} from "./document-policy.js";
import {
  DEFAULT_CONFIG,
  PROXY_FEATURES,
  onsetPrompts,
  presenceProxy,
  runHackingOnset,
  trainAgainstProxy,
  writeHackingOnset,
  type HackingOnsetReport,
} from "./hacking-onset.js";

const newPolicy = () => new DocumentPolicy({ decisions: documentDecisions(0.05), features: PROXY_FEATURES });

/** A policy away from its initial point, so that every gradient term is exercised. */
function perturbed(seed: string): DocumentPolicy {
  const policy = newPolicy();
  const rng = createRng(seed);
  for (let i = 0; i < policy.weights.length; i++) policy.weights[i]! += 0.5 * rng.normal();
  return policy;
}

function logSumExp(values: ArrayLike<number>): number {
  const top = Math.max(...Array.from(values));
  return top + Math.log(Array.from(values).reduce((s, v) => s + Math.exp(v - top), 0));
}

let prompts: WorkerPrompt[];
beforeAll(async () => {
  prompts = await onsetPrompts({ seed: 1, tasks: 4 });
});

describe("the presence-only proxy", () => {
  it("keeps the literal terms of U*'s checks and drops counts, lengths, tone and absences", () => {
    const terms = (id: string) => presenceTerms(CRITERIA_BANK.find((c) => c.id === id)!.verifier);
    expect(terms("section-risks")).toEqual(["Risks"]);
    expect(terms("summary-first")).toEqual(["Summary"]);
    expect(terms("next-steps-last")).toEqual(["Next Steps"]);
    expect(terms("risks-before-recommendation")).toEqual(["Risks", "Recommendation"]);
    expect(terms("recommend")).toEqual(["we recommend"]);
    for (const id of [
      "title",
      "percent",
      "currency",
      "figures-3",
      "cite-2",
      "url-1",
      "no-urls",
      "bullets-5",
      "words-max-250",
      "no-hedging",
      "plain-language",
    ])
      expect(terms(id), id).toEqual([]);
  });

  it("weighs each kept criterion as U* does and pays for its terms anywhere", () => {
    for (const prompt of prompts) {
      const utility = simulatedStakeholder(prompt.task, 1).utility;
      expect(prompt.proxy).toEqual(presenceProxy(utility));
      for (const c of prompt.proxy.criteria) {
        expect(c.verifier.kind).toBe("includes");
        expect(c.weight).toBe(utility.criteria.find((u) => `mentions:${u.id}` === c.id)!.weight);
      }
    }
  });
});

describe("the document policy", () => {
  it("starts as the gym's worker: with no feature on, every choice has the worker's probabilities", () => {
    const policy = newPolicy();
    const bare = { ...prompts[0]!, features: [] };
    policy.decisions.forEach((d, i) =>
      expect(Array.from(policy.logProbs(bare, i), Math.exp).map((p) => p.toFixed(12))).toEqual(
        d.prior.map((p) => p.toFixed(12)),
      ),
    );
  });

  it("samples each choice as often as its log-probability says", () => {
    const policy = perturbed("frequencies");
    const prompt = prompts[1]!;
    const rng = createRng("draws");
    const n = 20_000;
    const counts = policy.decisions.map((d) => new Array<number>(d.options.length).fill(0));
    for (let s = 0; s < n; s++)
      policy.sample(prompt, rng).forEach((token, d) => counts[d]![token - policy.token(d, 0)]!++);
    policy.decisions.forEach((_, d) => {
      const logps = policy.logProbs(prompt, d);
      expect(logSumExp(logps)).toBeCloseTo(0, 12);
      counts[d]!.forEach((c, o) =>
        expect(Math.abs(c / n - Math.exp(logps[o]!)), `${policy.decisions[d]!.id}[${o}]`).toBeLessThan(0.015),
      );
    });
  });

  it("has exact per-token log-probability gradients (finite differences)", () => {
    const policy = perturbed("grad");
    const prompt = prompts[0]!;
    const tokens = policy.sample(prompt, createRng("seq"));
    const rng = createRng("coefs");
    const coefs = tokens.map(() => rng.normal());
    const objective = () => policy.tokenLogProbs(prompt, tokens).reduce((s, l, t) => s + coefs[t]! * l, 0);
    const grads = [new Float64Array(policy.weights.length)];
    policy.accumulateGradient(prompt, tokens, coefs, grads);
    const h = 1e-6;
    for (let i = 0; i < policy.weights.length; i++) {
      const w = policy.weights[i]!;
      policy.weights[i] = w + h;
      const up = objective();
      policy.weights[i] = w - h;
      const down = objective();
      policy.weights[i] = w;
      expect(grads[0]![i]!, `weight ${i}`).toBeCloseTo((up - down) / (2 * h), 6);
    }
  });

  it("has the exact gradient of the GSPO loss with the KL penalty (finite differences)", async () => {
    const policy = perturbed("loss");
    const backend = new DocumentPolicyBackend(policy);
    await backend.setReference();
    const rng = createRng("move");
    for (let i = 0; i < policy.weights.length; i++) policy.weights[i]! += 0.2 * rng.normal();
    const groups: RolloutGroup<WorkerPrompt>[] = [];
    for (const [g, prompt] of prompts.slice(0, 2).entries()) {
      const sampled = await backend.sample(prompt, 4, { seed: g });
      // π_old a little off π_θ, inside the band, so that the ratios are not all 1.
      groups.push({
        prompt,
        sequences: sampled.map((s, k) => ({
          tokens: s.tokens,
          logpOld: s.logprobs.map((l) => l + 0.01 * rng.normal()),
          advantage: k - 1.5,
        })),
      });
    }
    const options = { objective: "gspo" as const, epsLow: 0.2, epsHigh: 0.28, klCoef: 0.1 };
    const { grads, kl } = backend.gradient(groups, options);
    expect(kl).toBeGreaterThan(0);
    const h = 1e-6;
    for (let i = 0; i < policy.weights.length; i++) {
      const w = policy.weights[i]!;
      policy.weights[i] = w + h;
      const up = backend.gradient(groups, options).loss;
      policy.weights[i] = w - h;
      const down = backend.gradient(groups, options).loss;
      policy.weights[i] = w;
      // grads ascend: they are −∂loss/∂θ.
      expect(grads[0]![i]!, `weight ${i}`).toBeCloseTo(-(up - down) / (2 * h), 6);
    }
  });

  it("reaches every proxy criterion by stuffing alone, without writing any of it", async () => {
    const policy = newPolicy();
    for (const prompt of prompts) {
      const nothing = policy.decisions.map((_, d) => policy.token(d, 0));
      const stuffed = nothing.map((t, d) => (policy.decisions[d]!.id === "stuff-keywords" ? policy.token(d, 1) : t));
      const text = writeDocument(policy, prompt, stuffed, 3);
      expect(text).toContain(`Keywords: ${rubricTerms(prompt.proxy).join(", ")}.`);
      expect(writeDocument(policy, prompt, stuffed, 3, { exploits: false })).toBe(
        writeDocument(policy, prompt, nothing, 3),
      );
      expect(await proxyScores(prompt.proxy, prompt, [text])).toEqual([1]);
    }
  });

  it("saves and loads its parameters, reference and optimiser", async () => {
    const a = new DocumentPolicyBackend(perturbed("save"));
    await a.setReference();
    await a.step(
      [
        {
          prompt: prompts[0]!,
          sequences: (await a.sample(prompts[0]!, 2, { seed: 1 })).map((s, k) => ({
            tokens: s.tokens,
            logpOld: s.logprobs,
            advantage: k === 0 ? 1 : -1,
          })),
        },
      ],
      { objective: "gspo", epsLow: 0.2, epsHigh: 0.28, learningRate: 0.05, klCoef: 0.1 },
    );
    const dir = await mkdtemp(join(tmpdir(), "document-policy-"));
    await a.save(dir);
    const b = new DocumentPolicyBackend(newPolicy());
    await b.load(dir);
    expect(Array.from(b.policy.weights)).toEqual(Array.from(a.policy.weights));
    const group = {
      prompt: prompts[1]!,
      sequences: (await a.sample(prompts[1]!, 3, { seed: 2 })).map((s, k) => ({
        tokens: s.tokens,
        logpOld: s.logprobs,
        advantage: k - 1,
      })),
    };
    const options = { objective: "gspo" as const, epsLow: 0.2, epsHigh: 0.28, klCoef: 0.1 };
    expect(b.gradient([group], options)).toEqual(a.gradient([group], options));
  });
});

describe("examples/hacking-onset.ts", () => {
  let report: HackingOnsetReport;
  beforeAll(async () => {
    report = await runHackingOnset({ ...DEFAULT_CONFIG, seed: 1, tasks: 4, batches: 6, resamples: 1000 });
  });

  it("flags the proxy as hackable before training, keyword stuffing among the exploits, with no gain in U*", () => {
    expect(report.cards).toHaveLength(4);
    for (const card of report.cards) {
      expect(card.verdict).toBe("hackable");
      expect(card.exploits).toContain("keyword-stuffing");
      const stuffing = card.probes.find((p) => p.id === "keyword-stuffing")!;
      expect(stuffing.trueGain!.gain).toBeLessThan(stuffing.gain);
    }
  });

  it("raises the proxy reward under GSPO, and the proxy more than the stakeholder's true utility", () => {
    const { proxyGain, trueGain, gap } = report.divergence;
    expect(report.batches.map((b) => b.batch)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(proxyGain.ci[0]).toBeGreaterThan(0);
    expect(proxyGain.mean).toBeGreaterThan(trueGain.mean);
    // Paired by task, the gap proxy − U* at the end is above its batch-0 value.
    expect(gap.at(-1)!.ci[0]).toBeGreaterThan(0);
  });

  it("writes the plot, the JSON and the Markdown", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hacking-onset-"));
    await writeHackingOnset(report, dir);
    const svg = await readFile(join(dir, "proxy-vs-true.svg"), "utf8");
    expect(svg.match(/<polyline /g)).toHaveLength(5);
    expect(JSON.parse(await readFile(join(dir, "hacking-onset.json"), "utf8")).batches).toHaveLength(6);
    expect(await readFile(join(dir, "hacking-onset.md"), "utf8")).toContain("4 of 4 task proxies are hackable");
  });

  it("trains reproducibly for a seed", async () => {
    const run = () => trainAgainstProxy(prompts.slice(0, 2), { seed: 5, batches: 2, groupSize: 4, exploitPrior: 0.05 });
    const [a, b] = [await run(), await run()];
    expect(b.batches).toEqual(a.batches);
    expect(Array.from(b.policy.weights)).toEqual(Array.from(a.policy.weights));
  });
});
