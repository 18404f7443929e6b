import type { VerifierSpec } from "@rubric/core";
import type { Verifier } from "./verifier.js";

/**
 * A verifier of any spec type. The registry is heterogeneous by nature; type safety comes back
 * at run time, where each spec is parsed by its verifier's own `specSchema` before use.
 */
export type AnyVerifier = Verifier<any>;

/** Thrown when two verifiers claim the same kind. */
export class DuplicateVerifierError extends Error {
  override readonly name = "DuplicateVerifierError";
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

  /** Adds a kind; `replace: true` swaps an existing one (e.g. a judge on another model). */
  register(verifier: AnyVerifier, options: { replace?: boolean } = {}): this {
    if (this.#byKind.has(verifier.kind) && !options.replace)
      throw new DuplicateVerifierError(
        `a verifier of kind ${JSON.stringify(verifier.kind)} is already registered; pass { replace: true } to swap it`,
      );
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
