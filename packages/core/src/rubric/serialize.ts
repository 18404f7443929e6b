import { toJsonLines } from "../records/json-lines.js";
import type { FlatRubric } from "./flat.js";
import type { LoadedRubric } from "./parse.js";
import { serializeStagedRubric, type StagedRubric } from "./staged.js";

/** The plain JSON value of a rubric, in the form it was loaded in. `parseRubric` of it gives the same rubric back. */
export function serializeRubric(rubric: LoadedRubric | FlatRubric | StagedRubric): unknown {
  if ("kind" in rubric) return rubric.kind === "flat" ? rubric.rubric : serializeStagedRubric(rubric.rubric);
  return "stages" in rubric ? serializeStagedRubric(rubric) : rubric;
}

/** One rubric per line, as the GDPval files are written. */
export function toJsonl(rubrics: readonly (LoadedRubric | FlatRubric | StagedRubric)[]): string {
  return toJsonLines(rubrics.map(serializeRubric));
}
