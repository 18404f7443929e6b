import * as arcoHeads from "@rubric/arco-heads";
import * as autointeract from "@rubric/autointeract";
import * as core from "@rubric/core";
import * as coreFiles from "@rubric/core/files";
import * as gspo from "@rubric/gspo";
import * as hackbench from "@rubric/hackbench";
import * as providers from "@rubric/providers";
import * as repro from "@rubric/repro";
import * as rlxar from "@rubric/rlxar";
import * as sidecar from "@rubric/sidecar";
import * as verifiers from "@rubric/verifiers";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, exitCodeFor } from "./exit-codes.js";
import * as io from "./io.js";
import * as resultFiles from "./results/result-files.js";

/**
 * The one error model, checked from the one package that sees every door: every error class a
 * package exports carries a stable code, sits under its package's base (or is an Effect tagged
 * error in its package's area), and the exit table gives it a clean exit. A new error without a
 * code, or outside its package's base, fails here.
 */

type ErrorClass = abstract new (...args: never[]) => Error;

/** Each door, the base its errors extend (abstract, never thrown), and the area of its Effect tagged errors. */
const PACKAGES: readonly {
  readonly name: string;
  readonly door: Record<string, unknown>;
  readonly base?: ErrorClass;
  readonly taggedArea?: string;
}[] = [
  { name: "core", door: core, base: core.RubricError },
  // Core's Node-only door: reading the files users name.
  { name: "core/files", door: coreFiles, base: core.RubricError },
  { name: "providers", door: providers, base: providers.ProviderError },
  { name: "verifiers", door: verifiers, base: verifiers.VerificationError, taggedArea: "sandbox." },
  { name: "autointeract", door: autointeract, base: autointeract.AutointeractError },
  // The sidecar's failures are Effect tagged errors only: their area is their place.
  { name: "sidecar", door: sidecar, taggedArea: "sidecar." },
  { name: "gspo", door: gspo, base: gspo.TrainingError },
  { name: "hackbench", door: hackbench, base: hackbench.HackbenchError },
  { name: "arco-heads", door: arcoHeads, base: arcoHeads.ArcoError },
  { name: "rlxar", door: rlxar, base: rlxar.RlxarError },
  // A reproduction reports its libraries' errors, and its own configuration's.
  { name: "repro", door: repro, base: repro.ReproError },
  // The CLI's own errors (its door exports runCli only): the root is their base.
  { name: "cli", door: { ...io, ...resultFiles }, base: core.RubricError },
];

const BASES = new Set<unknown>(PACKAGES.map((p) => p.base));

/**
 * Constructor arguments for errors whose first argument is not a message; every other class
 * error is built from a message, every Effect tagged error from `{ message }`.
 */
