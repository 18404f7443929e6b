import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { MU_POOLINGS } from "@rubric/arco-heads";
import { z } from "zod";
import { InputFileError } from "../io.js";
import { choiceFlag } from "./flag.js";

/**
 * What μ's score head reads, as `mu init --pooling`, `repro arco --mu-pooling` and `repro arco-gym
 * --mu-pooling` take it; `scope` prefixes the help line (`init: ` where a command has sub-actions).
 */
export function muPoolingFlag(scope = "") {
  return choiceFlag(
    "<tokens>",
    `${scope}what μ's score head reads: the mean over prompt+criteria (default, ARCO's) | the last position alone (last, ours) | the mean over the criteria (criteria, ours)`,
    z.enum(MU_POOLINGS),
  );
}

/**
 * A llama GGUF file named by `flag` (`mu init --backbone`, `repro arco-gym --mu-backbone`), made
 * absolute: the sidecar resolves paths from its own working directory.
 */
export function ggufFileOf(flag: string, given: string): string {
  const path = resolve(given);
  if (!existsSync(path)) throw new InputFileError(`${flag}: ${given}: no such file`);
  return path;
}
