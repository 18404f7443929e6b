/**
 * @rubric/rlxar — ARCO's co-evolution of a policy and its rubric model μ. So far: μ created,
 * exported and served through the Python sidecar (the torch backend beside `RubricModel`'s
 * onnxruntime-node one).
 */
export {
  createMu,
  exportMu,
  sftIds,
  sftMu,
  sidecarMuEngine,
  trainMuTokenizer,
  type CreateMuOptions,
  type MuExport,
  type MuShape,
  type SftEpoch,
  type SftMuOptions,
} from "./mu/sidecar-mu.js";
export { arcoExactMatch, exactMatch, f1Score, normalizeAnswer } from "./hotpotqa/metrics.js";
