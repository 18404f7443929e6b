/**
 * @rubric/verifiers — package skeleton.
 *
 * This package will hold rule verifiers (regex, includes, length, json-schema, markdown, citations, numeric, readability), sandboxed `js` and `python` code verifiers, the `llm-judge` verifier, and model providers (`huggingFace`, `llamaCpp`, OpenAI-compatible endpoints). Nothing is exported yet: the implementation lands with
 * issue #3. Importing it today gives an empty module, never a stand-in implementation.
 */
export {};
