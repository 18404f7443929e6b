import { VerificationError } from "../errors.js";

/**
 * Thrown when a rule's pattern is valid JavaScript but RE2 cannot run it: a backreference, a
 * lookahead, a flag with no RE2 meaning, or any other construct RE2 refuses. Such a pattern needs
 * backtracking, which is what makes a regex's time exponential in its input, so it runs only
 * with `engine: "js"` (regex rules), under a time limit, or not at all (JSON Schema patterns).
 */
export class RegexUnsupportedError extends VerificationError {
  override readonly name = "RegexUnsupportedError";
  readonly code = "verification.regex-unsupported";
  constructor(
    readonly pattern: string,
    /** What RE2 cannot do, e.g. `backreference \1`. */
    readonly feature: string,
    /** What the author can do instead; where the pattern sits decides it (a JSON Schema has no `engine`). */
    remedy = 'Rewrite it without that, or set "engine": "js" to run it with JavaScript\'s backtracking engine under a time limit',
  ) {
    super(`RE2 cannot run /${pattern}/: ${feature}. ${remedy}`);
  }
}

/*
 * Rule patterns are written in JavaScript's syntax (rubrics predate the RE2 engine, and authors
 * test them in a browser console); RE2's syntax differs in a few places where the same text would
 * silently mean something else. Those places are rewritten here, in one pass over the pattern,
 * so that RE2 matches what JavaScript with the `u` flag would:
 *
 * - `\s` is JavaScript's whitespace (Unicode spaces, U+FEFF, line terminators), not RE2's ASCII
 *   five; `\S` likewise outside a class (inside one, RE2's `\S` is kept: a class cannot hold the
 *   complement of a set);
 * - `.` without the `s` flag excludes \r, U+2028 and U+2029 as well as \n;
 * - `\uXXXX`, `\u{X…}` (and a surrogate pair of them) and `\cX` become `\x{…}`;
 * - `[^]` (anything) and `[]` (nothing), which RE2 reads as the start of a class holding `]`;
 * - `[\b]` (backspace); `\p{Script=Greek}`, `\p{sc=…}`, `\p{General_Category=Lu}`, `\p{gc=…}`
 *   become RE2's `\p{Greek}` / `\p{Lu}`.
 *
 * What cannot be rewritten is refused with the construct named: backreferences (`\1`, `\k<name>`)
 * and lookahead (`(?=`, `(?!`). Lookbehind is left to RE2, which runs the captureless kind in
 * linear time when asked to (`LOOKBEHINDS`). Multiline `^`/`$` still see only \n as a line end.
 */

const WHITESPACE =
  "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";
const ANY = "\\x{0}-\\x{10ffff}";
const PROPERTY = /^\{(?:Script|sc|General_Category|gc)=([A-Za-z_]+)\}/;

/**
 * The RE2 spelling of a JavaScript pattern. `dotAll` is the `s` flag.
 * @throws RegexUnsupportedError for a backreference or a lookahead.
 */
export function toRe2Syntax(pattern: string, dotAll: boolean): string {
  let out = "";
  let inClass = false;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      const [text, length] = translateEscape(pattern, i, inClass);
      out += text;
      i += length;
      continue;
    }
    if (!inClass && c === "[") {
      if (pattern.startsWith("[^]", i)) {
        out += `[${ANY}]`;
        i += 3;
        continue;
      }
      if (pattern.startsWith("[]", i)) {
        out += `[^${ANY}]`;
        i += 2;
        continue;
      }
      inClass = true;
      // A leading `^` is part of the opening, not a literal.
      const negated = pattern.startsWith("[^", i);
      out += negated ? "[^" : "[";
      i += negated ? 2 : 1;
      continue;
    }
    if (inClass && c === "]") inClass = false;
    else if (!inClass && c === "(" && (pattern.startsWith("(?=", i) || pattern.startsWith("(?!", i)))
      throw new RegexUnsupportedError(pattern, `lookahead ${pattern.slice(i, i + 3)} at offset ${i}`);
    else if (!inClass && c === "." && !dotAll) {
      out += "[^\\n\\r\\x{2028}\\x{2029}]";
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** One escape starting at `pattern[at] === "\\"`: its RE2 text and how many characters it took. */
function translateEscape(pattern: string, at: number, inClass: boolean): [string, number] {
  const next = pattern[at + 1];
  const unsupported = (feature: string) => new RegexUnsupportedError(pattern, `${feature} at offset ${at}`);
  switch (next) {
    case "s":
      return [inClass ? WHITESPACE : `[${WHITESPACE}]`, 2];
    case "S":
      return [inClass ? "\\S" : `[^${WHITESPACE}]`, 2];
    case "b":
      return [inClass ? "\\x{8}" : "\\b", 2];
    case "k":
      if (pattern[at + 2] === "<")
        throw unsupported(`backreference ${pattern.slice(at, pattern.indexOf(">", at) + 1)}`);
      return ["k", 2];
    case "c": {
      const letter = pattern[at + 2];
      if (letter !== undefined && /[A-Za-z]/.test(letter)) return [hex(letter.charCodeAt(0) % 32), 3];
      return ["\\\\c", 2];
    }
    case "u": {
      const unit = unicodeEscape(pattern, at);
      return unit ?? ["u", 2];
    }
    case "p":
    case "P": {
      const property = PROPERTY.exec(pattern.slice(at + 2));
      if (property) return [`\\${next}{${property[1]}}`, 2 + property[0].length];
      return [`\\${next}`, 2];
    }
    default:
      if (next !== undefined && next >= "1" && next <= "9" && !inClass)
        throw unsupported(`backreference \\${/^\d+/.exec(pattern.slice(at + 1))![0]}`);
      return [pattern.slice(at, at + 2), 2];
  }
}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16)}}`;
}

/** `\uXXXX`, a surrogate pair of them, or `\u{X…}` at `at`, as one `\x{…}`. */
function unicodeEscape(pattern: string, at: number): [string, number] | undefined {
  const braced = /^\\u\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(at));
  if (braced) return [hex(Number.parseInt(braced[1]!, 16)), braced[0].length];
  const pair = /^\\u([dD][89abAB][0-9A-Fa-f]{2})\\u([dD][c-fC-F][0-9A-Fa-f]{2})/.exec(pattern.slice(at));
  if (pair) {
    const high = Number.parseInt(pair[1]!, 16);
    const low = Number.parseInt(pair[2]!, 16);
    return [hex((high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000), 12];
  }
  const unit = /^\\u([0-9A-Fa-f]{4})/.exec(pattern.slice(at));
  return unit ? [hex(Number.parseInt(unit[1]!, 16)), 6] : undefined;
}
