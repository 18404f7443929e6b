// A small random transformers model for the tests of the sidecar's transformers paths, written by
// python/rubric-trainer/tests/hf_model.py (nothing is downloaded). Those tests need an interpreter
// with torch, transformers, tokenizers and peft: RUBRIC_HF_PYTHON names it. Debian's python3 (CI's)
// has torch only, so they are skipped there, saying why; the GPU machine's python3 has them all.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The interpreter with transformers (RUBRIC_HF_PYTHON), or undefined where none is named. */
export const HF_PYTHON: string | undefined = process.env.RUBRIC_HF_PYTHON || undefined;

/** Why a transformers test is skipped, for `describe.skipIf(...)`'s name. */
export const HF_SKIP_REASON = "set RUBRIC_HF_PYTHON to a python3 with torch, transformers, tokenizers and peft";

const WRITER = fileURLToPath(new URL("../../../../../python/rubric-trainer/tests/hf_model.py", import.meta.url));

export interface HfModelOptions {
  readonly vocab?: number;
  readonly dModel?: number;
  readonly layers?: number;
  readonly heads?: number;
  readonly maxPositions?: number;
  readonly seed?: number;
  /** Save hf_model.py's ChatML template with the tokenizer, as a chat model's has. */
  readonly chatTemplate?: boolean;
}

/** Writes a Llama-architecture model with a BPE learnt from `corpus` into `out` (a new directory) and returns it. */
export async function writeHfModel(
  out: string,
  corpus: readonly string[],
  options: HfModelOptions = {},
): Promise<string> {
  if (HF_PYTHON === undefined) throw new Error(HF_SKIP_REASON);
  const corpusFile = `${out}.corpus.txt`;
  await writeFile(corpusFile, `${corpus.map((text) => JSON.stringify(text)).join("\n")}\n`);
  const flag = (name: string, value: number | undefined) => (value === undefined ? [] : [name, String(value)]);
  await promisify(execFile)(
    HF_PYTHON,
    [
      WRITER,
      "--corpus",
      corpusFile,
      "--out",
      out,
      ...flag("--vocab", options.vocab),
      ...flag("--d-model", options.dModel),
      ...flag("--layers", options.layers),
      ...flag("--heads", options.heads),
      ...flag("--max-positions", options.maxPositions),
      ...flag("--seed", options.seed),
      ...(options.chatTemplate === true ? ["--chat-template", "CHATML"] : []),
    ],
    { env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1", TOKENIZERS_PARALLELISM: "false" } },
  );
  return join(out);
}
