import { rulesRegistry } from "../rules/registry.js";
import { jsVerifier, type JsVerifierOptions } from "../sandbox/js/js-verifier.js";
import type { PythonSandboxOptions } from "../sandbox/python/run.js";
import { pythonVerifier } from "../sandbox/python/verifier.js";
import type { AnyVerifier, VerifierRegistry } from "../verifier/registry.js";

export interface VerifierRegistryOptions {
  /** The `llm-judge` verifier, e.g. `llmJudge(openAICompatible({...}))`; without one, judge criteria are refused up front. */
  readonly judge?: AnyVerifier;
  /** The `python` code verifier's sandbox settings; `false` leaves the kind out. */
  readonly python?: PythonSandboxOptions | false;
  /** The `js` code verifier's limits; `false` leaves the kind out. */
  readonly js?: JsVerifierOptions | false;
  /** More kinds from other packages. */
  readonly extra?: readonly AnyVerifier[];
}

/**
 * The standard set of verifier kinds: every rule verifier, the sandboxed `python` and `js` code
 * verifiers, and a judge when given one.
 *
 * @example
 * const registry = createVerifierRegistry({ judge: llmJudge(providerFromSpec("llama-cpp:model.gguf")) });
 */
export function createVerifierRegistry(options: VerifierRegistryOptions = {}): VerifierRegistry {
  const registry = rulesRegistry();
  if (options.python !== false) registry.register(pythonVerifier(options.python ?? {}));
  if (options.js !== false) registry.register(jsVerifier(options.js ?? {}));
  if (options.judge) registry.register(options.judge);
  for (const verifier of options.extra ?? []) registry.register(verifier);
  return registry;
}