const ARGS: Readonly<Record<string, readonly unknown[]>> = {
  PolicyInputError: ["logpOld[2]", "expected 17 tokens (as logpNew[2]), got 16"],
  RubricValidationError: [[{ path: "stages[1].rules[0].weight", message: "expected ≥ 0, got -2" }]],
  CriterionErrorsError: ["c1 has an error verdict", [{ criterionId: "c1", reason: "judge timed out" }]],
  ProviderHttpError: ["https://api.example/v1/chat/completions", 503, "overloaded"],
  ProviderTimeoutError: [30_000, 1, 3],
  ProviderDeadlineError: [120_000, 3],
  OutputFileNotFoundError: ["/data/run/r.csv", new Error("ENOENT: no such file or directory")],
  OutputFileOutsideRootError: ["/etc/shadow", "/data", "/etc/shadow"],
  OutputFileUnreadableError: ["/data/run", "it is a directory"],
  VerdictCacheError: ["/tmp/cache", "is a file, not a directory"],
  OutputExistsError: ["runs/card.json", "already exists (the JSON card); pass --force to replace it"],
  OutputUnwritableError: ["/tmp", "is a directory; --out names the file for the JSON card"],
  ProviderNetworkError: ["https://api.example/v1/chat/completions", new Error("ECONNREFUSED")],
  ProviderSpecError: ["hf:", "no model named"],
  VerificationSetupError: [[{ criterionId: "c1", problem: 'no verifier for kind "regx"' }]],
  JudgeReplyError: ["not JSON", "{preferred: first"],
  GdpvalTaskNotFoundError: ["zzzz", 'no GDPval task "zzzz"'],
  GdpvalTaskAmbiguousError: ["83d1", ["83d10b8f", "83d1aa00"], 'task prefix "83d1" names 2 tasks'],
  HackbenchScoringError: ["the judge failed", [{ sampleId: "a", text: "…", reason: "timeout" }]],
  SidecarError: [{ method: "gspo.loss", fault: "non_finite", message: "gspo.loss: loss is NaN", data: {} }],
  SidecarTimeoutError: [{ method: "gspo.step", timeoutMs: 60_000, message: "gspo.step: no reply in 60 s" }],
  SidecarCrashedError: [{ message: "killed by SIGKILL", exitCode: null, signal: "SIGKILL", stderr: "" }],
  SidecarStartError: [{ message: "torch is not installed", stderr: "ModuleNotFoundError: torch" }],
  SidecarProtocolError: [{ method: "health", message: "health: reply does not fit its schema" }],
  ArcoInputError: ["steps[2].budgetLeft", "expected an integer ≥ 0, got -1"],
  CriteriaUnparsedError: ["Sure! Here are", "no JSON value in the text"],
  AnnotationReplyError: ["q1", ["steps[1].scores: expected 3 scores, got 2"]],
  ArcoFileError: ["traces.jsonl", ["line 3: s: expected the mean of scores"]],
  ModelCorruptError: ["models/mu/v0003", "score.onnx", "has 100 bytes, the manifest says 4211"],
  ModelFormatError: ["models/mu/v0003", "formatVersion 2; this version reads 1"],
  OnnxRuntimeMissingError: [Object.assign(new Error("Cannot find package"), { code: "ERR_MODULE_NOT_FOUND" })],
  ModelRunError: ["models/mu/v0003", "decode", "Got invalid dimensions for input: past_key_0"],
  ModelClosedError: ["models/mu/v0003"],
  RlxarInputError: ["options.replicas", "expected an integer ≥ 1, got 0"],
  ReproInputError: ["budget", "expected a multiple of 128 rollouts, got 100"],
  RlxarFileError: ["dev.jsonl", ["line 4: context[2]: expected [title, sentences]"]],
  EpisodeDoneError: ["5a8b57f25542995d1e6f1371"],
  PolicyGenerateError: ["llm:openai-compatible:pi", "5a8b57f25542995d1e6f1371", 1, "HTTP 500"],
  AdapterLoadError: ["http://127.0.0.1:8000", "pi-v0002", "/runs/pi-v0002", 500, "internal error", "pi-v0001"],
  DecisionTraceError: [
    "samples[3].decision.trace.candidates",
    "the decision was made among 12 candidates; the view has 14 now",
  ],
  CheckpointMismatchError: ["ckpt/extractive-policy.json", "written for 62 features, this policy has 63"],
  InputFileNotRegularError: ["/dev/zero", "a character device"],
  InputFileSymlinkError: ["runs/arco/table.json", "/proc/self/environ"],
  InputFileTooLargeError: ["outputs.json", 2 ** 28 + 1, 2 ** 28],
  InputLineTooLongError: ["outputs.jsonl", 3, 2 ** 26],
  InputFileUnreadableError: ["none.json", "no such file"],
};

/** The codes the exit table relied on by class name before every error carried one: they must not move. */
const KEPT_CODES: Readonly<Record<string, string>> = {
  RubricValidationError: "rubric.validation",
  VerdictValidationError: "score.verdict-validation",
  CriterionErrorsError: "score.criterion-errors",
  ScoringError: "score.scoring",
  VerificationSetupError: "verification.setup",
  ProviderSpecError: "provider.spec",
  ProviderConfigError: "provider.config",
  CheckpointError: "checkpoint.invalid",
  SampleFileError: "hackbench.sample-file",
  HackbenchInputError: "hackbench.input",
  HackbenchScoringError: "hackbench.scoring",
  TrueUtilityError: "hackbench.true-utility",
  UnknownProbeError: "hackbench.unknown-probe",
};

