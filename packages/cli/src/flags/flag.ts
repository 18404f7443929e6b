import { z } from "zod";

/**
 * One command-line flag: how it is written (`value`, e.g. `<file>`; none for a switch), what help
 * says about it, and the zod schema that turns the text the user typed into the option the command
 * receives. A flag is declared once, under its option name (camelCase); its spelling on the
 * command line (`--kebab-case`) is derived from that name, never written twice.
 *
 * Flags are optional unless `.required()` or given a `.default()`.
 *
 * @example
 * const budget = integerFlag("<n>", "questions the manager may ask (default 5)", { min: 0 }).default(5);
 * budget.schema.parse("3"); // 3
 * budget.schema.parse(undefined); // 5
 */
export class Flag<T> {
  private constructor(
    /** The value's placeholder in help (`<file>`), or undefined for a switch that takes none. */
    readonly value: string | undefined,
    readonly description: string,
    /** What the command receives: parses the typed text (or `undefined` when the flag is absent). */
    readonly schema: z.ZodType<T>,
    private readonly present: z.ZodType<NonNullable<T>>,
    /** Said after a rejection of this flag's value: why the allowed values are what they are. */
    readonly note: string | undefined,
    /** A one-letter alias (`-h`). */
    readonly short: string | undefined,
  ) {}

  /** A flag whose value, when given, `present` parses. */
  static of<T>(
    value: string | undefined,
    description: string,
    present: z.ZodType<T>,
    note?: string,
  ): Flag<T | undefined> {
    return new Flag<T | undefined>(
      value,
      description,
      present.optional() as z.ZodType<T | undefined>,
      present as z.ZodType<NonNullable<T | undefined>>,
      note,
      undefined,
    );
  }

  /** Absent is a usage error naming the flag. */
  required(): Flag<NonNullable<T>> {
    return new Flag<NonNullable<T>>(this.value, this.description, this.present, this.present, this.note, this.short);
  }

  /** Absent means `value`. */
  default(value: NonNullable<T>): Flag<NonNullable<T>> {
    const schema = this.present.optional().transform((v) => (v === undefined ? value : v)) as z.ZodType<NonNullable<T>>;
    return new Flag<NonNullable<T>>(this.value, this.description, schema, this.present, this.note, this.short);
  }

  /** Also spelt `-<letter>`. */
  alias(letter: string): Flag<T> {
    return new Flag<T>(this.value, this.description, this.schema, this.present, this.note, letter);
  }
}

/** A flag that takes a text value (a path, an id, a provider spec), non-empty. */
export function textFlag(value: string, description: string): Flag<string | undefined> {
  return Flag.of(value, description, z.string().min(1, { error: "expected a non-empty value" }));
}

/** A switch: present or not. */
export function switchFlag(description: string): Flag<boolean> {
  return Flag.of(undefined, description, z.boolean()).default(false);
}

/**
 * A number satisfying `check` (described by `expected`, e.g. "a number ≥ 0" — the rejection reads
 * `--threshold: expected a number ≥ 0, got "-0.1"`).
 */
export function numberFlag(
  value: string,
  description: string,
  check: (n: number) => boolean,
  expected: string,
): Flag<number | undefined> {
  return Flag.of(
    value,
    description,
    z.string().transform((text, context) => {
      const n = Number(text);
      if (text.trim() !== "" && check(n)) return n;
      context.addIssue({ code: "custom", message: `expected ${expected}` });
      return z.NEVER;
    }),
  );
}

/** The most seeds a reproduction takes: each is a whole training run; more is a typo, not a plan. */
export const MAX_SEEDS = 1000;

/**
 * An integer ≥ `min`, and ≤ `max` when given: a count that sizes work or memory (seeds, epochs)
 * takes a bound, so `--seeds 1000000000` is a usage error rather than an array Node cannot hold.
 */
export function integerFlag(
  value: string,
  description: string,
  { min, max }: { min: number; max?: number },
): Flag<number | undefined> {
  const upper = max ?? Number.MAX_SAFE_INTEGER;
  const range =
    max === undefined ? (min === 1 ? "a positive integer" : `an integer ≥ ${min}`) : `an integer in ${min}..${max}`;
  return numberFlag(value, description, (n) => Number.isSafeInteger(n) && n >= min && n <= upper, range);
}

/**
 * One of a fixed set, checked by the enum schema that defines the set (e.g. core's
 * `ErrorPolicySchema`), so the CLI accepts exactly what the library does.
 */
export function choiceFlag<const V extends string>(
  value: string,
  description: string,
  schema: z.ZodType<V, string>,
  note?: string,
): Flag<V | undefined> {
  return Flag.of(value, description, z.string().pipe(schema), note);
}

/** A comma-separated list (`a,b,c`), blanks dropped; at least one item. */
export function listFlag(value: string, description: string): Flag<string[] | undefined> {
  return Flag.of(
    value,
    description,
    z
      .string()
      .transform((text) =>
        text
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item !== ""),
      )
      .pipe(z.array(z.string()).min(1, { error: "expected at least one item" })),
  );
}

/** `errorsAs` → `errors-as`: how an option name is written on the command line (without the dashes). */
export function kebabCase(optionName: string): string {
  return optionName.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
