import { OnnxRuntimeMissingError } from "../errors.js";

/** onnxruntime-node's module, as this package uses it. Kept out of the public types: it is an optional peer. */
export type Ort = typeof import("onnxruntime-node");

let runtime: Promise<Ort> | undefined;

/** onnxruntime-node, imported on first use so that the rest of the package works without it. */
export function onnxRuntime(): Promise<Ort> {
  runtime ??= import("onnxruntime-node").catch((error: unknown) => {
    runtime = undefined;
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") throw new OnnxRuntimeMissingError(error);
    throw error;
  });
  return runtime;
}
