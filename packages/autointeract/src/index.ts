/**
 * @rubric/autointeract — stakeholders, managers and workers, the dialogue engine, GDPval tasks
 * and the rubric gym. This file is the package's only public door.
 *
 * Layout: `dialogue/` (what the roles share, `runEpisode`, transcripts), `roles/stakeholder|manager|worker/`
 * (each role's interface beside the models, people, policies and simulations that play it), `gym/` (the
 * criteria bank, documents, gym tasks, best-of-N), `gdpval/` and `sft/`.
 */

// errors: the base of every error autointeract throws, with a stable code
export { AutointeractError } from "./errors.js";

// gdpval: GDPval's tasks, the dataset and finding a task by id prefix
export { GdpvalDataError, GdpvalTaskSchema, parseGdpvalTasks, type GdpvalTask } from "./gdpval/tasks.js";
export { loadGdpval, type GdpvalDataset, type GdpvalExample } from "./gdpval/dataset.js";
export { findGdpvalTask, GdpvalTaskAmbiguousError, GdpvalTaskNotFoundError } from "./gdpval/find-task.js";

// dialogue: what the roles share, the episode engine, transcripts
export type { DialogueState, Difficulty, Question, Spend, TaskBrief } from "./dialogue/dialogue.js";
export {
  runEpisode,
  type EpisodeCosts,
  type EpisodeOptions,
  type EpisodeResult,
  type PriceTable,
} from "./dialogue/episode.js";
export {
  CorpusEpisodeError,
  DialogueInputError,
  ManagerPolicyFileError,
  QuestionBudgetExceededError,
  RoleOutputError,
  RoleTimeoutError,
  TurnLimitError,
} from "./dialogue/errors.js";
export {
  TranscriptError,
  TurnSchema,
  appendTurnsTo,
  parseTranscript,
  transcriptToJsonl,
  type Turn,
} from "./dialogue/transcript.js";
export { replayRoles } from "./dialogue/replay.js";

// roles: the stakeholder, the manager and the worker, each played by a model, a person, a policy or the gym
export type { Answer, Stakeholder } from "./roles/stakeholder/stakeholder.js";
export { llmStakeholder, type LlmStakeholderOptions } from "./roles/stakeholder/llm-stakeholder.js";
export { preferenceOutline } from "./roles/stakeholder/outline.js";
export { terminalStakeholder } from "./roles/stakeholder/terminal-stakeholder.js";
export {
  simulatedStakeholder,
  type Persona,
  type SimulatedStakeholder,
} from "./roles/stakeholder/simulated-stakeholder.js";
export type { Manager, ManagerMove } from "./roles/manager/manager.js";
export { MANAGER_SYSTEM_PROMPT, llmManager, type LlmManagerOptions } from "./roles/manager/llm-manager.js";
export {
  DEFAULT_POLICY,
  ManagerPolicySchema,
  policyManager,
  readManagerPolicy,
  type ManagerPolicy,
} from "./roles/manager/policy-manager.js";
export type { Worker, WorkerOutput } from "./roles/worker/worker.js";
export { llmWorker } from "./roles/worker/llm-worker.js";
export { simulatedWorker, type SimulatedWorkerOptions } from "./roles/worker/simulated-worker.js";

// gym: the simulated world in which the ARCANE loop runs on a CPU
export { CRITERIA_BANK, briefCriterion, briefTerms, type BankCriterion } from "./gym/bank.js";
export { writtenCriterionVerifier, type WrittenCriterionVerifier } from "./gym/written-criterion.js";
export { SECTION_NAMES, renderDocument, type DocumentPlan } from "./gym/document.js";
export { gymTask, type GymTask } from "./gym/task.js";
export { bestOfN, type BestOfNResult } from "./gym/best-of-n.js";

// sft: supervised data for the manager
export { gymSftCorpus, sftExample, sftToJsonl, type SftExample } from "./sft/corpus.js";
