import type { RubricIssue } from "./errors.js";

/**
 * Finds where JSON text first goes wrong. `JSON.parse` on Node 20 often reports only
 * "Unexpected token ',' ... is not valid JSON" with no position; a user fixing a file needs the
 * line and column, so the text is re-scanned (only after a parse has already failed).
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c < " ") fail();
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail();
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          fail();
        }
      } else i++;
    }
    fail();
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match) fail();
    i += match![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return;
        } else fail();
      }
    } else if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return;
        } else fail();
      }
    } else if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number();
    else fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return -1;
  } catch (offset) {
    if (typeof offset === "number") return offset;
    throw offset;
  }
}

/** 1-based line and column of an offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

/**
 * The issue for text that `JSON.parse` refused: the parser's message without its unhelpful
 * position, and the column (and, unless `where.line` says which line of a file this was, the
 * line) where the text first goes wrong.
 */
export function jsonSyntaxIssue(
  text: string,
  error: unknown,
  where: { readonly source?: string; readonly line?: number },
): RubricIssue {
  const message = (error instanceof Error ? error.message : String(error))
    .replace(/\s*in JSON at position \d+.*$/s, "")
    .replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, "");
  const offset = jsonErrorOffset(text);
  const found = offset < 0 ? undefined : lineAndColumn(text, offset);
  const line = where.line ?? found?.line;
  // Within a JSONL line only the column is news; in a JSON file both are.
  return {
    path: "(root)",
    message: `invalid JSON: ${message}${found ? ` (column ${found.column})` : ""}`,
    ...(line === undefined ? {} : { line }),
    ...(where.source === undefined ? {} : { source: where.source }),
  };
}
