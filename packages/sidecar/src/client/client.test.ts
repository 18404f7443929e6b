import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRng, drGrpoObjective, grpoObjective, gspoObjective, type Rng } from "@rubric/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SidecarClient, defaultPython, defaultTrainerPath, sidecarCommand } from "./client.js";
import {
  SidecarClosedError,
  SidecarCrashedError,
  SidecarError,
  SidecarPolicyLostError,
  SidecarProtocolError,
  SidecarStartError,
  SidecarStateLostError,
  SidecarTimeoutError,
} from "../errors.js";
import { SIDECAR_ERROR_CODES, type TrainingMetrics } from "../wire/envelope.js";
import { SIDECAR_METHODS } from "../wire/methods.js";

const TINY = { kind: "tiny", vocab_size: 12, d_model: 16, n_heads: 2, n_layers: 1, max_seq_len: 24 } as const;
/** A model and a request slow enough (seconds) that a time limit of a few ms or an abort lands while it runs. */
const SLOW = { kind: "tiny", vocab_size: 64, d_model: 128, n_heads: 4, n_layers: 4, max_seq_len: 1024 } as const;
const LONG_SAMPLE = { prompt: [0], n: 32, seed: 0, max_new_tokens: 1000 };
/** Starting torch (twice, under torchrun) can take many seconds on a busy 2-core machine; a guard, not a measurement. */
const PROCESS_TEST_TIMEOUT_MS = 180_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value).slice(0, 200)}`);
    },
    (error: unknown) => error,
  );
}

describe("SidecarClient", () => {
  let client: SidecarClient;
  const metrics: TrainingMetrics[] = [];
  beforeAll(async () => {
    client = await SidecarClient.start({ threads: 1, onMetrics: (m) => metrics.push(m) });
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => client.close(), PROCESS_TEST_TIMEOUT_MS);

  it("starts Debian's python3 with the rubric_trainer package and reports its health", async () => {
    expect(sidecarCommand({ threads: 1 })).toEqual({
      command: "/usr/bin/python3",
      args: ["-m", "rubric_trainer", "serve", "--threads", "1"],
    });
    expect(sidecarCommand({ python: "python3.12", torchrun: { nprocPerNode: 4 } }).args).toEqual([
      "-m",
      "torch.distributed.run",
      "--standalone",
      "--nproc_per_node",
      "4",
      "--redirects",
      "2",
      "--tee",
      "2",
      "-m",
      "rubric_trainer",
      "serve",
    ]);
    expect(() => sidecarCommand({ torchrun: { nprocPerNode: 0 } })).toThrow(
      expect.objectContaining({ code: "sidecar.start", message: expect.stringContaining("nprocPerNode") }),
    );
    const health = await client.request("health", {});
    // Started with --threads 1: torch runs on the threads it was given.
    expect(health).toMatchObject({ ok: true, world_size: 1, pid: client.pid, mu: null, threads: 1 });
    expect(health.torch).toMatch(/^\d+\.\d+/);
  });

  it("knows the same methods and error codes as the sidecar", async () => {
    const script =
      "import json; from rubric_trainer.faults import FAULT_CODES; from rubric_trainer.protocol import PARAMS; print(json.dumps({'methods': sorted(PARAMS), 'codes': FAULT_CODES}))";
    const { stdout } = await promisify(execFile)(defaultPython(), ["-c", script], {
      env: { ...process.env, PYTHONPATH: defaultTrainerPath()! },
    });
    expect(JSON.parse(stdout)).toEqual({
      methods: Object.keys(SIDECAR_METHODS).sort(),
      codes: [...SIDECAR_ERROR_CODES].sort(),
    });
  });

  it("computes gspo.loss exactly as @rubric/core's objectives do, gradients included", async () => {
    const rng = createRng("sidecar-loss");
    const uniform = (r: Rng, low: number, high: number) => low + (high - low) * r.next();
    for (let trial = 0; trial < 6; trial++) {
      const lengths = Array.from({ length: 2 + rng.int(4) }, () => 1 + rng.int(9));
      const matrix = (low: number, high: number) =>
        lengths.map((n) => Array.from({ length: n }, () => uniform(rng, low, high)));
      const logpOld = matrix(-3, -0.1);
      // Log-ratios within ±0.3: some sequences and tokens inside the clip range, some beyond.
      const logpNew = logpOld.map((row) => row.map((x) => x + uniform(rng, -0.3, 0.3)));
      const logpRef = matrix(-3, -0.1);
      const mask = lengths.map((n) => {
        const row = Array.from({ length: n }, () => (rng.next() < 0.8 ? 1 : 0));
        row[rng.int(n)] = 1;
        return row;
      });
      const advantages = lengths.map(() => uniform(rng, -2, 2));
      const input = { logpNew, logpOld, mask, advantages, epsLow: 0.1, epsHigh: 0.15, beta: 0.04, logpRef };
      const wire = {
        logp_new: logpNew,
        logp_old: logpOld,
        mask,
        advantages,
        eps_low: 0.1,
        eps_high: 0.15,
        beta: 0.04,
        logp_ref: logpRef,
      };
      for (const [objective, expected] of [
        ["gspo", gspoObjective(input)],
        ["grpo", grpoObjective(input)],
        ["dr-grpo", drGrpoObjective(input)],
      ] as const) {
        const result = await client.request("gspo.loss", { objective, ...wire });
        expect(result.loss).toBeCloseTo(expected.loss, 12);
        expect(result.clipped_fraction).toBeCloseTo(expected.clippedFraction, 12);
        expect(result.kl).toBeCloseTo(expected.kl!, 12);
        expect(result.ratios.flat()).toEqual(expected.ratios.flat().map((r) => expect.closeTo(r, 12)));
        expect(result.grad_logp_new!.flat()).toEqual(expected.gradLogpNew.flat().map((g) => expect.closeTo(g, 12)));
      }
    }
  });

  it("turns every failure into a named error and keeps serving", async () => {
    const summary = await client.request("policy.init", { model: TINY, seed: 2 });

    const unknown = await failure(client.request("policy.fly" as never, {} as never));
    expect(unknown).toBeInstanceOf(SidecarError);
    expect(unknown).toMatchObject({ fault: "unknown_method", code: "sidecar.reply.unknown-method" });

    // Caught by the client's schema before sending…
    const typo = await failure(client.request("policy.sample", { prompt: [0], n: 0, seed: 1 }));
    expect(typo).toMatchObject({ _tag: "SidecarError", fault: "invalid_params", data: { path: "params.n" } });
    // …and by the sidecar, which knows the vocabulary.
    const outOfVocabulary = await failure(client.request("policy.logprobs", { prompt: [0], sequences: [[3, 12]] }));
    expect(outOfVocabulary).toMatchObject({
      fault: "invalid_params",
      message: "policy.logprobs: params.sequences[0][1]: expected a token id in [0, 11], got 12",
    });

    // exp(800) overflows and 0·inf is NaN: a real NaN loss.
    const nan = await failure(client.request("gspo.loss", { logp_new: [[800]], logp_old: [[0]], advantages: [0] }));
    expect(nan).toMatchObject({ fault: "non_finite", code: "sidecar.reply.non-finite" });
    // 10^7 × 10^6 float32 embeddings (40 TB) cannot be allocated: a real out-of-memory failure.
    const oom = await failure(
      client.request("policy.init", {
        model: { kind: "tiny", vocab_size: 10_000_000, d_model: 1_000_000, n_heads: 1, n_layers: 0 },
      }),
    );
    expect(oom).toMatchObject({ fault: "out_of_memory" });

    expect((await client.request("health", {})).policy).toEqual(summary);
  });

  it("streams the metrics of each training step", async () => {
    await client.request("policy.init", { model: TINY, seed: 2 });
    metrics.length = 0;
    const result = await client.request("policy.sft_step", {
      examples: [{ prompt: [0], tokens: [4, 5, 1] }],
      learning_rate: 0.01,
    });
    const step = await client.request("policy.step", {
      objective: "gspo",
      learning_rate: 0.01,
      groups: [
        {
          prompt: [0],
          sequences: [
            { tokens: [4], logp_old: [-2], advantage: 1 },
            { tokens: [5], logp_old: [-2], advantage: -1 },
          ],
        },
      ],
    });
    expect(metrics).toEqual([
      { method: "policy.sft_step", ...result },
      { method: "policy.step", ...step },
    ]);
  });

  it("times a slow request out, cancels it in the sidecar, and goes on", async () => {
    await client.request("policy.init", { model: SLOW, seed: 0 });
    const timedOut = await failure(client.request("policy.sample", LONG_SAMPLE, { timeoutMs: 5 }));
    expect(timedOut).toBeInstanceOf(SidecarTimeoutError);
    expect(timedOut).toMatchObject({ method: "policy.sample", timeoutMs: 5 });
    // The sample was cancelled, not left running: the sidecar answers the next request.
    const pid = client.pid;
    expect((await client.request("health", {})).ok).toBe(true);
    expect(client.pid).toBe(pid);
  });

  it("rejects with the abort reason when the caller aborts", async () => {
    await client.request("policy.init", { model: SLOW, seed: 0 });
    const controller = new AbortController();
    const pending = client.request("policy.sample", LONG_SAMPLE, { signal: controller.signal });
    const reason = new Error("no longer needed");
    controller.abort(reason);
    expect(await failure(pending)).toBe(reason);
    expect((await client.request("health", {})).ok).toBe(true);
  });
});

describe("SidecarClient lifecycle", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rubric-sidecar-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it(
    "restarts a crashed sidecar with the last checkpoint's policy",
    async () => {
      const restarts: unknown[] = [];
      const client = await SidecarClient.start({ threads: 1, onRestart: (r) => restarts.push(r) });
      try {
        await client.request("policy.init", { model: SLOW, seed: 5 });
        const probe = { prompt: [0], sequences: [[4, 5, 6, 1]] };
        await client.request("checkpoint.save", { dir: join(dir, "ckpt") });
        const saved = await client.request("policy.logprobs", probe);
        for (let i = 0; i < 3; i++)
          await client.request("policy.sft_step", {
            examples: [{ prompt: [0], tokens: [4, 5, 6, 1] }],
            learning_rate: 0.01,
          });
        expect((await client.request("policy.logprobs", probe)).logprobs).not.toEqual(saved.logprobs);

        const first = client.pid!;
        const inFlight = client.request("policy.sample", LONG_SAMPLE);
        await new Promise((resolve) => setImmediate(resolve)); // the request is on its way
        process.kill(first, "SIGKILL");
        const crashed = await failure(inFlight);
        expect(crashed).toBeInstanceOf(SidecarCrashedError);
        expect(crashed).toMatchObject({ signal: "SIGKILL" });

        // The next request starts a new sidecar, which loads the checkpoint: the SFT steps since are gone.
        expect(await client.request("policy.logprobs", probe)).toEqual(saved);
        expect(client.pid).not.toBe(first);
        expect(client.restarts).toBe(1);
        expect(restarts).toEqual([
          { attempt: 1, restoredFrom: "checkpoint", checkpoint: join(dir, "ckpt"), lostSteps: 3, replayed: [] },
        ]);
      } finally {
        await client.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "restores a KL reference frozen at the restore point, and fails loudly on one that died with lost steps",
    async () => {
      const restarts: { restoredFrom: string; replayed: readonly string[]; lostSteps: number }[] = [];
      const client = await SidecarClient.start({ threads: 1, maxRestarts: 4, onRestart: (r) => restarts.push(r) });
      const kill = async () => {
        process.kill(client.pid!, "SIGKILL");
        await expect.poll(() => client.pid === undefined || !isAlive(client.pid), { timeout: 10_000 }).toBe(true);
      };
      const sft = () =>
        client.request("policy.sft_step", { examples: [{ prompt: [0], tokens: [4, 5, 1] }], learning_rate: 0.05 });
      const step = () =>
        client.request("policy.step", {
          learning_rate: 0.01,
          kl_coef: 0.5,
          groups: [{ prompt: [0], sequences: [{ tokens: [4, 5, 1], logp_old: [-1, -1, -1], advantage: 1 }] }],
        });
      try {
        // init → set_reference → crash: policy.init again with the same seed, then the reference.
        await client.request("policy.init", { model: TINY, seed: 5 });
        await client.request("policy.set_reference", {});
        await kill();
        expect((await client.request("health", {})).policy).toMatchObject({ reference: true });
        expect(restarts.at(-1)).toMatchObject({ restoredFrom: "init", replayed: ["policy.set_reference"] });

        // init → sft → checkpoint → set_reference → crash: the checkpoint, then the reference of its weights.
        await sft();
        await client.request("checkpoint.save", { dir: join(dir, "before-reference") });
        expect(client.checkpoint).toBe(join(dir, "before-reference"));
        await client.request("policy.set_reference", {});
        // The first step's KL is measured at the reference's own weights.
        expect((await step()).kl).toBeCloseTo(0, 9);
        await kill();
        expect((await client.request("health", {})).policy).toMatchObject({ reference: true });
        expect(restarts.at(-1)).toMatchObject({
          restoredFrom: "checkpoint",
          replayed: ["policy.set_reference"],
          lostSteps: 1,
        });
        // Without its reference the KL would read 0 however far the policy moved.
        await step();
        expect((await step()).kl).toBeGreaterThan(0);

        // checkpoint → sft → set_reference → crash: that reference's weights are gone; the call says so.
        await client.request("checkpoint.save", { dir: join(dir, "after") });
        await sft();
        await client.request("policy.set_reference", {});
        await kill();
        const lost = await failure(step());
        expect(lost).toBeInstanceOf(SidecarStateLostError);
        expect(lost).toMatchObject({
          code: "sidecar.state-lost",
          resource: "policy",
          state: "reference",
          lostSteps: 1,
        });
        // The new sidecar holds no policy rather than one without its reference.
        expect(await failure(step())).toMatchObject({ fault: "no_policy" });
        expect(client.checkpoint).toBeUndefined();

        // μ likewise: mu.init → mu.set_reference → crash brings its reference back.
        await client.request("mu.init", { model: TINY, seed: 4 });
        await client.request("mu.set_reference", {});
        await kill();
        expect((await client.request("health", {})).mu).toMatchObject({ reference: true });
      } finally {
        await client.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "never continues from a reset policy: a trained policy with no checkpoint is reported lost",
    async () => {
      const restarts: unknown[] = [];
      const client = await SidecarClient.start({ threads: 1, onRestart: (r) => restarts.push(r) });
      try {
        await client.request("policy.init", { model: TINY, seed: 5 });
        for (let i = 0; i < 2; i++)
          await client.request("policy.sft_step", {
            examples: [{ prompt: [0], tokens: [4, 5, 1] }],
            learning_rate: 0.01,
          });
        process.kill(client.pid!, "SIGKILL");
        await expect.poll(() => client.pid === undefined || !isAlive(client.pid), { timeout: 10_000 }).toBe(true);
        const lost = await failure(client.request("policy.fingerprint", {}));
        expect(lost).toBeInstanceOf(SidecarPolicyLostError);
        expect(lost).toMatchObject({ lostSteps: 2, code: "sidecar.policy-lost" });
        expect((lost as Error).message).toContain("checkpoint.save");
        // The new sidecar holds no policy, and says so, rather than the initial weights.
        const after = await failure(client.request("policy.fingerprint", {}));
        expect(after).toBeInstanceOf(SidecarError);
        expect(after).toMatchObject({ fault: "no_policy" });
        expect(restarts).toEqual([]);
      } finally {
        await client.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "restores μ after a crash from its checkpoint, or from mu.init when it was never trained, and never resets a trained μ",
    async () => {
      const logs: string[] = [];
      const client = await SidecarClient.start({ threads: 1, onLog: (line) => logs.push(line) });
      const kill = async () => {
        process.kill(client.pid!, "SIGKILL");
        await expect.poll(() => client.pid === undefined || !isAlive(client.pid), { timeout: 10_000 }).toBe(true);
      };
      const sft = () =>
        client.request("mu.sft", {
          examples: [{ prompt: [1, 2], criteria: [3, 4], scores: [0.5, -0.5, 0.2] }],
          learning_rate: 0.01,
        });
      try {
        // Never trained: the restarted sidecar re-initialises it with the same seed.
        await client.request("mu.init", { model: TINY, seed: 4 });
        const initial = await client.request("mu.fingerprint", {});
        await kill();
        expect(await client.request("mu.fingerprint", {})).toEqual(initial);

        // Saved, then trained further: the checkpoint comes back and the later steps are reported lost.
        await sft();
        await client.request("mu.save", { dir: join(dir, "mu") });
        const saved = await client.request("mu.fingerprint", {});
        await sft();
        await kill();
        expect(await client.request("mu.fingerprint", {})).toEqual(saved);
        expect(logs.some((line) => line.includes("1 μ training step(s) taken after it were lost"))).toBe(true);

        // Trained with no checkpoint since mu.init: gone, and said so, rather than reset.
        await client.request("mu.init", { model: TINY, seed: 4 });
        await sft();
        await kill();
        const after = await failure(client.request("mu.fingerprint", {}));
        expect(after).toMatchObject({ fault: "no_policy" });
        expect(logs.some((line) => line.includes("μ was trained for 1 step(s) with no checkpoint"))).toBe(true);
        expect(client.restarts).toBe(3);
      } finally {
        await client.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "fails the call at once on a reply that is not JSON, holds a NaN, names another id, or runs past the line cap",
    async () => {
      const client = await SidecarClient.start({
        trainerPath: fileURLToPath(new URL("./__fixtures__/broken-trainer", import.meta.url)),
        maxLineBytes: 1024,
        requestTimeoutMs: 600_000,
      });
      try {
        const started = performance.now();
        const faults = [];
        for (let i = 0; i < 4; i++) faults.push(await failure(client.request("health", {})));
        for (const fault of faults) expect(fault).toBeInstanceOf(SidecarProtocolError);
        expect((faults[0] as Error).message).toMatch(/^health: the sidecar wrote a line that is not JSON/);
        expect((faults[1] as Error).message).toMatch(/not JSON: .*NaN/);
        expect((faults[2] as Error).message).toMatch(/replied to id 999, which no call is waiting for/);
        expect((faults[3] as Error).message).toMatch(/ran past 1024 bytes; it was skipped/);
        // At once, not at the 600 s request timeout (a guard, not a measurement).
        expect(performance.now() - started).toBeLessThan(60_000);
        // The wire is back in step: the next call gets its own answer.
        expect(await client.request("health", {})).toMatchObject({ ok: true, version: "0" });
      } finally {
        await client.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "shuts down cleanly, leaving no process behind, and refuses requests afterwards",
    async () => {
      const client = await SidecarClient.start({ threads: 1 });
      const pid = client.pid!;
      expect(isAlive(pid)).toBe(true);
      await client.close();
      expect(isAlive(pid)).toBe(false);
      expect(await failure(client.request("health", {}))).toBeInstanceOf(SidecarClosedError);
      await client.close(); // twice is fine
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "lets a program that forgets close() exit, and the sidecar follows it",
    async () => {
      const script = join(dir, "forgetful.mts");
      await writeFile(
        script,
        [
          `import { SidecarClient } from ${JSON.stringify(new URL("./client.ts", import.meta.url).href)};`,
          "const client = await SidecarClient.start({ threads: 1 });",
          'const { pid } = await client.request("health", {});',
          "console.log(JSON.stringify({ pid }));",
        ].join("\n"),
      );
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
        timeout: PROCESS_TEST_TIMEOUT_MS,
      });
      const { pid } = JSON.parse(stdout) as { pid: number };
      // Its stdin closed with the program: the sidecar ends by itself (a guard loop, not a timing).
      for (let i = 0; i < 600 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(isAlive(pid)).toBe(false);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "runs under torchrun with two ranks and takes them all down on close",
    async () => {
      const client = await SidecarClient.start({ threads: 1, torchrun: { nprocPerNode: 2 } });
      const launcher = client.pid!;
      let rank0 = 0;
      try {
        const health = await client.request("health", {});
        expect(health.world_size).toBe(2);
        rank0 = health.pid;
        await client.request("policy.init", { model: TINY, seed: 1, device: "cpu" });
        const { fingerprints } = await client.request("policy.fingerprint", {});
        expect(fingerprints).toHaveLength(2);
        expect(fingerprints[0]).toBe(fingerprints[1]);
      } finally {
        await client.close();
      }
      expect(isAlive(rank0)).toBe(false);
      expect(isAlive(launcher)).toBe(false);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "says why it cannot start",
    async () => {
      const missing = await failure(SidecarClient.start({ python: "/nonexistent/python3" }));
      expect(missing).toBeInstanceOf(SidecarStartError);
      expect((missing as SidecarStartError).message).toContain("/nonexistent/python3");
      const withoutPackage = await failure(SidecarClient.start({ trainerPath: dir }));
      expect(withoutPackage).toBeInstanceOf(SidecarStartError);
      expect((withoutPackage as SidecarStartError).message).toContain("No module named rubric_trainer");
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
