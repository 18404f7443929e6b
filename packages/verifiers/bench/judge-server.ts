/**
 * The judge benchmark's server, in its own process as a real judge server would be: the
 * OpenAI-wire test server with a fixed latency. Prints its URL; answers "count" on stdin with
 * the number of requests received.
 */
import { createInterface } from "node:readline";
import { chatReply, startOpenAIChatServer } from "@rubric/providers/testing";

const latencyMs = Number(process.argv[2] ?? "50");
const server = await startOpenAIChatServer({
  latencyMs,
  handler: () =>
    chatReply.json({
      clear: { rationale: "ok", score: 3 },
      accurate: { rationale: "ok", score: 4 },
      complete: { rationale: "ok", score: 2 },
    }),
});
console.log(server.url);
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "count") console.log(server.requestCount);
}
await server.close();
