import { PolicyInputError, describeValue } from "./errors.js";

/** Per-token values indexed [sequence][token]; sequences may differ in length. */
export type TokenMatrix = readonly (readonly number[])[];

/** Which tokens count, indexed [sequence][token]: 1/true counts, 0/false is ignored. */
export type TokenMask = readonly (readonly (number | boolean)[])[];

/** A [sequence][token] argument together with the name used in error messages. */
export interface NamedMatrix {
  readonly name: string;
  readonly rows: TokenMatrix | undefined;
}

/** The validated shape of a batch: how many sequences, which tokens count, how many count. */
export interface SequenceBatch {
  /** K, the number of sequences. */
  readonly size: number;
  /** m_k,t ∈ {0, 1} for every sequence; the same lengths as the reference matrix's rows. */
  readonly masks: readonly Uint8Array[];
  /** |m_k| = Σ_t m_k,t, at least 1 for every sequence. */
  readonly activeCounts: readonly number[];
}

/**
 * Validates a batch of [sequence][token] matrices against `reference` (at least one sequence,
 * at least one token per sequence, every value finite), checks that each of `companions` and
 * `mask` has exactly its shape, and turns the mask (default: all ones) into 0/1 bytes.
 * A sequence whose tokens are all masked out is rejected: it has no mean to take.
 */
export function readSequenceBatch(
  reference: NamedMatrix,
  companions: readonly NamedMatrix[],
  mask: TokenMask | undefined,
): SequenceBatch {
  const rows = reference.rows;
  if (!Array.isArray(rows)) {
    throw new PolicyInputError(reference.name, `expected an array of sequences, got ${describeValue(rows)}`);
  }
  if (rows.length === 0) {
    throw new PolicyInputError(reference.name, "expected at least one sequence, got an empty array");
  }
  for (let k = 0; k < rows.length; k++) {
    const row: unknown = rows[k];
    if (!Array.isArray(row)) {
      throw new PolicyInputError(`${reference.name}[${k}]`, `expected an array of tokens, got ${describeValue(row)}`);
    }
    if (row.length === 0) {
      throw new PolicyInputError(`${reference.name}[${k}]`, "expected at least one token, got none");
    }
    requireFiniteRow(`${reference.name}[${k}]`, row as readonly number[]);
  }

  for (const companion of companions) {
    requireSameShape(companion.name, companion.rows, reference.name, rows);
    const companionRows = companion.rows as TokenMatrix;
    for (let k = 0; k < companionRows.length; k++) requireFiniteRow(`${companion.name}[${k}]`, companionRows[k]!);
  }

  const masks: Uint8Array[] = new Array<Uint8Array>(rows.length);
  const activeCounts: number[] = new Array<number>(rows.length);
  if (mask === undefined) {
    for (let k = 0; k < rows.length; k++) {
      const n = rows[k]!.length;
      masks[k] = new Uint8Array(n).fill(1);
      activeCounts[k] = n;
    }
  } else {
    requireSameShape("mask", mask, reference.name, rows);
    for (let k = 0; k < rows.length; k++) {
      const maskRow = mask[k]!;
      const bytes = new Uint8Array(maskRow.length);
      let count = 0;
      for (let t = 0; t < maskRow.length; t++) {
        const m = maskRow[t];
        if (m === 1 || m === true) {
          bytes[t] = 1;
          count++;
        } else if (m !== 0 && m !== false) {
          throw new PolicyInputError(`mask[${k}][${t}]`, `expected 0, 1, true or false, got ${describeValue(m)}`);
        }
      }
      if (count === 0) {
        throw new PolicyInputError(
          `mask[${k}]`,
          "every token is masked out; a sequence needs at least one unmasked token",
        );
      }
      masks[k] = bytes;
      activeCounts[k] = count;
    }
  }
  return { size: rows.length, masks, activeCounts };
}

function requireSameShape(name: string, rows: unknown, referenceName: string, reference: TokenMatrix): void {
  if (!Array.isArray(rows)) {
    throw new PolicyInputError(name, `expected an array of sequences, got ${describeValue(rows)}`);
  }
  if (rows.length !== reference.length) {
    throw new PolicyInputError(
      name,
      `expected ${reference.length} sequences (as ${referenceName}), got ${rows.length}`,
    );
  }
  for (let k = 0; k < rows.length; k++) {
    const row: unknown = rows[k];
    const expected = reference[k]!.length;
    if (!Array.isArray(row)) {
      throw new PolicyInputError(`${name}[${k}]`, `expected an array of tokens, got ${describeValue(row)}`);
    }
    if (row.length !== expected) {
      throw new PolicyInputError(
        `${name}[${k}]`,
        `expected ${expected} tokens (as ${referenceName}[${k}]), got ${row.length}`,
      );
    }
  }
}

function requireFiniteRow(path: string, row: readonly number[]): void {
  for (let t = 0; t < row.length; t++) {
    const value = row[t];
    if (!Number.isFinite(value)) {
      throw new PolicyInputError(`${path}[${t}]`, `expected a finite number, got ${describeValue(value)}`);
    }
  }
}
