import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, llmJudge, openAICompatible, scoreOutputs } from "@rubric/verifiers";
const child = spawn(process.execPath, ["--import", "tsx", "bench/judge-server.ts", "50"], { stdio: ["pipe", "pipe", "inherit"] });
const it = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const url = String((await it.next()).value);
const judged = parseFlatRubric({ id: "b", criteria: ["clear", "accurate", "complete"].map((c) => ({ id: c, text: c, weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } } })) });
const model = openAICompatible({ baseUrl: url, model: "bench-judge", apiKeyEnv: false });
const reg = createVerifierRegistry({ python: false, judge: llmJudge(model) });
const outs = (p: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${p}${i}`, output: `${p} answer ${i}` }));
await scoreOutputs(judged, outs("w", 32), { registry: reg, concurrency: 32 });
for (let r = 0; r < 3; r++) { const cpu = process.cpuUsage(); const t = performance.now();
await scoreOutputs(judged, outs("m" + r, 500), { registry: reg, concurrency: 32 });
const c = process.cpuUsage(cpu); console.log(`engine: wall ${(performance.now() - t).toFixed(0)} ms, cpu ${((c.user + c.system) / 1000).toFixed(0)} ms`); }
child.kill();
