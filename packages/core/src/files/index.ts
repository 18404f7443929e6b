/**
 * `@rubric/core/files` — reading a file a user names: regular files only, with a size bound, and
 * without following links where links are refused (the files of a run directory). Every command
 * of the CLI and every library that reads such a file reads it through these functions.
 *
 * A subpath of its own, not the main door: it is Node's (`node:fs`), and core's main door stays
 * free of I/O, because the report bundles it into a page that runs in a browser.
 */
export {
  InputFileFault,
  InputFileNotRegularError,
  InputFileSymlinkError,
  InputFileTooLargeError,
  InputFileUnreadableError,
  InputLineTooLongError,
  isInputFileError,
} from "./errors.js";
export { readInputChunks } from "./chunks.js";
export { openInputFile, openInputFileSync, type InputFileOptions } from "./open.js";
export {
  MAX_INPUT_FILE_BYTES,
  readInputFile,
  readInputText,
  readStandardInputText,
  type ReadInputOptions,
} from "./read.js";
export { MAX_INPUT_LINE_BYTES, boundedLines, readInputLines, type InputLinesOptions } from "./lines.js";
