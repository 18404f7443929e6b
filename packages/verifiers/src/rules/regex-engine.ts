import vm from "node:vm";
import { VerificationError } from "../errors.js";
import { RE2JS } from "re2js";
import { backtrackingBound } from "./linear-regexp.js";
import { RegexUnsupportedError, toRe2Syntax } from "./re2-syntax.js";
import { VerifierOptionsError } from "../errors.js";

/**
 * Which engine runs a rule's pattern. `re2` (the default) matches in time linear in the text, so
 * an output written by a policy under training cannot stall the scorer with a pattern such as
 * `^(\w+\s?)*$`: re2js runs it, or V8's own RegExp when the pattern is proven to run in linear
 * time there too (`linear-regexp.ts`). `js` is JavaScript's backtracking engine, for the patterns
 * RE2 cannot run (backreferences, lookahead), and runs under a time limit.
 */
export type RegexEngine = "re2" | "js";

/** A compiled rule pattern. Both methods throw RegexTimeLimitError when the `js` engine runs past its limit. */
export interface RulePattern {
  /**
   * What runs it: `re2js`, or `RegExp` (V8's engine: the `js` engine, or an `re2` pattern proven
   * linear on it, which re2js runs tens to hundreds of times slower).
   */
  readonly runsOn: "re2js" | "RegExp";
  /**
   * The non-overlapping matches in `text`, counted as `text.match(/…/g).length` counts them, up
   * to `atMost` (default: all): a rule that needs one match stops at the first, which on RE2 is
   * often a hundred times faster than counting them all.
   */
  count(text: string, atMost?: number): number;
  /** Each match's first capture group, or the whole match where it has none (or it did not take part). */
  firstGroups(text: string): string[];
}

/** Thrown when a pattern on the opt-in `js` engine runs past its time limit on one text. */
export class RegexTimeLimitError extends VerificationError {
  override readonly name = "RegexTimeLimitError";
  readonly code = "verification.regex-time-limit";
  constructor(
    readonly pattern: string,
    readonly limitMs: number,
  ) {
    super(
      `/${pattern}/ (engine "js") ran past its ${limitMs} ms limit; a backtracking pattern can take time ` +
        "exponential in the text, which the default RE2 engine never does",
    );
  }
}

/** How long one match of a `js`-engine pattern may take by default. */
export const DEFAULT_JS_REGEX_LIMIT_MS = 200;

export interface CompileRulePatternOptions {
  readonly engine?: RegexEngine;
  /** The `js` engine's limit per text, in ms. Default {@link DEFAULT_JS_REGEX_LIMIT_MS}. */
  readonly jsLimitMs?: number;
  /**
   * `re2` engine: run a pattern proven linear on V8's RegExp there (default true). `false` runs
   * every `re2` pattern on re2js, as before, e.g. to compare the two.
   */
  readonly regExpWhenLinear?: boolean;
}

/**
 * Compiles a rule pattern, written in JavaScript's syntax with JavaScript's flags, for one engine.
 *
 * @example
 * compileRulePattern("\\bQ[1-4]\\b", "i").count("q1 and Q2"); // 2
 * @throws RegexUnsupportedError (engine `re2`) for a pattern or flag RE2 cannot run.
 * @throws SyntaxError for a pattern that is not a valid JavaScript regular expression.
 */
export function compileRulePattern(
  pattern: string,
  flags: string,
  options: CompileRulePatternOptions = {},
): RulePattern {
  // Validity is JavaScript's: a pattern must mean the same thing whichever engine runs it.
  const regex = new RegExp(pattern, flags.includes("g") ? flags : `${flags}g`);
  if (options.engine === "js") return jsPattern(pattern, regex, options.jsLimitMs ?? DEFAULT_JS_REGEX_LIMIT_MS);
  // RE2 compiles every `re2` pattern, so what is accepted does not depend on which engine runs it.
  const re2 = re2Pattern(pattern, flags);
  if (options.regExpWhenLinear === false) return re2;
  return linearRegExpPattern(pattern, flags) ?? re2;
}

/**
 * The pattern on V8's RegExp when its backtracking is proven bounded (`backtrackingBound`), with
 * the `u` flag that the RE2 path's meaning follows (code points, JavaScript's `u` semantics).
 */
function linearRegExpPattern(pattern: string, flags: string): RulePattern | undefined {
  if (backtrackingBound(pattern) === undefined) return undefined;
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, `${flags.replace(/[gud]/g, "")}gu`);
  } catch {
    // Valid without `u` but not with it (`\-`, a lone `{`): RE2 runs it.
    return undefined;
  }
  return regExpPattern(regex);
}

const RE2_FLAGS: Readonly<Record<string, number>> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};
// Flags RE2 has no use for but that change nothing in a count: every pattern is global and
// Unicode-aware there, and match indices are not reported.
const NEUTRAL_FLAGS = new Set(["g", "u", "d"]);
const JS_ONLY_FLAGS: Readonly<Record<string, string>> = {
  y: "flag y (sticky matching)",
  v: "flag v (class set notation)",
};

