import { MU_POOLINGS } from "@rubric/arco-heads";
import { z } from "zod";
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
