/**
 * @rubric/autointeract — stakeholders, managers and workers, the dialogue engine, GDPval tasks
 * and the rubric gym. This file is the package's only public door.
 *
 * So far: the GDPval loader, the roles and the episode engine. LLM and terminal roles, the gym,
 * SFT corpus generation and `rubric elicit` land next (issue #4).
 */
export { GdpvalDataError, GdpvalTaskSchema, parseGdpvalTasks, type GdpvalTask } from "./gdpval/tasks.js";
export { loadGdpval, type GdpvalDataset, type GdpvalExample } from "./gdpval/dataset.js";

// dialogue: roles, the episode engine, transcripts
export type { Answer, DialogueState, Difficulty, Manager, ManagerMove, Question, Spend, Stakeholder, TaskBrief, Worker, WorkerOutput } from "./dialogue/roles.js";
export { runEpisode, type EpisodeCosts, type EpisodeOptions, type EpisodeResult, type PriceTable } from "./dialogue/episode.js";
export { QuestionBudgetExceededError, RoleOutputError, RoleTimeoutError, TurnLimitError } from "./dialogue/errors.js";
export { TranscriptError, TurnSchema, appendTurnsTo, parseTranscript, transcriptToJsonl, type Turn } from "./dialogue/transcript.js";
export { replayRoles } from "./dialogue/replay.js";
