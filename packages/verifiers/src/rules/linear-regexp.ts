/*
 * Which rule patterns JavaScript's own RegExp may run, keeping the promise that a match takes time
 * linear in the text. V8's engine backtracks, so the promise needs a proof per pattern, and the
 * proof has to hold for an *unanchored* search, which V8 starts again at every position of the text:
 * one unbounded quantifier is already quadratic there (`/a*b/` on 20,000 `a`s took 1.5 s, and
 * `\d+(?:\.\d+)?%` on 20,000 digits 2.4 s), whatever the rest of the pattern.
 *
 * The proof used here: no unbounded quantifier (`*`, `+`, `{n,}`) anywhere, no lookaround and no
 * backreference, and a small bound on the work one start position can cost. A backtracking
 * matcher's search from one position is a tree whose branches are the choices the pattern offers
 * (an alternative, a repeat count), so it has at most `paths` leaves, each reached in at most
 * `steps` steps, where
 *
 *   an atom (a character, a class, `.`, an escape, an assertion): paths 1, steps 1
 *   a sequence: paths multiply, steps add        an alternation: paths add, steps take the max
 *   X{min,max}: paths Σ_{k=min..max} paths(X)^k, steps max · steps(X)
 *
 * and the count of matches starts at most once at each position (a search resumes after a match).
 * So `paths · steps ≤ LIMIT` bounds the whole count by LIMIT steps per character of text: linear,
 * as RE2 is (RE2 is linear with a constant of the pattern's size, too). Anything the scan does not
 * fully understand is not proven, and runs on RE2.
 */

/** The most steps one start position may cost a proven pattern. */
const LIMIT = 1024;

interface Cost {
  readonly paths: number;
  readonly steps: number;
}

// Costs are only compared against LIMIT, so anything larger is the same as infinity.
const cap = (n: number) => Math.min(n, 1e9);
const ATOM: Cost = { paths: 1, steps: 1 };

/** A group being scanned: the alternatives closed so far and the sequence being built. */
interface Frame {
  alternatives: Cost[];
  sequence: Cost[];
}

/**
 * The bound on the steps one start position can cost JavaScript's backtracking engine for this
 * pattern (written for the `u` flag, and already known to compile with it), or `undefined` when
 * there is none: an unbounded quantifier, a lookaround, a backreference, or syntax the scan does
 * not know.
 *
 * @example
 * backtrackingBound("\\bQ[1-4]\\b"); // 4
 * backtrackingBound("colou?r"); // 12
 * backtrackingBound("\\d+%"); // undefined
 */
export function backtrackingBound(pattern: string): number | undefined {
  const stack: Frame[] = [{ alternatives: [], sequence: [] }];
  const top = () => stack[stack.length - 1]!;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      const length = escapeLength(pattern, i);
      if (length === undefined) return undefined;
      top().sequence.push(ATOM);
      i += length;
    } else if (c === "[") {
      const end = classEnd(pattern, i);
      if (end === undefined) return undefined;
      top().sequence.push(ATOM);
      i = end;
    } else if (c === "(") {
      // Plain, non-capturing and named groups only: lookarounds and anything newer are not proven.
      if (pattern.startsWith("(?:", i)) i += 3;
      else if (pattern.startsWith("(?<", i) && !pattern.startsWith("(?<=", i) && !pattern.startsWith("(?<!", i)) {
        const close = pattern.indexOf(">", i);
        if (close < 0) return undefined;
        i = close + 1;
      } else if (pattern[i + 1] === "?") return undefined;
      else i += 1;
      stack.push({ alternatives: [], sequence: [] });
    } else if (c === ")") {
      if (stack.length === 1) return undefined;
      const group = alternation(stack.pop()!);
      top().sequence.push(group);
      i += 1;
    } else if (c === "|") {
      const frame = top();
      frame.alternatives.push(sequence(frame.sequence));
      frame.sequence = [];
      i += 1;
    } else if (c === "*" || c === "+") return undefined;
    else if (c === "?" || c === "{") {
      const quantifier = c === "?" ? { min: 0, max: 1, length: 1 } : braces(pattern, i);
      if (quantifier === undefined) return undefined;
      const frame = top();
      const target = frame.sequence.pop();
      if (target === undefined) return undefined;
      frame.sequence.push(repeat(target, quantifier.min, quantifier.max));
      i += quantifier.length;
      // A lazy `?` after a quantifier changes the order of the choices, not their number.
      if (pattern[i] === "?") i += 1;
    } else {
      // `.`, `^`, `$` and plain characters are one step each.
      top().sequence.push(ATOM);
      i += 1;
    }
  }
  if (stack.length !== 1) return undefined;
  const whole = alternation(stack[0]!);
  const bound = cap(whole.paths * whole.steps);
  return bound <= LIMIT ? bound : undefined;
}

function sequence(items: readonly Cost[]): Cost {
  let paths = 1;
  let steps = 0;
  for (const item of items) {
    paths = cap(paths * item.paths);
    steps = cap(steps + item.steps);
  }
  return { paths, steps: Math.max(steps, 1) };
}

function alternation(frame: Frame): Cost {
  const branches = [...frame.alternatives, sequence(frame.sequence)];
  return {
    paths: cap(branches.reduce((n, b) => n + b.paths, 0)),
    steps: Math.max(...branches.map((b) => b.steps)),
  };
}

function repeat(target: Cost, min: number, max: number): Cost {
  let paths = 0;
  for (let k = min; k <= max && paths < 1e9; k++) paths = cap(paths + target.paths ** k);
  return { paths, steps: cap(Math.max(max, 1) * target.steps) };
}

/** `{n}` or `{n,m}` at `at` (the `u` flag makes any other `{` a syntax error); `{n,}` is unbounded. */
function braces(pattern: string, at: number): { min: number; max: number; length: number } | undefined {
  const match = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(at));
  if (!match) return undefined;
  const min = Number(match[1]);
  if (match[2] !== undefined && match[3] === "") return undefined;
  const max = match[3] === undefined ? min : Number(match[3]);
  if (!Number.isSafeInteger(max) || max < min) return undefined;
  return { min, max, length: match[0].length };
}

/** How many characters the escape at `at` takes, or undefined for a backreference (or one not understood). */
function escapeLength(pattern: string, at: number): number | undefined {
  const next = pattern[at + 1];
  if (next === undefined) return undefined;
  if (next === "k" || (next >= "1" && next <= "9")) return undefined;
  if ((next === "p" || next === "P" || next === "u") && pattern[at + 2] === "{") {
    const close = pattern.indexOf("}", at);
    return close < 0 ? undefined : close - at + 1;
  }
  if (next === "u") return 6;
  if (next === "x") return 4;
  if (next === "c") return 3;
  return 2;
}

/** The index just past the class that opens at `at`. */
function classEnd(pattern: string, at: number): number | undefined {
  let i = at + 1;
  while (i < pattern.length) {
    if (pattern[i] === "\\") {
      const length = escapeLength(pattern, i);
      if (length === undefined) return undefined;
      i += length;
    } else if (pattern[i] === "]") return i + 1;
    else if (pattern[i] === "[")
      return undefined; // the `v` flag's nested classes: not proven
    else i += 1;
  }
  return undefined;
}
