/**
 * What every trainable policy shares, whatever trains it (GSPO's `TrainerBackend`, ARCO's
 * `TrainablePolicy`) and wherever its parameters live (in process, or in the Python sidecar): a KL
 * reference to freeze, an optimiser to start afresh between stages, and a checkpoint to save into a run directory's `checkpoints/<stage>-<n>/`
 * and load back on resume. The trainers' run directories (`@rubric/core/runs`) hold exactly what
 * `save` writes.
 */
export interface Trainable {
  /** Freezes a copy of the current parameters as the KL reference (usually the SFT policy). */
  setReference(): Promise<void>;
  /**
   * Starts the optimiser afresh (moments and step count). Both trainers call it when RL begins
   * from a supervised policy: the SFT stage's Adam moments, carried over, moved ARCO's π by
   * themselves whatever the critic said.
   */
  resetOptimizer(): Promise<void>;
  /** Writes parameters, optimiser state and reference into `directory` (created if missing). */
  save(directory: string): Promise<void>;
  /** Restores what `save` wrote; a checkpoint that does not fit is a named error, never a partial load. */
  load(directory: string): Promise<void>;
}
