/**
 * @rubric/sidecar — the Python training sidecar (python/rubric-trainer, torch) behind JSON lines
 * over stdio. This file is the package's only public door.
 *
 * The wire (schemas by subject: the envelope, the policy's `policy.*`/`checkpoint.*`/`gspo.loss`/
 * `export.onnx`, μ's `mu.*`), the process, the client that restarts a crashed sidecar and restores
 * each resource it held, and one typed handle per resource (`RemotePolicy`, `RemoteMu`). ARCANE's
 * trainer (`@rubric/gspo`) and ARCO's (`@rubric/rlxar`) both train through it.
 */

// client: start, call, cancel, restart and restore
export {
  SidecarClient,
  defaultPython,
  defaultTrainerPath,
  runSidecarEffect,
  sidecarCommand,
  type CallOptions,
  type SidecarOptions,
} from "./client/client.js";

// errors: one tagged error per failure, each with its `sidecar.*` code
export {
  SidecarClosedError,
  SidecarCrashedError,
  SidecarError,
  SidecarPolicyLostError,
  SidecarProtocolError,
  SidecarStartError,
  SidecarStateLostError,
  SidecarTimeoutError,
  type SidecarFailure,
} from "./errors.js";

// handles: one typed wrapper per resource the sidecar holds
export {
  RemotePolicy,
  type RemoteSequence,
  type RemoteStepMetrics,
  type RemoteStepOptions,
} from "./handles/remote-policy.js";
export {
  RemoteMu,
  type RemoteMuInitOptions,
  type RemoteMuLora,
  type RemoteMuPretrainMetrics,
  type RemoteMuSftMetrics,
  type RemoteMuStep,
  type RemoteMuStepMetrics,
} from "./handles/remote-mu.js";

// wire: every method's schemas, by subject
export {
  SIDECAR_ERROR_CODES,
  type SidecarErrorCode,
  type SidecarNotification,
  type TrainingMetrics,
} from "./wire/envelope.js";
export { SIDECAR_METHODS, type ParamsOf, type ResultOf, type SidecarMethod } from "./wire/methods.js";
export {
  GgufVocabularySchema,
  MuLoraSchema,
  MuModelSpecSchema,
  MuObjectiveSchema,
  type GgufVocabulary,
  type MuObjective,
  type MuSummary,
} from "./wire/mu.js";
export {
  ModelSpecSchema,
  PolicyInitParamsSchema,
  type ModelSpec,
  type PolicyInitParams,
  type PolicySummary,
} from "./wire/policy.js";
export { ModelTokenizerSchema, type ModelTokenizer } from "./wire/values.js";
export type { ModelText } from "./handles/model-text.js";
