/**
 * @rubric/arco-heads — package skeleton.
 *
 * This package will hold ARCO's rubric model μ — shared backbone, generation head and score head — exported to ONNX and run by onnxruntime-node. Nothing is exported yet: the implementation lands with
 * a later issue. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
