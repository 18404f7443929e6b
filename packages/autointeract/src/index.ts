/**
 * @rubric/autointeract — stakeholders, managers and workers, the dialogue engine, GDPval tasks
 * and the rubric gym. This file is the package's only public door.
 *
 * So far: the GDPval loader, the roles, the episode engine, LLM and terminal roles, and the rubric
 * gym's world (criteria bank, stakeholders, worker, best-of-N). SFT corpus generation and
 * `rubric elicit` land next (issue #4).
 */
export { GdpvalDataError, GdpvalTaskSchema, parseGdpvalTasks, type GdpvalTask } from "./gdpval/tasks.js";
export { loadGdpval, type GdpvalDataset, type GdpvalExample } from "./gdpval/dataset.js";
export { findGdpvalTask, GdpvalTaskAmbiguousError, GdpvalTaskNotFoundError } from "./gdpval/find-task.js";

// dialogue: roles, the episode engine, transcripts
export type {
  Answer,
  DialogueState,
  Difficulty,
  Manager,
  ManagerMove,
  Question,
  Spend,
  Stakeholder,
  TaskBrief,
  Worker,
  WorkerOutput,
} from "./dialogue/roles.js";
export {
  runEpisode,
  type EpisodeCosts,
  type EpisodeOptions,
  type EpisodeResult,
  type PriceTable,
} from "./dialogue/episode.js";
export { QuestionBudgetExceededError, RoleOutputError, RoleTimeoutError, TurnLimitError } from "./dialogue/errors.js";
export {
  TranscriptError,
  TurnSchema,
  appendTurnsTo,
  parseTranscript,
  transcriptToJsonl,
  type Turn,
} from "./dialogue/transcript.js";
export { replayRoles } from "./dialogue/replay.js";

// roles played by language models, and by a person
export { llmStakeholder, type LlmStakeholderOptions } from "./stakeholder/llm-stakeholder.js";
export { preferenceOutline } from "./stakeholder/outline.js";
export { terminalStakeholder } from "./stakeholder/terminal-stakeholder.js";
export { llmManager, type LlmManagerOptions } from "./manager/llm-manager.js";
export { llmWorker } from "./worker/llm-worker.js";

// gym: the simulated world in which the ARCANE loop runs on a CPU
export { CRITERIA_BANK, briefCriterion, briefTerms, type BankCriterion } from "./gym/bank.js";
export { SECTION_NAMES, renderDocument, type DocumentPlan } from "./gym/document.js";
export {
  gymTask,
  simulatedStakeholder,
  type GymTask,
  type Persona,
  type SimulatedStakeholder,
} from "./gym/stakeholder.js";
export { simulatedWorker, type SimulatedWorkerOptions } from "./gym/worker.js";
export { bestOfN, type BestOfNResult } from "./gym/best-of-n.js";
export {
  DEFAULT_POLICY,
  ManagerPolicySchema,
  policyManager,
  readManagerPolicy,
  type ManagerPolicy,
} from "./manager/policy-manager.js";
export { MANAGER_SYSTEM_PROMPT } from "./manager/llm-manager.js";

// sft: supervised data for the manager
export { gymSftCorpus, sftExample, sftToJsonl, type SftExample } from "./sft/corpus.js";
