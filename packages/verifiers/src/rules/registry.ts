import { VerifierRegistry } from "../verifier/registry.js";
import { jsonSchemaVerifier } from "./json-schema.js";
import { ruleVerifiers } from "./rules.js";

/** A registry holding every deterministic rule verifier (no sandboxes, no models). */
export function rulesRegistry(): VerifierRegistry {
  return new VerifierRegistry([...ruleVerifiers, jsonSchemaVerifier]);
}