function re2Pattern(pattern: string, flags: string): RulePattern {
  // Lookbehind support costs every match some speed (measured in bench/regex.ts), so it is asked
  // for only by patterns that may hold one.
  let bits = /\(\?<[=!]/.test(pattern) ? RE2JS.LOOKBEHINDS : 0;
  for (const flag of flags) {
    if (JS_ONLY_FLAGS[flag] !== undefined) throw new RegexUnsupportedError(pattern, JS_ONLY_FLAGS[flag]);
    if (!NEUTRAL_FLAGS.has(flag)) bits |= RE2_FLAGS[flag] ?? 0;
  }
  const source = toRe2Syntax(pattern, flags.includes("s"));
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, bits);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new RegexUnsupportedError(pattern, message.replace(/^error parsing regexp: /, ""));
  }
  const hasGroup = compiled.groupCount() > 0;
  return {
    runsOn: "re2js",
    count(text, atMost = Number.POSITIVE_INFINITY) {
      // A matcher's successive finds skip building the match arrays that matchAll yields.
      const matcher = compiled.matcher(text);
      let n = 0;
      while (n < atMost && matcher.find()) n++;
      return n;
    },
    firstGroups(text) {
      const matcher = compiled.matcher(text);
      const out: string[] = [];
      while (matcher.find()) out.push((hasGroup ? matcher.group(1) : null) ?? matcher.group(0)!);
      return out;
    },
  };
}

/*
 * Why a vm script and not a timer: a regex on the main thread cannot be interrupted by a timer,
 * whose callback waits until the regex returns. vm's `timeout` is kept by a watchdog thread that
 * terminates the running script, the regex inside it included, so it is a real limit. The event
 * loop is still held for up to the limit, which is why the limit is small and the engine opt-in.
 * One context serves every pattern: each run is synchronous, so they never overlap.
 */
const context = vm.createContext({ work: undefined as (() => unknown) | undefined });
const runWork = new vm.Script("work()");

function jsPattern(pattern: string, regex: RegExp, limitMs: number): RulePattern {
  if (!Number.isInteger(limitMs) || limitMs < 1)
    throw new VerifierOptionsError(`jsLimitMs must be an integer ≥ 1, got ${String(limitMs)}`);
  const limited = <T>(work: () => T): T => {
    context["work"] = work;
    try {
      return runWork.runInContext(context, { timeout: limitMs }) as T;
    } catch (error) {
      if ((error as { code?: unknown }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
        throw new RegexTimeLimitError(pattern, limitMs);
      throw error;
    } finally {
      context["work"] = undefined;
    }
  };
  const unlimited = regExpPattern(regex);
  return {
    runsOn: "RegExp",
    count: (text, atMost) => limited(() => unlimited.count(text, atMost)),
    firstGroups: (text) => limited(() => unlimited.firstGroups(text)),
  };
}

/** A global RegExp as a RulePattern, with no limit: for the `js` engine inside its limit, or a proven-linear pattern. */
function regExpPattern(regex: RegExp): RulePattern {
  const unicode = regex.flags.includes("u") || regex.flags.includes("v");
  return {
    runsOn: "RegExp",
    count(text, atMost = Number.POSITIVE_INFINITY) {
      if (atMost === Number.POSITIVE_INFINITY) return text.match(regex)?.length ?? 0;
      // String.prototype.match's loop, stopped early: an empty match moves on by one character.
      regex.lastIndex = 0;
      let n = 0;
      for (let m = regex.exec(text); m !== null && ++n < atMost; m = regex.exec(text))
        if (m[0] === "") regex.lastIndex = nextIndex(text, regex.lastIndex, unicode);
      return n;
    },
    firstGroups: (text) => [...text.matchAll(regex)].map((m) => m[1] ?? m[0]),
  };
}

function nextIndex(text: string, index: number, unicode: boolean): number {
  if (!unicode || index + 1 >= text.length) return index + 1;
  const unit = text.charCodeAt(index);
  return unit >= 0xd800 && unit <= 0xdbff ? index + 2 : index + 1;
}

/**
 * The spec-time check of a rule's pattern: undefined when it compiles for its engine, else the
 * field at fault (`pattern` or `flags`) and why, worded for a rubric author.
 */
export function rulePatternIssue(
  pattern: string,
  flags: string,
  engine: RegexEngine,
): { path: ["pattern" | "flags"]; message: string } | undefined {
  try {
    compileRulePattern(pattern, flags, { engine });
    return undefined;
  } catch (error) {
    if (error instanceof RegexUnsupportedError)
      return { path: [error.feature.startsWith("flag ") ? "flags" : "pattern"], message: error.message };
    return { path: ["pattern"], message: `invalid regular expression: ${(error as Error).message}` };
  }
}

/**
 * Compiled patterns by (engine, flags, pattern), for a verifier that sees the same few specs on
 * every output. Bounded: a stream of distinct patterns empties it rather than growing it.
 */
export function rulePatternCache(options: Pick<CompileRulePatternOptions, "jsLimitMs" | "regExpWhenLinear"> = {}) {
  const compiled = new Map<string, RulePattern>();
  return (pattern: string, flags: string, engine: RegexEngine): RulePattern => {
    const key = `${engine}/${flags}/${pattern}`;
    let hit = compiled.get(key);
    if (!hit) {
      if (compiled.size >= 256) compiled.clear();
      hit = compileRulePattern(pattern, flags, { ...options, engine });
      compiled.set(key, hit);
    }
    return hit;
  };
}
