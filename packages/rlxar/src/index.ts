/**
 * @rubric/rlxar — package skeleton.
 *
 * This package will hold ARCO co-evolution RL: multi-hop QA environment, reward-to-go with bucketed baselines, decomposition-constrained μ updates. Nothing is exported yet: the implementation lands with
 * a later issue. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
