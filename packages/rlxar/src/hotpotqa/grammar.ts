import type { ActionGrammar, ParsedAction } from "../environment/environment.js";

const NAMES = new Map([
  ["search", "Search"],
  ["finish", "Finish"],
]);

/**
 * The model's text with its reasoning removed: every `<think>…</think>` block; text before a
 * `</think>` that has no opening tag (chat templates that open the block in the prompt leave only
 * its end in the output); and an unclosed `<think>` with everything after it, since a model cut
 * off while thinking has not chosen an action yet, whatever its plan names.
 */
function withoutThinking(output: string): string {
  let text = output.replace(/<think>[\s\S]*?<\/think>/giu, "\n");
  const close = text.search(/<\/think>/iu);
  if (close >= 0) text = text.slice(close + "</think>".length);
  const open = text.search(/<think>/iu);
  return open >= 0 ? text.slice(0, open) : text;
}

/**
 * The action that starts at `from` (the action's name) in `line`, or undefined. The argument runs
 * to the first `]` or `)` outside any pair of brackets or parentheses it opened, so
 * `Finish[Kiss and Tell (1945 film)]` keeps its parentheses and `Search[Ed Wood)` still closes.
 */
function actionAt(line: string, from: number): { action: ParsedAction; end: number } | undefined {
  const head = /^(search|finish)\[/iu.exec(line.slice(from));
  if (head === null) return undefined;
  const start = from + head[0].length;
  let square = 0;
  let round = 0;
  for (let i = start; i < line.length; i++) {
    const ch = line[i];
    if (ch === "[") square++;
    else if (ch === "(") round++;
    else if (ch === "]" && square > 0) square--;
    else if (ch === ")" && round > 0) round--;
    else if (ch === "]" || ch === ")") {
      const argument = line.slice(start, i).trim();
      if (argument === "") return undefined;
      return { action: { name: NAMES.get(head[1]!.toLowerCase())!, argument }, end: i + 1 };
    }
  }
  return undefined;
}

/** The first action anywhere in one line: an action name at a word's start, closed on that line. */
function firstInLine(line: string): ParsedAction | undefined {
  const names = /(?<![\p{L}\p{N}_])(?:search|finish)\[/giu;
  for (let match = names.exec(line); match !== null; match = names.exec(line)) {
    const found = actionAt(line, match.index);
    if (found !== undefined) return found.action;
  }
  return undefined;
}

/** The line is an action and nothing else (around it: spaces, quotes, backticks, markdown stars). */
function wholeLine(line: string): ParsedAction | undefined {
  const trimmed = line.trim().replace(/^[`*"'\s]+|[`*"'.\s]+$/gu, "");
  const found = actionAt(trimmed, 0);
  return found !== undefined && found.end === trimmed.length ? found.action : undefined;
}

/**
 * ARCO's tolerant reading of a model's output, in its order of preference: the output is one
 * action line; else a `Thought: … / Action: …` pair's action line; else an action alone on the
 * last line; else the first action found anywhere. (The first rule needs no code of its own: an
 * output of one action line is its own last line, and no `Action:` label can precede it.) `<think>` blocks are removed first, and an
 * action with an empty argument (`Search[]`) is not an action.
 *
 * The action's name is read in any case (`search[…]`, `FINISH[…]`) and written canonically: a
 * model that lower-cases the name has still chosen the action, and charging it a search for the
 * spelling would teach it nothing the canonical form in its history does not already show.
 *
 * @example
 * parseHotpotAction("<think>Who directed it?</think>\nThought: find the film\nAction: search[Ed Wood film)");
 * // { name: "Search", argument: "Ed Wood film" }
 */
export function parseHotpotAction(output: string): ParsedAction | undefined {
  const lines = withoutThinking(output)
    .split(/\r?\n/u)
    .filter((line) => line.trim() !== "");
  if (lines.length === 0) return undefined;
  for (const line of lines) {
    const labelled = /^[\s*_`#>-]*action(?:\s*\d+)?[\s*_`]*:[\s*_`]*(.*)$/iu.exec(line);
    if (labelled === null) continue;
    const found = firstInLine(labelled[1]!);
    if (found !== undefined) return found;
  }
  const last = wholeLine(lines.at(-1)!);
  if (last !== undefined) return last;
  for (const line of lines) {
    const found = firstInLine(line);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * HotpotQA's action grammar: `Search[query]` and `Finish[answer]`, read by
 * {@link parseHotpotAction}, written canonically.
 *
 * @example
 * hotpotGrammar.format({ name: "Finish", argument: "1755" }); // "Finish[1755]"
 */
export const hotpotGrammar: ActionGrammar = {
  forms: ["Search[query]", "Finish[answer]"],
  parse: parseHotpotAction,
  format: (action) => `${action.name}[${action.argument}]`,
};
