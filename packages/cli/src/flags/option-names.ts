import { type Flag, kebabCase } from "./flag.js";

/**
 * A library error's message in the CLI's terms: the libraries name their options
 * (`Pass errorsAs: "zero"`, `raise contextSize`), a CLI user knows only flags
 * (`Pass --errors-as zero`, `raise --context-size`). Only the command's own flags are rewritten,
 * so an option the command does not expose keeps its library name.
 *
 * @example
 * inFlagTerms('Pass errorsAs: "zero" to score anyway.', { errorsAs: errorsAsFlag }); // 'Pass --errors-as zero to score anyway.'
 */
export function inFlagTerms(message: string, flags: Readonly<Record<string, Flag<unknown>>>): string {
  let text = message;
  for (const [name, flag] of Object.entries(flags)) {
    // Only names that cannot be ordinary words: `errorsAs`, not `out` or `seed`.
    if (!/[A-Z]/.test(name)) continue;
    const spelt = `--${kebabCase(name)}`;
    // A name in quotes (`unknown fields "errorsAs"`) or as a path (`errorsAs: Invalid option`) is a
    // field of a file the user wrote: kept.
    const option = new RegExp(`(?<!")\\b${name}\\b(?!")(?::\\s*(?:"([^"]*)"|(true|false|-?[\\d.]+)))?`, "g");
    text = text.replace(
      option,
      (whole: string, quoted: string | undefined, literal: string | undefined, at: number, all: string) => {
        const value = quoted ?? literal;
        // `errorsAs: Invalid option` is a field path of a file, not the option with a value.
        if (value === undefined && all[at + whole.length] === ":") return whole;
        if (value === undefined) return spelt;
        if (flag.value === undefined) return value === "false" ? `no ${spelt}` : spelt;
        return `${spelt} ${value}`;
      },
    );
  }
  return text;
}
