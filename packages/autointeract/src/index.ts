/**
 * @rubric/autointeract — package skeleton.
 *
 * This package will hold stakeholder, manager and worker roles, the dialogue engine with cost accounting, the GDPval task loader and the simulated rubric gym. Nothing is exported yet: the implementation lands with
 * issue #4. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
