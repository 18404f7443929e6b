import { z } from "zod";
import { readJsonLines, withoutBom } from "../records/json-lines.js";
import { formatZodPath } from "../records/zod-issues.js";
import { RubricValidationError, type RubricIssue } from "./errors.js";
import { FlatRubricSchema, duplicateCriterionIds, type FlatRubric } from "./flat.js";
import { toRubricIssues } from "./issues.js";
import { jsonSyntaxIssue } from "./json-syntax.js";
import {
  StagedRubricRecordSchema,
  StagedRubricSchema,
  completeStagedRubric,
  duplicateRuleIds,
  type LoadCorrection,
  type StagedRubric,
} from "./staged.js";

/** A rubric read from a document, in whichever of the two forms it was written. */
export type LoadedRubric = (
  | { readonly kind: "flat"; readonly rubric: FlatRubric; readonly line?: number }
  | {
      readonly kind: "staged";
      readonly rubric: StagedRubric;
      /** Changes the loader made (stage rescaling, pass-mark auto-correction); empty for clean files. */
      readonly corrections: readonly LoadCorrection[];
      readonly line?: number;
    }
) & {
  /** Its position in a JSON document holding an array of rubrics, where issue paths start `[index].`. */
  readonly index?: number;
};

export interface ParseOptions {
  /** A file name or label, repeated in every issue. */
  readonly source?: string;
  /** The 1-based line the value came from (JSONL). */
  readonly line?: number;
}

/** Everything a document held: the rubrics that loaded, and an issue for each part that did not. */
export interface RubricDocument {
  readonly rubrics: readonly LoadedRubric[];
  readonly issues: readonly RubricIssue[];
}

type Outcome = { ok: true; loaded: LoadedRubric } | { ok: false; issues: RubricIssue[] };

