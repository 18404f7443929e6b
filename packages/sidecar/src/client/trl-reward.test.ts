import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, rubricScorer, scoreOutputs, serveRewards, type RewardServer } from "@rubric/verifiers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPython, defaultTrainerPath } from "./client.js";

const run = promisify(execFile);
const registry = createVerifierRegistry({ python: false, js: false });
const rubric = parseFlatRubric({
  id: "answer",
  criteria: [
    { id: "mentions-paris", text: "Names Paris", weight: 2, verifier: { kind: "includes", terms: ["Paris"] } },
    { id: "one-sentence", text: "Ends with a full stop", weight: 1, verifier: { kind: "regex", pattern: "\\.$" } },
  ],
});

// What TRL passes: prompts and completions, plain or conversational, plus the dataset's other columns.
const SCRIPT = `
import json, os, sys
from rubric_trainer import RewardServerError, make_trl_reward, trl_reward
url = sys.argv[1]
prompts = ["Capital of France?", [{"role": "user", "content": "Capital of France?"}], "Capital of Italy?", "Say hi"]
completions = ["It is Paris.", [{"role": "assistant", "content": "paris, I think"}], "Rome.", "hi"]
batched = make_trl_reward(url, max_batch=3)
os.environ["RUBRIC_REWARD_URL"] = url
out = {"batched": batched(prompts, completions, answer=["a", "b", "c", "d"]), "from_env": trl_reward(prompts[:2], completions[:2]), "name": batched.__name__}
try:
    make_trl_reward(url)(prompts, completions)
except RewardServerError as error:
    out["too_big"] = {"status": error.status, "message": str(error)}
print(json.dumps(out))
`;

describe("rubric_trainer.trl_reward against serveRewards", () => {
  let server: RewardServer;
  beforeAll(async () => {
    server = await serveRewards(rubricScorer(rubric, { registry }), { maxBatch: 3 });
  });
  afterAll(() => server.close());

  it("returns the rubric's rewards for TRL's prompts and completions, in server-sized batches", async () => {
    const { stdout } = await run(defaultPython(), ["-c", SCRIPT, server.url], {
      env: { ...process.env, PYTHONPATH: defaultTrainerPath()! },
      timeout: 120_000,
    });
    const out = JSON.parse(stdout) as {
      batched: number[];
      from_env: number[];
      name: string;
      too_big: { status: number; message: string };
    };
    const texts = ["It is Paris.", "paris, I think", "Rome.", "hi"];
    const expected = (
      await scoreOutputs(
        rubric,
        texts.map((output, i) => ({ id: String(i), input: "", output })),
        { registry },
      )
    ).map((s) => s.score!.normalized);
    expect(expected).toEqual([1, 2 / 3, 1 / 3, 0]);
    expect(out.batched).toEqual(expected);
    expect(out.from_env).toEqual(expected.slice(0, 2));
    expect(out.name).toBe("rubric_reward");
    // Four completions in one request exceed the server's maxBatch of 3: a named error with the status, not a reward.
    expect(out.too_big).toEqual({ status: 413, message: `${server.url}: HTTP 413: batch of 4 exceeds the limit of 3` });
  }, 120_000);

  it("sends the bearer token a guarded server needs, from the argument or RUBRIC_REWARD_TOKEN", async () => {
    const guarded = await serveRewards(rubricScorer(rubric, { registry }), { token: "tok-123" });
    try {
      const script = `
import json, os, sys
from rubric_trainer import RewardServerError, make_trl_reward
url = sys.argv[1]
out = {"arg": make_trl_reward(url, token="tok-123")(["q"], ["Paris."])}
os.environ["RUBRIC_REWARD_TOKEN"] = "tok-123"
out["env"] = make_trl_reward(url)(["q"], ["Paris."])
try:
    make_trl_reward(url, token="wrong")(["q"], ["Paris."])
except RewardServerError as error:
    out["wrong"] = error.status
print(json.dumps(out))
`;
      const { stdout } = await run(defaultPython(), ["-c", script, guarded.url], {
        env: { ...process.env, PYTHONPATH: defaultTrainerPath()! },
        timeout: 60_000,
      });
      expect(JSON.parse(stdout)).toEqual({ arg: [1], env: [1], wrong: 401 });
    } finally {
      await guarded.close();
    }
  }, 60_000);
});
