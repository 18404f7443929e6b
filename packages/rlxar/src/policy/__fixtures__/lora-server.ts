import { existsSync, readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { BOS_ID, byteBpeTokenizer, EOS_ID, promptText } from "@rubric/arco-heads";
import type { SidecarClient } from "@rubric/sidecar";
import { z } from "zod";
import type { PolicyTokenizer } from "../sidecar-policy.js";
import { GREEDY_TEMPERATURE } from "../sidecar-policy.js";

/**
 * A stand-in for vLLM with runtime LoRA updating, on 127.0.0.1: `/v1/load_lora_adapter` and
 * `/v1/unload_lora_adapter` as vLLM speaks them, and `/v1/chat/completions` whose `model` must
 * be a loaded adapter and whose texts are really sampled, by a sidecar policy holding the weights
 * of the checkpoint directory that adapter was loaded from. Faults are queued per route.
 */
export interface LoraServer {
  readonly url: string;
  /** Adapters loaded now, by name, with their directories. */
  readonly adapters: ReadonlyMap<string, string>;
  /** Every request: route and body. */
  readonly requests: readonly { readonly path: string; readonly body: unknown }[];
  /** The next load answers with this status (and does not load). */
  failNextLoad(status: number): void;
  /** The next unload answers with this status (and unloads nothing). */
  failNextUnload(status: number): void;
  /** The next completion answers only after this delay. */
  delayNextCompletion(ms: number): void;
  close(): Promise<void>;
}

const LoadSchema = z.object({ lora_name: z.string().min(1), lora_path: z.string().min(1) });
const UnloadSchema = z.object({ lora_name: z.string().min(1) });
const ChatSchema = z.object({
  model: z.string(),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })).min(1),
  seed: z.int().nonnegative(),
  temperature: z.number().nonnegative(),
  max_tokens: z.int().positive(),
  logprobs: z.boolean().optional(),
});

/**
 * `tokenizer`: the policy's. Without one, each adapter directory's own `tokenizer.json` (what the
 * sidecar policy's `save` writes beside `policy.pt`) is read when its weights are loaded.
 */
export async function startLoraServer(sidecar: SidecarClient, given?: PolicyTokenizer): Promise<LoraServer> {
  const adapters = new Map<string, string>();
  const requests: { path: string; body: unknown }[] = [];
  const loadFaults: number[] = [];
  const unloadFaults: number[] = [];
  const delays: number[] = [];
  let inSidecar: string | undefined; // the directory whose weights the sidecar holds now
  let tokenizer: PolicyTokenizer | undefined = given;
  let queue = Promise.resolve(); // one sidecar: one request at a time, in arrival order

  const holdWeightsOf = async (directory: string) => {
    if (inSidecar === directory) return;
    await sidecar.request("checkpoint.load", { dir: directory });
    inSidecar = directory;
    if (given === undefined)
      tokenizer = byteBpeTokenizer(JSON.parse(readFileSync(join(directory, "tokenizer.json"), "utf8")));
  };

  async function route(path: string, body: unknown): Promise<{ status: number; json?: unknown; text?: string }> {
    if (path === "/v1/load_lora_adapter") {
      const fault = loadFaults.shift();
      if (fault !== undefined) return { status: fault, json: { error: { message: "scripted load failure" } } };
      const load = LoadSchema.parse(body);
      if (!existsSync(join(load.lora_path, "policy.pt")))
        return { status: 400, json: { error: { message: `no adapter found at ${load.lora_path}` } } };
      await holdWeightsOf(load.lora_path);
      adapters.set(load.lora_name, load.lora_path);
      return { status: 200, text: `Success: LoRA adapter '${load.lora_name}' added successfully.` };
    }
    if (path === "/v1/unload_lora_adapter") {
      const fault = unloadFaults.shift();
      if (fault !== undefined) return { status: fault, json: { error: { message: "scripted unload failure" } } };
      const { lora_name } = UnloadSchema.parse(body);
      if (!adapters.delete(lora_name))
        return { status: 404, json: { error: { message: `The lora adapter '${lora_name}' cannot be found.` } } };
      return { status: 200, text: `Success: LoRA adapter '${lora_name}' removed successfully.` };
    }
    if (path === "/v1/chat/completions") {
      const chat = ChatSchema.parse(body);
      const directory = adapters.get(chat.model);
      if (directory === undefined)
        return { status: 404, json: { error: { message: `The model \`${chat.model}\` does not exist.` } } };
      await holdWeightsOf(directory);
      const words = tokenizer;
      if (words === undefined) throw new Error("no tokenizer: none given, and no adapter loaded");
      const { sequences } = await sidecar.request("policy.sample", {
        prompt: [BOS_ID, ...words.encode(promptText(chat.messages))],
        n: 1,
        seed: chat.seed,
        temperature: chat.temperature === 0 ? GREEDY_TEMPERATURE : chat.temperature,
        max_new_tokens: chat.max_tokens,
        eos_token_id: EOS_ID,
      });
      const [sequence] = sequences;
      const stopped = sequence?.tokens.at(-1) === EOS_ID;
      const ids = sequence?.tokens.slice(0, stopped ? -1 : undefined) ?? [];
      const logprobs = sequence?.logprobs ?? [];
      return {
        status: 200,
        json: {
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          model: chat.model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: words.decode(ids) },
              logprobs: chat.logprobs
                ? {
                    content: (sequence?.tokens ?? []).map((id, t) => ({
                      token: words.decode([id]),
                      logprob: logprobs[t],
                      top_logprobs: [],
                    })),
                  }
                : null,
              finish_reason: stopped ? "stop" : "length",
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: sequence?.tokens.length ?? 0, total_tokens: 1 },
        },
      };
    }
    return { status: 404, json: { error: { message: `no route ${path}` } } };
  }

  const send = (res: ServerResponse, answer: { status: number; json?: unknown; text?: string }) => {
    if (res.destroyed) return;
    if (answer.text !== undefined) {
      res.writeHead(answer.status, { "content-type": "text/plain" });
      res.end(answer.text);
    } else {
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(answer.json));
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0] ?? "";
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        send(res, { status: 400, json: { error: { message: "body is not JSON" } } });
        return;
      }
      requests.push({ path, body });
      // A slow reply waits outside the queue, so the client's retry is not held up behind it.
      const delay = path === "/v1/chat/completions" ? delays.shift() : undefined;
      const answered = new Promise((r) => setTimeout(r, delay ?? 0)).then(() => {
        const next = queue.then(() => route(path, body));
        queue = next.then(
          () => undefined,
          () => undefined,
        );
        return next;
      });
      answered.then(
        (answer) => send(res, answer),
        (error: Error) => send(res, { status: 400, json: { error: { message: error.message } } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adapters,
    requests,
    failNextLoad: (status) => void loadFaults.push(status),
    failNextUnload: (status) => void unloadFaults.push(status),
    delayNextCompletion: (ms) => void delays.push(ms),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
