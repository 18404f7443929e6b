import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface OracleCase {
  readonly rubric: unknown;
  readonly fractions: Readonly<Record<string, number>>;
  readonly ignore_gates?: boolean;
}

export interface OracleResult {
  readonly total: number;
  readonly max: number;
  readonly normalized: number;
  readonly stopped_at: string | null;
  readonly stages: readonly { name: string; score: number; max_points: number; passed: boolean }[];
}

/**
 * Scores cases with the independent Python transcription of the reference algorithm
 * (`reference_staged.py`), in one process. Python's json writes floats with repr, so the
 * numbers arrive bit-exact.
 */
export function scoreWithReference(cases: readonly OracleCase[]): OracleResult[] {
  const script = fileURLToPath(new URL("./reference_staged.py", import.meta.url));
  const python = process.env["RUBRIC_PYTHON"] ?? "python3";
  const out = execFileSync(python, [script], { input: JSON.stringify({ cases }), maxBuffer: 256 * 1024 * 1024 });
  return (JSON.parse(out.toString("utf8")) as { results: OracleResult[] }).results;
}
