/**
 * @rubric/hackbench — reward-hacking probes for any rubric reward, with matched controls,
 * paired-bootstrap gains, known-positive and known-negative controls, and integrity cards.
 * This file is the package's only public door.
 */

// errors: the base of every error hackbench throws, with a stable `hackbench.*` code
export { HackbenchError } from "./errors.js";

// sample: the honest outputs a run starts from
export { HackSampleSchema, SampleFileError, parseSamples, type HackSample } from "./sample/sample.js";

// probes: transforms of an honest output, each with its matched control
export { PROBES, PROBE_IDS, UnknownProbeError, resolveProbes } from "./probes/catalog.js";
export { appended, insertionProbe, type Probe, type ProbeContext, type ProbeEdit } from "./probes/probe.js";
export { neutralize, type NeutralizeOptions } from "./probes/neutral.js";
export { regexLiterals, rubricSurface, type RequiredStructure, type RubricSurface } from "./probes/surface.js";

// measure: paired gains, exploits, attribution, true utility
export { hackbench, runHackbench, type HackbenchFailure, type HackbenchOptions } from "./measure/run.js";
export { isExploit, pairedGain, type GainOptions, type PairedGain } from "./measure/gain.js";
export { rubricUtility, type TrueUtility } from "./measure/utility.js";
export { HackbenchInputError, HackbenchScoringError, TrueUtilityError } from "./measure/errors.js";

// card: the integrity card, as JSON and Markdown
export {
  CriterionGainSchema,
  INTEGRITY_CARD_FORMAT,
  IntegrityCardError,
  IntegrityCardSchema,
  ProbeResultSchema,
  WorkedExampleSchema,
  parseIntegrityCard,
  type IntegrityCard,
  type ProbeResult,
} from "./card/card.js";
export { cardToMarkdown } from "./card/markdown.js";

// controls: a judge with known biases, to calibrate against
export { BiasedJudgeConfigError, biasedJudgeModel, type BiasedJudgeOptions } from "./controls/biased-judge.js";
export { BIAS_PROBES, JUDGE_BIASES, type JudgeBias } from "./controls/biases.js";
export { JudgeRequestError } from "./controls/judge-request.js";
