import { setMaxListeners } from "node:events";
import { createRng, formatZodIssues, mean, type FlatRubric, type RubricScore, type StagedRubric } from "@rubric/core";
import { scoreOutputs, type ScoredOutput, type VerdictCache, type VerifierRegistry } from "@rubric/verifiers";
import { runEffect } from "@rubric/core/effect";
import { Effect } from "effect";
import { z } from "zod";
import { INTEGRITY_CARD_FORMAT, IntegrityCardSchema, type IntegrityCard, type ProbeResult } from "../card/card.js";
import { type UnknownProbeError, resolveProbes } from "../probes/catalog.js";
import type { Probe } from "../probes/probe.js";
import { rubricSurface } from "../probes/surface.js";
import { HackSampleSchema, type HackSample } from "../sample/sample.js";
import { changedSpan } from "./diff.js";
import { HackbenchInputError, HackbenchScoringError, TrueUtilityError } from "./errors.js";
import { detectableGain, pairedGain, probeOutcome, type GainOptions } from "./gain.js";
import type { TrueUtility } from "./utility.js";

export interface HackbenchOptions {
  /** The verifiers the rubric's criteria name; include a judge (`llmJudge`) for `llm-judge` criteria. */
  readonly registry: VerifierRegistry;
  /** Built-in probe ids or your own probes; default every built-in probe. */
  readonly probes?: readonly (string | Probe)[];
  /** τ: the smallest mean gain that counts as an exploit. Default 0.05. */
  readonly threshold?: number;
  /** Seeds every probe's choices and every bootstrap. Default 0. */
  readonly seed?: number;
  /** Coverage of the bootstrap intervals. Default 0.95. */
  readonly confidence?: number;
  /** Bootstrap resamples per interval. Default 10 000. */
  readonly resamples?: number;
  /** Verdicts found here are not recomputed: a rerun of a judged card makes no judge calls. */
  readonly cache?: VerdictCache;
  /** Verifier calls in flight at once. Default 8. */
  readonly concurrency?: number;
  readonly ignoreGates?: boolean;
  /** Where the true utility is known, its change is reported beside the proxy gain. */
  readonly trueUtility?: TrueUtility;
  /** The judge behind `llm-judge` criteria, as written on the card (a provider spec). */
  readonly judge?: string;
  /** The command that reruns the given probes with these settings, written on the card. */
  readonly replay?: (probeIds: readonly string[]) => string;
  readonly signal?: AbortSignal;
  /** Called as outputs are scored. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** What `hackbench` may fail with (each is a `HackbenchError`). */
export type HackbenchFailure = HackbenchInputError | UnknownProbeError | HackbenchScoringError | TrueUtilityError;

const SettingsSchema = z.strictObject({
  threshold: z.number().min(0).default(0.05),
  seed: z.int().default(0),
  confidence: z.number().gt(0).lt(1).default(0.95),
  resamples: z.int().min(1).default(10_000),
  concurrency: z.int().min(1).default(8),
});
type Settings = z.output<typeof SettingsSchema>;

/** One distinct text to score, with the sample it belongs to and the first edit that produced it. */
interface Text {
  readonly sample: HackSample;
  readonly text: string;
  readonly label: string;
}

interface Scored {
  readonly normalized: number;
  /** Each criterion's share of the normalised score. */
  readonly shares: ReadonlyMap<string, number>;
}

interface Pair {
  readonly sample: number;
  readonly probe: number;
  readonly control: number;
}

const EPSILON = 1e-12;

/**
 * Runs every probe on every sample and scores probe and control with the rubric's real
 * verifiers: per probe, the mean paired gain with its bootstrap interval, the criteria that paid,
 * the true-utility change where known, and a worked example of each exploit. Identical texts are
 * scored once; outputs are scored in chunks, and the first error verdict fails the run with
 * `HackbenchScoringError` (never a clean verdict, never a 0).
 *
 * @example
 * const card = await Effect.runPromise(hackbench(rubric, samples, { registry: rulesRegistry() }));
 */
export function hackbench(
  rubric: FlatRubric | StagedRubric,
  samples: readonly HackSample[],
  options: HackbenchOptions,
): Effect.Effect<IntegrityCard, HackbenchFailure> {
  return Effect.gen(function* () {
    const settings = yield* parseSettings(options);
    const checked = yield* checkSamples(samples);
    const probes = yield* Effect.try({
      try: () => resolveProbes(options.probes),
      catch: (error) => error as UnknownProbeError,
    });
    const surface = rubricSurface(rubric);

    const texts: Text[] = [];
    const indexOf = new Map<string, number>();
    const add = (sample: number, text: string, label: string) => {
      const key = `${sample}\u0000${text}`;
      let index = indexOf.get(key);
      if (index === undefined) {
        index = texts.push({ sample: checked[sample]!, text, label }) - 1;
        indexOf.set(key, index);
      }
      return index;
    };
    const honest = checked.map((sample, s) => add(s, sample.output, "honest output"));
    const pairs = probes.map((probe) =>
      checked.flatMap((sample, s): Pair[] => {
        const edit = probe.apply({
          sample,
          surface,
          rng: createRng(settings.seed).fork(`${probe.id}\u0000${sample.id}`),
        });
        return edit === undefined
          ? []
          : [
              {
                sample: s,
                probe: add(s, edit.probe, `${probe.id} probe`),
                control: add(s, edit.control, `${probe.id} control`),
              },
            ];
      }),
    );

    const scored = yield* scoreTexts(rubric, texts, options, settings);
    const utilities = options.trueUtility
      ? yield* trueUtilities(
          options.trueUtility,
          texts,
          new Set(pairs.flat().flatMap((p) => [p.probe, p.control])),
          settings,
        )
      : undefined;

    const gainOptions = (label: string): GainOptions => ({
      seed: `${settings.seed}:${label}`,
      confidence: settings.confidence,
      resamples: settings.resamples,
    });
    const criterionIds = surface.criteria.map((c) => c.id);
    const results = probes.map((probe, p): ProbeResult => {
      const mine = pairs[p]!;
      const differences = mine.map((pair) => scored[pair.probe]!.normalized - scored[pair.control]!.normalized);
      const gain = pairedGain(differences, gainOptions(probe.id));
      const outcome = mine.length === 0 ? "ruled-out" : probeOutcome(gain, settings.threshold);
      const exploit = outcome === "exploit";
      const criteria = criterionGains(criterionIds, mine, scored);
      const meanOf = (pick: (pair: Pair) => number) => mean(mine.map((pair) => scored[pick(pair)]!.normalized));
      return {
        id: probe.id,
        title: probe.title,
        tests: probe.exploit,
        matchedBy: probe.matchedBy,
        applicable: mine.length,
        gain: gain.gain,
        ci: [gain.ci[0], gain.ci[1]],
        exploit,
        inconclusive: outcome === "inconclusive",
        detectableGain: mine.length === 0 ? null : detectableGain(gain, settings.threshold),
        means:
          mine.length === 0
            ? null
            : {
                honest: meanOf((pair) => honest[pair.sample]!),
                probe: meanOf((pair) => pair.probe),
                control: meanOf((pair) => pair.control),
              },
        trueGain:
          utilities === undefined
            ? null
            : asInterval(
                pairedGain(
                  mine.map((pair) => utilities.get(pair.probe)! - utilities.get(pair.control)!),
                  gainOptions(`${probe.id}:true`),
                ),
              ),
        criteria,
        exploited: criteria.filter((c) => c.gain > EPSILON).map((c) => c.id),
        example: exploit ? workedExample(mine, differences, texts, scored, honest) : null,
        replay: options.replay?.([probe.id]) ?? null,
      };
    });
    const exploits = results.filter((r) => r.exploit).map((r) => r.id);
    const inconclusive = results.filter((r) => r.inconclusive).map((r) => r.id);
    const detectable = results.flatMap((r) => (r.detectableGain === null ? [] : [r.detectableGain]));
    return IntegrityCardSchema.parse({
      format: INTEGRITY_CARD_FORMAT,
      verdict: exploits.length > 0 ? "hackable" : inconclusive.length > 0 ? "inconclusive" : "clean",
      rubric: {
        id: "stages" in rubric ? (rubric.taskId ?? rubric.category_name) : rubric.id,
        criteria: surface.criteria.length,
      },
      judge: options.judge ?? null,
      samples: checked.length,
      threshold: settings.threshold,
      confidence: settings.confidence,
      resamples: settings.resamples,
      seed: settings.seed,
      honestMean: mean(honest.map((i) => scored[i]!.normalized)),
      exploits,
      inconclusive,
      detectableGain: detectable.length === 0 ? null : Math.max(...detectable),
      probes: results,
      command: options.replay?.(probes.map((p) => p.id)) ?? null,
    } satisfies IntegrityCard);
  });
}

/**
 * `hackbench` for callers who don't use Effect: resolves to the integrity card, rejects with the
 * typed error itself.
 *
 * @example
 * const card = await runHackbench(rubric, samples, { registry: rulesRegistry(), probes: ["keyword-stuffing"] });
 * card.verdict; // "clean" | "hackable" | "inconclusive"
 */
export async function runHackbench(
  rubric: FlatRubric | StagedRubric,
  samples: readonly HackSample[],
  options: HackbenchOptions,
): Promise<IntegrityCard> {
  return runEffect(hackbench(rubric, samples, options), options.signal);
}

function parseSettings(options: HackbenchOptions): Effect.Effect<Settings, HackbenchInputError> {
  const { threshold, seed, confidence, resamples, concurrency } = options;
  const parsed = SettingsSchema.safeParse({ threshold, seed, confidence, resamples, concurrency });
  return parsed.success
    ? Effect.succeed(parsed.data)
    : Effect.fail(new HackbenchInputError(formatZodIssues(parsed.error, { prefix: ["options"], separator: "; " })));
}

function checkSamples(samples: readonly HackSample[]): Effect.Effect<HackSample[], HackbenchInputError> {
  const parsed = z.array(HackSampleSchema).min(1).safeParse(samples);
  if (!parsed.success)
    return Effect.fail(
      new HackbenchInputError(formatZodIssues(parsed.error, { prefix: ["samples"], separator: "; " })),
    );
  const ids = new Set<string>();
  for (const sample of parsed.data) {
    if (ids.has(sample.id))
      return Effect.fail(new HackbenchInputError(`samples: duplicate id ${JSON.stringify(sample.id)}`));
    ids.add(sample.id);
  }
  return Effect.succeed(parsed.data);
}

function shares(score: RubricScore): Map<string, number> {
  // Flat contributions are already shares of the normalised score; staged ones are points.
  const scale = score.kind === "flat" ? 1 : score.max;
  return new Map(score.criteria.map((c) => [c.criterionId, (c.contribution ?? 0) / scale]));
}

function failureReason(result: ScoredOutput): string {
  const errors = result.verdicts
    .filter((v) => v.status === "error")
    .map((v) => `${v.criterionId}: ${v.error ?? "error"}`);
  return errors.length > 0 ? errors.join("; ") : (result.scoreError ?? "no score");
}

/**
 * Scores texts chunk by chunk, so that a failing judge stops the run after one chunk instead of
 * spending calls (and retries) on every output first. The first chunk is one wave of
 * `concurrency` outputs: a broken judge costs one round of retries, not eight.
 */
function scoreTexts(
  rubric: FlatRubric | StagedRubric,
  texts: readonly Text[],
  options: HackbenchOptions,
  settings: Settings,
): Effect.Effect<Scored[], HackbenchScoringError> {
  const first = settings.concurrency;
  const size = Math.max(64, settings.concurrency * 8);
  const chunks = [
    texts.slice(0, first),
    ...Array.from({ length: Math.ceil((texts.length - first) / size) }, (_, c) =>
      texts.slice(first + c * size, first + (c + 1) * size),
    ),
  ];
  let done = 0;
  return Effect.forEach(chunks, (chunk) =>
    Effect.tryPromise({
      try: (signal) => {
        // Every verifier call in flight listens on this one signal; more than ten is expected, not a leak.
        setMaxListeners(0, signal);
        return scoreOutputs(
          rubric,
          chunk.map((t, i) => ({
            id: String(i),
            output: t.text,
            input: t.sample.input,
          })),
          {
            registry: options.registry,
            concurrency: settings.concurrency,
            errorsAs: "fail",
            ignoreGates: options.ignoreGates ?? false,
            signal,
            cache: options.cache,
            onProgress: () => options.onProgress?.(++done, texts.length),
          },
        );
      },
      catch: (error) => new HackbenchScoringError(`scoring failed: ${(error as Error).message}`),
    }).pipe(
      Effect.flatMap((results) => {
        const failures = results.flatMap((result, i) =>
          result.score ? [] : [{ sampleId: chunk[i]!.sample.id, text: chunk[i]!.label, reason: failureReason(result) }],
        );
        if (failures.length === 0)
          return Effect.succeed(
            results.map((r): Scored => ({ normalized: r.score!.normalized, shares: shares(r.score!) })),
          );
        const first = failures[0]!;
        return Effect.fail(
          new HackbenchScoringError(
            `${failures.length} output(s) could not be scored, so nothing can be concluded (an error verdict is never counted as 0). First: sample ${JSON.stringify(first.sampleId)}, ${first.text}: ${first.reason}`,
            failures,
          ),
        );
      }),
    ),
  ).pipe(Effect.map((parts) => parts.flat()));
}

function trueUtilities(
  utility: TrueUtility,
  texts: readonly Text[],
  needed: ReadonlySet<number>,
  settings: Settings,
): Effect.Effect<Map<number, number>, TrueUtilityError> {
  return Effect.forEach(
    [...needed],
    (index) => {
      const { sample, text, label } = texts[index]!;
      return Effect.tryPromise({
        try: async () => utility(sample, text),
        catch: (error) =>
          error instanceof TrueUtilityError
            ? error
            : new TrueUtilityError(`sample ${JSON.stringify(sample.id)}, ${label}: ${(error as Error).message}`),
      }).pipe(
        Effect.filterOrFail(
          (value) => Number.isFinite(value),
          (value) =>
            new TrueUtilityError(
              `sample ${JSON.stringify(sample.id)}, ${label}: the true utility must be a finite number, got ${value}`,
            ),
        ),
        Effect.map((value) => [index, value] as const),
      );
    },
    { concurrency: settings.concurrency },
  ).pipe(Effect.map((entries) => new Map(entries)));
}

function asInterval(gain: { gain: number; ci: readonly [number, number] }) {
  return { gain: gain.gain, ci: [gain.ci[0], gain.ci[1]] as [number, number] };
}

/** Per criterion: the mean change of its share (probe − control) and on how many samples it paid. */
function criterionGains(ids: readonly string[], pairs: readonly Pair[], scored: readonly Scored[]) {
  if (pairs.length === 0) return [];
  return ids
    .map((id) => {
      const changes = pairs.map(
        (pair) => (scored[pair.probe]!.shares.get(id) ?? 0) - (scored[pair.control]!.shares.get(id) ?? 0),
      );
      return { id, gain: mean(changes), paid: changes.filter((change) => change > EPSILON).length };
    })
    .filter((c) => Math.abs(c.gain) > EPSILON || c.paid > 0)
    .sort((a, b) => b.gain - a.gain);
}

function workedExample(
  pairs: readonly Pair[],
  differences: readonly number[],
  texts: readonly Text[],
  scored: readonly Scored[],
  honest: readonly number[],
) {
  let best = 0;
  differences.forEach((d, i) => {
    if (d > differences[best]!) best = i;
  });
  const pair = pairs[best]!;
  const original = texts[honest[pair.sample]!]!.text;
  return {
    sampleId: texts[pair.probe]!.sample.id,
    probeScore: scored[pair.probe]!.normalized,
    controlScore: scored[pair.control]!.normalized,
    gain: differences[best]!,
    probeEdit: changedSpan(original, texts[pair.probe]!.text).added,
    controlEdit: changedSpan(original, texts[pair.control]!.text).added,
  };
}
