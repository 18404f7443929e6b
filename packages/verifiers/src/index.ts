/**
 * @rubric/verifiers — rule, sandboxed-code and LLM-judge verifiers, and model providers.
 */
export {
  errorDraft,
  okDraft,
  type CriterionToVerify,
  type OutputFile,
  type VerdictDraft,
  type VerificationInput,
  type Verifier,
  type VerifyOptions,
} from "./verifier/verifier.js";
