import type { InferenceSession, Tensor } from "onnxruntime-node";
import { ModelCorruptError } from "../errors.js";
import { PAD_ID } from "../tokenizer/byte-bpe.js";
import { MANIFEST_FILE, type ModelManifest } from "./manifest.js";
import type { Ort } from "./runtime.js";

export const GRAPHS = ["score", "prefill", "decode"] as const;
export type GraphName = (typeof GRAPHS)[number];
export type GraphSessions = Readonly<Record<GraphName, InferenceSession>>;

/**
 * Checks that a version's graphs are what its manifest says, before it serves a call. The hashes
 * only say the files are the ones the manifest lists; the manifest itself is not hashed, and the
 * engine reads scores and logits at the offsets it gives (`k`, `model.vocabularySize`). A
 * manifest edited to K = 5 over a K = 3 score graph gave exit 0 with every step's scores read
 * from the wrong rows, so the graphs are run and their outputs measured:
 *
 * - names: every graph's inputs and outputs, in order, are the manifest's;
 * - a 3-position probe through all three graphs (a failure is blamed on the graph): `scores` is
 *   [1, k] float32, the logits [1, vocabularySize] float32, the cache 2 × `layers` tensors of
 *   [1, heads, T, headWidth];
 * - one decode step at the last position `maxLengths.sequence` allows, after a zero cache (a
 *   failure is blamed on the manifest): a longer sequence than the backbone holds would otherwise
 *   fail only on the first long prompt. A decode step costs memory linear in the positions, where
 *   a full-length row through the score graph would cost their square.
 *
 * Any mismatch is a `ModelCorruptError` naming `manifest.json` and the two numbers. `pooling`
 * cannot be checked here (the pool mask is an input the engine builds); the torch backend checks
 * it against the checkpoint.
 */
export async function checkGraphContract(
  ort: Ort,
  directory: string,
  manifest: ModelManifest,
  sessions: GraphSessions,
): Promise<void> {
  for (const name of GRAPHS) checkNames(directory, manifest, name, sessions[name]);
  const probe = new Probe(ort, directory, manifest, sessions);
  await probe.shapes(Math.min(3, manifest.maxLengths.sequence));
  await probe.lastPosition();
}

function checkNames(directory: string, manifest: ModelManifest, name: GraphName, session: InferenceSession): void {
  const graph = manifest.graphs[name];
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(session.inputNames, graph.inputs) || !same(session.outputNames, graph.outputs))
    throw new ModelCorruptError(
      directory,
      graph.file,
      `its inputs ${JSON.stringify(session.inputNames)} and outputs ${JSON.stringify(session.outputNames)} are not the manifest's`,
    );
}

type Blame = (graph: GraphName, detail: string) => ModelCorruptError;

/** Rows of one step through the graphs, with tensors made on the caller's onnxruntime. */
class Probe {
  constructor(
    private readonly ort: Ort,
    private readonly directory: string,
    private readonly manifest: ModelManifest,
    private readonly sessions: GraphSessions,
  ) {}