function locate(issues: RubricIssue[], options: ParseOptions): RubricIssue[] {
  return issues.map((issue) => ({
    ...issue,
    source: options.source,
    line: options.line,
  }));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function withDuplicates(
  issues: RubricIssue[],
  duplicates: { path: (string | number)[]; message: string }[],
  prefix: string[],
): RubricIssue[] {
  const seen = new Set(issues.map((i) => `${i.path}\u0000${i.message}`));
  for (const d of duplicates) {
    const issue = { path: formatZodPath([...prefix, ...d.path]), message: d.message };
    if (!seen.has(`${issue.path}\u0000${issue.message}`)) issues.push(issue);
  }
  return issues;
}

function tryParse(value: unknown, options: ParseOptions): Outcome {
  const fail = (issues: RubricIssue[]): Outcome => ({ ok: false, issues: locate(issues, options) });
  const line = options.line === undefined ? {} : { line: options.line };
  if (!isObject(value)) {
    return fail([
      {
        path: "(root)",
        message: `expected a rubric object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`,
      },
    ]);
  }
  // The form is told by its shape: `criteria` is flat, `stages` staged, `{task_id, rubric}` a GDPval record.
  if ("criteria" in value && !("stages" in value)) {
    const result = FlatRubricSchema.safeParse(value, { reportInput: true });
    if (!result.success)
      return fail(withDuplicates(toRubricIssues(result.error.issues), duplicateCriterionIds(value), []));
    return { ok: true, loaded: { kind: "flat", rubric: result.data, ...line } };
  }
  if ("rubric" in value || "task_id" in value) {
    const result = StagedRubricRecordSchema.safeParse(value, { reportInput: true });
    if (!result.success)
      return fail(withDuplicates(toRubricIssues(result.error.issues), duplicateRuleIds(value["rubric"]), ["rubric"]));
    const { rubric, corrections } = completeStagedRubric(result.data.rubric, result.data.task_id);
    return { ok: true, loaded: { kind: "staged", rubric, corrections, ...line } };
  }
  if ("stages" in value) {
    const result = StagedRubricSchema.safeParse(value, { reportInput: true });
    if (!result.success) return fail(withDuplicates(toRubricIssues(result.error.issues), duplicateRuleIds(value), []));
    const { rubric, corrections } = completeStagedRubric(result.data);
    return { ok: true, loaded: { kind: "staged", rubric, corrections, ...line } };
  }
  return fail([
    {
      path: "(root)",
      message:
        "not a rubric: expected `criteria` (flat rubric), `stages` (staged rubric) or `{task_id, rubric}` (GDPval record)",
    },
  ]);
}

/**
 * Validates one rubric value (already parsed from JSON) in either form.
 *
 * @example
 * const loaded = parseRubric({ id: "r", criteria: [{ id: "c", text: "Cites a source", weight: 1, verifier: { kind: "citations" } }] });
 * loaded.kind; // "flat"
 * @throws RubricValidationError listing every issue with its path.
 */
export function parseRubric(value: unknown, options: ParseOptions = {}): LoadedRubric {
  const outcome = tryParse(value, options);
  if (!outcome.ok) throw new RubricValidationError(outcome.issues);
  return outcome.loaded;
}

/** Parses a flat rubric, refusing the staged form. @throws RubricValidationError */
export function parseFlatRubric(value: unknown, options: ParseOptions = {}): FlatRubric {
  const loaded = parseRubric(value, options);
  if (loaded.kind !== "flat")
    throw new RubricValidationError(
      locate(
        [{ path: "(root)", message: "expected a flat rubric (`criteria`), got a staged rubric (`stages`)" }],
        options,
      ),
    );
  return loaded.rubric;
}

/** Parses a staged rubric or `{task_id, rubric}` record, refusing the flat form. @throws RubricValidationError */
export function parseStagedRubric(value: unknown, options: ParseOptions = {}): StagedRubric {
  const loaded = parseRubric(value, options);
  if (loaded.kind !== "staged")
    throw new RubricValidationError(
      locate(
        [{ path: "(root)", message: "expected a staged rubric (`stages`), got a flat rubric (`criteria`)" }],
        options,
      ),
    );
  return loaded.rubric;
}

/**
 * Reads every rubric of a JSONL document (one rubric or `{task_id, rubric}` record per line;
 * blank lines ignored). Never stops at the first bad line: good lines load, bad ones become issues.
 */
export function readRubricJsonl(text: string, options: Omit<ParseOptions, "line"> = {}): RubricDocument {
  const { records, issues } = readJsonLines(text, z.unknown(), options);
  const rubrics: LoadedRubric[] = [];
  for (const { line, value } of records) {
    const outcome = tryParse(value, { ...options, line });
    if (outcome.ok) rubrics.push(outcome.loaded);
    else issues.push(...outcome.issues);
  }
  // The JSON faults came first; a reader fixes a file top to bottom, so issues go in line order.
  issues.sort((a, b) => a.line! - b.line!);
  if (rubrics.length === 0 && issues.length === 0)
    issues.push(locate([{ path: "(root)", message: "no rubric found: the document is empty" }], options)[0]!);
  return { rubrics, issues };
}

/** Reads a JSON document holding one rubric or an array of rubrics. */
export function readRubricJson(text: string, options: Omit<ParseOptions, "line"> = {}): RubricDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { rubrics: [], issues: [jsonSyntaxIssue(text, error, options)] };
  }
  const values = Array.isArray(value) ? value : [value];
  const rubrics: LoadedRubric[] = [];
  const issues: RubricIssue[] = [];
  values.forEach((item, index) => {
    const outcome = tryParse(item, options);
    if (outcome.ok) rubrics.push(Array.isArray(value) ? { ...outcome.loaded, index } : outcome.loaded);
    else
      issues.push(
        ...outcome.issues.map((issue) =>
          Array.isArray(value)
            ? { ...issue, path: issue.path === "(root)" ? `[${index}]` : `[${index}].${issue.path}` }
            : issue,
        ),
      );
  });
  if (Array.isArray(value) && value.length === 0)
    issues.push(locate([{ path: "(root)", message: "no rubric found: the array is empty" }], options)[0]!);
  return { rubrics, issues };
}

/** Reads a `.json` or `.jsonl` document, choosing by `format` or, failing that, by the source's extension. */
export function readRubricDocument(
  text: string,
  options: Omit<ParseOptions, "line"> & { readonly format?: "json" | "jsonl" } = {},
): RubricDocument {
  const format = options.format ?? (options.source?.toLowerCase().endsWith(".jsonl") ? "jsonl" : "json");
  const body = withoutBom(text);
  return format === "jsonl" ? readRubricJsonl(body, options) : readRubricJson(body, options);
}

/** Like {@link readRubricDocument} but throws when any part of the document is invalid. @throws RubricValidationError */
export function loadRubrics(
  text: string,
  options: Omit<ParseOptions, "line"> & { readonly format?: "json" | "jsonl" } = {},
): LoadedRubric[] {
  const document = readRubricDocument(text, options);
  if (document.issues.length > 0) throw new RubricValidationError(document.issues);
  return [...document.rubrics];
}
