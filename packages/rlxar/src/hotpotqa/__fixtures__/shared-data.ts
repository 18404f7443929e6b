import { fileURLToPath } from "node:url";

/** The project's shared data (`../shared/` beside the repository, or `RUBRIC_SHARED_DIR`). */
const SHARED = process.env["RUBRIC_SHARED_DIR"] ?? fileURLToPath(new URL("../../../../../../shared/", import.meta.url));

/** HotpotQA's 400 dev questions (ARCO's sample, `supporting_facts`) and 469 train questions (`supporting_titles`). */
export const HOTPOT_DEV = `${SHARED}/data/hotpotqa/dev.jsonl`;
export const HOTPOT_TRAIN = `${SHARED}/data/hotpotqa/train.jsonl`;
