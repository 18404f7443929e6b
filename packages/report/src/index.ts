/**
 * @rubric/report — a self-contained HTML audit of rubric scores. `buildReport` writes one HTML
 * file (no network at view time) in which a person reads every output's verdicts and rationales,
 * moves criterion weights and watches every total and the ranking change, computed by
 * @rubric/core's own `scoreRubric` bundled into the page; "Export weights" saves the file
 * `rubric score --weights` reads.
 */

// page: the one self-contained HTML page and the sections it is built from
export { buildReport, type ReportData, type ReportSection } from "./html/build.js";

// sections: score results, and documents (a reproduction's tables, an integrity card) with figures
export {
  ScoreResultsFileSchema,
  scoresSection,
  type ReportOutput,
  type ScoreResultsFile,
  type ScoresSection,
} from "./scores/scores.js";
export { documentSection, type DocumentSection, type Figure } from "./document/document.js";
export { markdownBlocks, type Block } from "./document/markdown.js";

// errors: the base of every error report throws, with a stable code
export { ReportError, ReportInputError, ReportPageMissingError } from "./errors.js";
