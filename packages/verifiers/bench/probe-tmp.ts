import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { parseFlatRubric } from "@rubric/core";
import { createVerifierRegistry, fileCache, memoryCache, llmJudge, openAICompatible, scoreOutputs } from "@rubric/verifiers";
const child = spawn(process.execPath, ["--import", "tsx", "bench/judge-server.ts", "50"], { stdio: ["pipe", "pipe", "inherit"] });
const it = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const url = String((await it.next()).value);
const judged = parseFlatRubric({ id: "b", criteria: ["clear", "accurate", "complete"].map((c) => ({ id: c, text: `The answer is ${c}`, weight: 1, verifier: { kind: "llm-judge", scale: { min: 0, max: 4 } } })) });
const reg = createVerifierRegistry({ python: false, js: false, judge: llmJudge(openAICompatible({ baseUrl: url, model: "bench-judge", apiKeyEnv: false })) });
const dir = mkdtempSync(join(tmpdir(), "pc-"));
async function measure(label: string, fn: (tag: string) => Promise<unknown>) {
  for (let r = 0; r < 4; r++) { const cpu = process.cpuUsage(); const t = performance.now(); await fn(`${label}${r}`); const c = process.cpuUsage(cpu);
    if (r >= 2) console.log(`${label}: wall ${(performance.now() - t).toFixed(0)} ms, cpu/output ${((c.user + c.system) / 1000 / 500).toFixed(2)} ms`); }
}
const outs = (tag: string) => Array.from({ length: 500 }, (_, i) => ({ id: `${tag}-${i}`, input: "task", output: `${tag} answer ${i}` }));
await measure("no cache", (tag) => scoreOutputs(judged, outs(tag), { registry: reg, concurrency: 32 }));
await measure("memory cache", (tag) => scoreOutputs(judged, outs(tag), { registry: reg, concurrency: 32, cache: memoryCache() }));
await measure("file cache", (tag) => scoreOutputs(judged, outs(tag), { registry: reg, concurrency: 32, cache: fileCache(dir) }));
child.kill();
