import { RubricError } from "@rubric/core";

/**
 * Every error `@rubric/arco-heads` throws. Callers branch on `code` (stable across releases) or
 * on `instanceof`; the message names the offending step, field, line or file.
 */
export abstract class ArcoError extends RubricError {
  abstract override readonly code: `arco.${string}`;
}

/** A step, trajectory or option handed to a function here is not one it can use. */
export class ArcoInputError extends ArcoError {
  override readonly name = "ArcoInputError";
  readonly code = "arco.input";
  constructor(
    /** Where in the argument the fault is, e.g. `trajectory.turns[2].budgetLeft`. */
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** A generation's text holds no `{"criteria": [...]}` object at all: there is nothing to pad. */
export class CriteriaUnparsedError extends ArcoError {
  override readonly name = "CriteriaUnparsedError";
  readonly code = "arco.criteria-unparsed";
  constructor(
    readonly text: string,
    detail: string,
  ) {
    super(`criteria: ${detail}; the text was ${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)}`);
  }
}

/** A teacher's annotation reply is not K criteria and K scores for every step of the trajectory. */
export class AnnotationReplyError extends ArcoError {
  override readonly name = "AnnotationReplyError";
  readonly code = "arco.annotation-reply";
  constructor(
    /** The trajectory the reply was for. */
    readonly trajectory: string,
    /** Each fault as `steps[2].scores: …`; the step index is the reply's, 0-based. */
    readonly problems: readonly string[],
  ) {
    super(`annotation of trajectory ${JSON.stringify(trajectory)}: ${problems.join("; ")}`);
  }
}

/** A trace or SFT file that does not read back: every bad line, numbered. */
export class ArcoFileError extends ArcoError {
  override readonly name = "ArcoFileError";
  readonly code = "arco.file";
  constructor(
    readonly source: string,
    /** `line 3: scores[1]: …` per fault. */
    readonly problems: readonly string[],
  ) {
    super(
      problems.length === 1
        ? `${source}: ${problems[0]}`
        : `${source}: ${problems.length} problems:\n${problems.map((p) => `  ${p}`).join("\n")}`,
    );
  }
}

/** A model directory that is partial or damaged: a file missing, truncated or not what its hash says. */
export class ModelCorruptError extends ArcoError {
  override readonly name = "ModelCorruptError";
  readonly code = "arco.model-corrupt";
  constructor(
    readonly directory: string,
    /** The file at fault, relative to `directory`. */
    readonly file: string,
    detail: string,
  ) {
    super(`model directory ${directory}: ${file}: ${detail}`);
  }
}

/** A model directory written in a manifest format this version cannot read (a newer exporter). */
export class ModelFormatError extends ArcoError {
  override readonly name = "ModelFormatError";
  readonly code = "arco.model-format";
  constructor(
    readonly directory: string,
    detail: string,
  ) {
    super(`model directory ${directory}: manifest.json: ${detail}`);
  }
}

/** onnxruntime-node, the optional peer that runs μ's graphs, is not installed beside this package. */
export class OnnxRuntimeMissingError extends ArcoError {
  override readonly name = "OnnxRuntimeMissingError";
  readonly code = "arco.runtime-missing";
  constructor(override readonly cause: unknown) {
    super(
      "RubricModel runs μ's graphs in onnxruntime-node, an optional peer dependency of @rubric/arco-heads: " +
        "install it beside it (ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@^1.30.0 — the skip " +
        "keeps its CPU binaries and stops its install script from downloading CUDA libraries)",
    );
  }
}

/** A graph of a loaded model failed while running: the model directory's graphs do not fit the manifest. */
export class ModelRunError extends ArcoError {
  override readonly name = "ModelRunError";
  readonly code = "arco.model-run";
  constructor(
    readonly directory: string,
    /** `score`, `prefill` or `decode`. */
    readonly graph: string,
    detail: string,
    override readonly cause?: unknown,
  ) {
    super(`model directory ${directory}: ${graph} graph: ${detail}`);
  }
}

/** A call on a `RubricModel` after `close()`. */
export class ModelClosedError extends ArcoError {
  override readonly name = "ModelClosedError";
  readonly code = "arco.model-closed";
  constructor(readonly directory: string) {
    super(`the RubricModel of ${directory} is closed`);
  }
}
