import { registerVerifierKind, type VerifierSpec } from "@rubric/core";
import { VerificationError } from "../errors.js";
import { citationsVerifier } from "../rules/citations.js";
import { excludesVerifier } from "../rules/excludes.js";
import { includesVerifier } from "../rules/includes.js";
import { jsonSchemaVerifier } from "../rules/json-schema.js";
import { lengthVerifier } from "../rules/length.js";
import { markdownVerifier } from "../rules/markdown.js";
import { numericVerifier } from "../rules/numeric.js";
import { readabilityVerifier } from "../rules/readability.js";
import { regexVerifier } from "../rules/regex.js";
import { jsVerifier, type JsVerifierOptions } from "../sandbox/js/js-verifier.js";
import type { RuleLimitMaxima } from "../sandbox/limits.js";
import { pythonVerifier, type PythonVerifierOptions } from "../sandbox/python/verifier.js";
import type { Verifier } from "../verifier/verifier.js";

/*
 * The one place where a verifier kind meets its code: rubrics name a kind in `verifier.kind`, a
 * registry supplies the verifier. The built-in kinds (every rule, the two sandboxes, a judge when
 * one is given) are registered here; other packages register theirs the same way.
 */

/**
 * A verifier of any spec type. The registry is heterogeneous by nature; type safety comes back
 * at run time, where each spec is parsed by its verifier's own `specSchema` before use.
 */
export type AnyVerifier = Verifier<any>;

/** Thrown when two verifiers claim the same kind. */
export class DuplicateVerifierError extends VerificationError {
  override readonly name = "DuplicateVerifierError";
  readonly code = "verification.duplicate-verifier";
}

/**
 * Verifier kinds by name. Rubrics name a kind in `verifier.kind`; the registry supplies the code.
 * Downstream packages add kinds with `register`.
 *
 * @example
 * const registry = new VerifierRegistry([...ruleVerifiers, jsonSchemaVerifier]);
 * registry.register(myVerifier);
 */
export class VerifierRegistry {
  readonly #byKind = new Map<string, Verifier<VerifierSpec>>();

  constructor(verifiers: Iterable<AnyVerifier> = []) {
    for (const v of verifiers) this.register(v);
  }

  /**
   * Adds a kind; `replace: true` swaps an existing one (e.g. a judge on another model). The kind
   * is also registered with core (`registerVerifierKind`), so rubrics naming it parse from now on.
   */
  register(verifier: AnyVerifier, options: { replace?: boolean } = {}): this {
    if (this.#byKind.has(verifier.kind) && !options.replace)
      throw new DuplicateVerifierError(
        `a verifier of kind ${JSON.stringify(verifier.kind)} is already registered; pass { replace: true } to swap it`,
      );
    registerVerifierKind(verifier.kind);
    this.#byKind.set(verifier.kind, verifier as Verifier<VerifierSpec>);
    return this;
  }

  get(kind: string): Verifier<VerifierSpec> | undefined {
    return this.#byKind.get(kind);
  }

  kinds(): string[] {
    return [...this.#byKind.keys()].sort();
  }
}

/**
 * Every rule verifier but `json-schema` (which needs a JSON Schema validator and was added
 * later; `rulesRegistry` holds both).
 */
export const ruleVerifiers = [
  regexVerifier,
  includesVerifier,
  excludesVerifier,
  lengthVerifier,
  markdownVerifier,
  citationsVerifier,
  numericVerifier,
  readabilityVerifier,
] as const;

/**
 * A registry holding every deterministic rule verifier (no sandboxes, no models).
 *
 * @example
 * const results = await scoreOutputs(rubric, outputs, { registry: rulesRegistry() });
 */
export function rulesRegistry(): VerifierRegistry {
  return new VerifierRegistry([...ruleVerifiers, jsonSchemaVerifier]);
}

export interface VerifierRegistryOptions {
  /** The `llm-judge` verifier, e.g. `llmJudge(openAICompatible({...}))`; without one, judge criteria are refused up front. */
  readonly judge?: AnyVerifier;
  /** The `python` code verifier's sandbox settings; `false` leaves the kind out. */
  readonly python?: PythonVerifierOptions | false;
  /** The `js` code verifier's limits; `false` leaves the kind out. */
  readonly js?: JsVerifierOptions | false;
  /**
   * The most time and memory a rubric's `python` or `js` rule may ask for; a spec above them is
   * refused before anything runs. `python` / `js` options of their own take precedence.
   */
  readonly ruleLimits?: RuleLimitMaxima;
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
  const { maxTimeoutMs, maxMemoryMb } = options.ruleLimits ?? {};
  if (options.python !== false) registry.register(pythonVerifier({ maxTimeoutMs, maxMemoryMb, ...options.python }));
  if (options.js !== false)
    registry.register(
      jsVerifier({
        maxTimeoutMs,
        maxMemoryBytes: maxMemoryMb === undefined ? undefined : maxMemoryMb * 2 ** 20,
        ...options.js,
      }),
    );
  if (options.judge) registry.register(options.judge);
  for (const verifier of options.extra ?? []) registry.register(verifier);
  return registry;
}
