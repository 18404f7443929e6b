import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { formatZodIssues, type FlatRubric, type StagedRubric } from "@rubric/core";
import { z } from "zod";
import { scoreOutputs, scoredOutputToJson, type ScoreOutputsOptions, type ScoredOutput } from "../engine/engine.js";
import { PermitPool } from "../engine/permits.js";

/**
 * Scores a batch of (prompt, completion) pairs; what the reward server serves. `signal` aborts
 * when the client that asked has gone away: the scorer should stop spending on its batch.
 */
export type RewardScorer = (
  batch: readonly { readonly id: string; readonly input: string; readonly output: string }[],
  signal?: AbortSignal,
) => Promise<readonly ScoredOutput[]>;

/**
 * A scorer for one rubric through the verification engine. `options.concurrency` (default 8)
 * bounds verifier calls across every batch the scorer is given at once, not per batch: forty
 * clients posting together get eight sandboxes or judge calls in flight, not 320.
 */
export function rubricScorer(rubric: FlatRubric | StagedRubric, options: ScoreOutputsOptions): RewardScorer {
  const permits = options.permits ?? new PermitPool(options.concurrency ?? 8);
  return (batch, signal) => scoreOutputs(rubric, batch, { ...options, permits, signal: signal ?? options.signal });
}

export const ScoreRequestSchema = z
  .strictObject({
    prompts: z.array(z.string()),
    completions: z.array(z.string()).min(1),
    ids: z.array(z.string().min(1)).optional(),
  })
  .superRefine((r, ctx) => {
    // Results are matched to requests by id: a repeated one would hand one completion's reward to another.
    const firstAt = new Map<string, number>();
    r.ids?.forEach((id, i) => {
      const first = firstAt.get(id);
      if (first === undefined) firstAt.set(id, i);
      else
        ctx.addIssue({
          code: "custom",
          path: ["ids", i],
          message: `duplicate id ${JSON.stringify(id)} (first at ids[${first}])`,
        });
    });
    if (r.prompts.length !== r.completions.length)
      ctx.addIssue({
        code: "custom",
        path: ["prompts"],
        message: `expected ${r.completions.length} prompts (one per completion), got ${r.prompts.length}`,
      });
    if (r.ids && r.ids.length !== r.completions.length)
      ctx.addIssue({
        code: "custom",
        path: ["ids"],
        message: `expected ${r.completions.length} ids, got ${r.ids.length}`,
      });
  });

export interface RewardServerOptions {
  /** Default 0: any free port. */
  readonly port?: number;
  /** Default 127.0.0.1; bind 0.0.0.0 only behind something that authenticates. */
  readonly host?: string;
  /** Largest request body accepted, in bytes (413 above). Default 8 MiB. */
  readonly maxBodyBytes?: number;
  /** Largest batch accepted (413 above). Default 4,096. */
  readonly maxBatch?: number;
  /** Shown by GET /health. */
  readonly name?: string;
  /**
   * When set, `POST /score` needs `Authorization: Bearer <token>` (401 otherwise); `/health`
   * stays open. Set it whenever anything but your own trainer can reach the port.
   */
  readonly token?: string;
}

export interface RewardServer {
  readonly url: string;
  close(): Promise<void>;
}

// Not a toolkit error: control flow inside one request, caught below and answered as that status.
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers["content-length"] ?? "0");
  if (declared > limit) throw new HttpError(413, `request body of ${declared} bytes exceeds the limit of ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? "");
  const wanted = Buffer.from(`Bearer ${token}`);
  // Constant time, so the token cannot be guessed a byte at a time from response times.
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function send(response: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Serves rubric rewards over HTTP so Python trainers (TRL reward functions, verl) can use
 * TypeScript rubrics. `POST /score` with `{prompts, completions, ids?}` returns
 * `{rewards, results}`: one reward per completion — the normalised score, or null when it could
 * not be computed (an error verdict under the scorer's policy): never a made-up 0.
 * `GET /health` answers `{ok: true}`. The server holds no state between requests, so several
 * can run behind a load balancer.
 *
 * @example
 * const server = await serveRewards(rubricScorer(rubric, { registry: rulesRegistry() }), { port: 8787 });
 * // POST http://127.0.0.1:8787/score {"prompts": ["..."], "completions": ["..."]}
 */
export async function serveRewards(scorer: RewardScorer, options: RewardServerOptions = {}): Promise<RewardServer> {
  const limit = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const maxBatch = options.maxBatch ?? 4096;
  const server = createServer((request, response) => {
    void (async () => {
      try {
        const path = new URL(request.url ?? "/", "http://localhost").pathname;
        if (path === "/health" && request.method === "GET")
          return send(response, 200, { ok: true, name: options.name ?? "rubric-rewards" });
        if (path !== "/score")
          throw new HttpError(404, `no route ${request.method} ${path}; use POST /score or GET /health`);
        if (request.method !== "POST") throw new HttpError(405, "use POST /score");
        if (options.token !== undefined && !bearerMatches(request.headers.authorization, options.token))
          throw new HttpError(401, "POST /score needs Authorization: Bearer <token>");
        // Only JSON: a form or text/plain POST is a "simple" request that any web page can send
        // across origins without a preflight, which would let a page the user visits queue jobs.
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
        if (type !== "application/json")
          throw new HttpError(
            415,
            `POST /score takes content-type application/json, got ${JSON.stringify(type || "none")}`,
          );
        const text = await readBody(request, limit);
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (error) {
          throw new HttpError(400, `invalid JSON: ${(error as Error).message}`);
        }
        const parsed = ScoreRequestSchema.safeParse(json);
        if (!parsed.success) throw new HttpError(400, formatZodIssues(parsed.error, { limit: 1 }));
        const { prompts, completions, ids } = parsed.data;
        if (completions.length > maxBatch)
          throw new HttpError(413, `batch of ${completions.length} exceeds the limit of ${maxBatch}`);
        const batch = completions.map((output, i) => ({ id: ids?.[i] ?? String(i), input: prompts[i]!, output }));
        // A client that disconnects stops its batch: its verifier calls are not spent for nobody.
        const gone = new AbortController();
        const onClose = () => {
          if (!response.writableFinished) gone.abort(new Error("the client closed the connection"));
        };
        response.once("close", onClose);
        const results = await scorer(batch, gone.signal);
        if (gone.signal.aborted) return;
        send(response, 200, {
          rewards: results.map((r) => r.score?.normalized ?? null),
          results: results.map(scoredOutputToJson),
        });
      } catch (error) {
        if (response.destroyed) return;
        if (error instanceof HttpError) send(response, error.status, { error: error.message });
        else send(response, 500, { error: `scoring failed: ${(error as Error).message}` });
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
