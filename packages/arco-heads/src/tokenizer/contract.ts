// What every tokenizer kind offers, in a file of its own: each kind's module names its type with
// it, and tokenizer.ts (which dispatches over the kinds) imports those modules.

/** What every tokenizer kind offers, told apart by `kind`. */
export interface TokenizerOf<Kind extends string, File> {
  /** Which tokenizer this is: its file's `kind`, the manifest's `tokenizer.kind`. */
  readonly kind: Kind;
  /** Ids in use: 0 … vocabularySize − 1. */
  readonly vocabularySize: number;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  /** The file that loads back to this tokenizer. */
  toFile(): File;
}