interface Found {
  readonly pkg: (typeof PACKAGES)[number];
  readonly name: string;
  readonly error: Error & { readonly code?: unknown; readonly _tag?: unknown };
}

/** One instance of every concrete error class every door exports (a class re-exported by two doors counts once). */
function everyError(): Found[] {
  const seen = new Set<unknown>();
  const found: Found[] = [];
  for (const pkg of PACKAGES) {
    for (const [name, value] of Object.entries(pkg.door)) {
      if (!/^[A-Z]\w*Error$/.test(name) || typeof value !== "function") continue;
      if (!(value.prototype instanceof Error) || BASES.has(value) || seen.has(value)) continue;
      seen.add(value);
      const Class = value as new (...args: unknown[]) => Found["error"];
      const args = ARGS[name];
      // Without listed arguments it takes a message: Effect's tagged errors as `{ message }`, classes as is.
      const probe = args === undefined ? new Class({ message: "m" }) : new Class(...args);
      found.push({ pkg, name, error: args !== undefined || "_tag" in probe ? probe : new Class("m") });
    }
  }
  return found;
}

describe("the error model", () => {
  const found = everyError();

  it("finds the errors of every door that has any", () => {
    for (const pkg of PACKAGES.filter((p) => p.base !== undefined || p.taggedArea !== undefined)) {
      expect(
        found.some((f) => f.pkg === pkg),
        pkg.name,
      ).toBe(true);
    }
    expect(found.length).toBeGreaterThan(60);
    for (const name of [...Object.keys(ARGS), ...Object.keys(KEPT_CODES)]) {
      expect(found.map((f) => f.name)).toContain(name);
    }
  });

  it("gives every error a stable code, its own name, and a place under its package's base or area", () => {
    for (const { pkg, name, error } of found) {
      expect(core.isRubricError(error), `${name} carries no <area>.<kind> code`).toBe(true);
      expect(error.name, `${name}'s name`).toBe(name);
      if (error._tag === undefined) {
        expect(pkg.base && error instanceof pkg.base, `${name} does not extend ${pkg.name}'s base`).toBe(true);
      } else {
        expect(String(error.code).startsWith(pkg.taggedArea ?? "(none)"), `${name}: ${String(error.code)}`).toBe(true);
      }
    }
  });

  it("gives each failure its own code: one class, or one kind of both sandboxes", () => {
    const byCode = new Map<string, Found[]>();
    for (const f of found) byCode.set(String(f.error.code), [...(byCode.get(String(f.error.code)) ?? []), f]);
    const sandbox = new Set<string>(Object.values(verifiers.SANDBOX_ERROR_CODES));
    for (const [code, holders] of byCode) {
      if (holders.length === 1) continue;
      const names = holders.map((h) => h.name).join(", ");
      expect(sandbox.has(code) && holders.length === 2, `${names} share ${code}`).toBe(true);
    }
  });

  it("keeps the codes the exit table relied on", () => {
    for (const { name, error } of found.filter((f) => f.name in KEPT_CODES)) {
      expect(error.code, name).toBe(KEPT_CODES[name]);
    }
  });

  it("maps every error to a clean exit: 2 for usage, 1 otherwise, and 2 under hackbench", () => {
    for (const { name, error } of found) {
      expect(exitCodeFor(error, "score"), name).toBe(error.code === "cli.usage" ? 2 : 1);
      expect(exitCodeFor(error, "hackbench"), name).toBe(2);
    }
  });

  it("names in the exit table only codes and areas that some error has", () => {
    const codes = found.map((f) => String(f.error.code));
    const patterns = EXIT_CODES.flatMap((rule) => rule.codes ?? []).filter((p) => p !== "*");
    for (const pattern of patterns) {
      const matched = codes.some((code) => (pattern.endsWith(".") ? code.startsWith(pattern) : code === pattern));
      expect(matched, `no error has the code ${pattern}`).toBe(true);
    }
  });
});