  /** One row of `width` positions: the score graph whole, prefill on all but the last, decode on the last. */
  async shapes(width: number): Promise<void> {
    const { graphs } = this.manifest;
    const blame: Blame = (name, detail) =>
      new ModelCorruptError(this.directory, graphs[name].file, `cannot run a ${width}-position probe: ${detail}`);
    const scores = await this.#run(
      "score",
      { input_ids: this.#ids(width), attention_mask: this.#ones(width), pool_mask: this.#ones(width) },
      blame,
    );
    this.#expect(scores[graphs.score.outputs[0]!]!, [1, this.manifest.k], "k", `${graphs.score.file}'s scores`);

    const [logits, ...presents] = graphs.prefill.outputs as [string, ...string[]];
    const prefill = await this.#run(
      "prefill",
      { input_ids: this.#ids(width - 1), attention_mask: this.#ones(width - 1) },
      blame,
    );
    this.#checkStep(prefill, logits, presents, graphs.prefill.file, width - 1);

    const feeds: Record<string, Tensor> = { input_ids: this.#ids(1), attention_mask: this.#ones(width) };
    graphs.decode.inputs.slice(2).forEach((past, i) => {
      const present = prefill[presents[i]!];
      if (present !== undefined) feeds[past] = present;
    });
    const decode = await this.#run("decode", feeds, blame);
    this.#checkStep(decode, graphs.decode.outputs[0]!, graphs.decode.outputs.slice(1), graphs.decode.file, width);
  }

  /** One decode step at position `maxLengths.sequence` − 1, after a cache of zeros (one buffer shared by every layer). */
  async lastPosition(): Promise<void> {
    const { graphs, model, maxLengths } = this.manifest;
    const past = maxLengths.sequence - 1;
    const zeros = new Float32Array(model.heads * past * model.headWidth);
    const feeds: Record<string, Tensor> = {
      input_ids: this.#ids(1),
      attention_mask: this.#ones(maxLengths.sequence),
    };
    for (const name of graphs.decode.inputs.slice(2))
      feeds[name] = new this.ort.Tensor("float32", zeros, [1, model.heads, past, model.headWidth]);
    const decode = await this.#run("decode", feeds, (name, detail) =>
      this.#mismatch(
        `maxLengths.sequence is ${maxLengths.sequence} but ${graphs[name].file} cannot run its last position: ${detail}`,
      ),
    );
    this.#checkStep(
      decode,
      graphs.decode.outputs[0]!,
      graphs.decode.outputs.slice(1),
      graphs.decode.file,
      maxLengths.sequence,
    );
  }

  /** Logits [1, V] and the cache, 2 × layers tensors of [1, heads, positions, headWidth]. */
  #checkStep(
    out: InferenceSession.OnnxValueMapType,
    logits: string,
    cache: readonly string[],
    file: string,
    positions: number,
  ) {
    const { model } = this.manifest;
    this.#expect(out[logits]!, [1, model.vocabularySize], "model.vocabularySize", `${file}'s logits`);
    if (cache.length !== 2 * model.layers)
      throw this.#mismatch(
        `model.layers is ${model.layers} but ${file} returns ${cache.length} cache tensors (2 per layer)`,
      );
    for (const name of cache) {
      const dims = out[name]!.dims;
      if (dims.length !== 4 || dims[1] !== model.heads || dims[2] !== positions || dims[3] !== model.headWidth)
        throw this.#mismatch(
          `model.heads is ${model.heads} and model.headWidth ${model.headWidth} but ${file}'s ${name} is ${JSON.stringify(dims)} after ${positions} positions`,
        );
    }
  }

  /** A float32 output of exactly `dims`; the field of the manifest that says its width is named when it is not. */
  #expect(tensor: Tensor, dims: readonly number[], field: string, what: string) {
    const width = dims[dims.length - 1]!;
    if (tensor.type !== "float32" || tensor.dims.length !== dims.length || tensor.dims.some((d, i) => d !== dims[i]))
      throw this.#mismatch(
        `${field} is ${width} but ${what} are ${tensor.type} ${JSON.stringify(tensor.dims)} for one row (expected float32 ${JSON.stringify(dims)})`,
      );
  }

  #mismatch(detail: string): ModelCorruptError {
    return new ModelCorruptError(this.directory, MANIFEST_FILE, detail);
  }

  async #run(name: GraphName, feeds: Record<string, Tensor>, blame: Blame): Promise<InferenceSession.OnnxValueMapType> {
    try {
      return await this.sessions[name].run(feeds);
    } catch (error) {
      throw blame(name, (error as Error).message);
    }
  }

  #ids(width: number): Tensor {
    return new this.ort.Tensor("int64", new BigInt64Array(width).fill(BigInt(PAD_ID)), [1, width]);
  }

  #ones(width: number): Tensor {
    return new this.ort.Tensor("int64", new BigInt64Array(width).fill(1n), [1, width]);
  }
}
