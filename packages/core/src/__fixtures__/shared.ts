import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Where tests find the project's real data: `../shared` beside the repository root (as laid
 * out for developers and CI), or `RUBRIC_SHARED_DIR`. Absent data is an error, never a pass.
 */
export function sharedPath(relative: string): string {
  const root = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../shared/", import.meta.url));
  const path = `${root.replace(/\/$/, "")}/${relative}`;
  if (!existsSync(path))
    throw new Error(
      `test data ${path} is missing: tests read the real data in ../shared (set RUBRIC_SHARED_DIR to point elsewhere)`,
    );
  return path;
}
