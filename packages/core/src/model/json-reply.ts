/**
 * Models asked for JSON often wrap it in a ```json fence, or add a sentence after it, even when
 * the server was given a `response_format`: not every server enforces one. This recovers the
 * JSON value the model meant, and gives `undefined` (never a guess) when there is none: the
 * caller decides what an unparseable answer means.
 */

/** Candidate starts tried before giving up; keeps pathological texts (thousands of `{`) linear-ish. */
const MAX_CANDIDATES = 64;

/**
 * The JSON value in a model's text, or `undefined`.
 *
 * Tries, in order: the whole text; each fenced code block (```json … ``` or plain ```); the first
 * balanced `{…}` or `[…]` that parses, ignoring commentary before and after it.
 *
 * @example
 * extractJson('```json\n{"score": 3}\n```');        // { score: 3 }
 * extractJson('{"score": 3}\nThe answer meets it.'); // { score: 3 }
 * extractJson("no JSON here");                      // undefined
 */
export function extractJson(text: string): unknown | undefined {
  const whole = tryParse(text.trim());
  if (whole.ok) return whole.value;

  for (const match of text.matchAll(/```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?([\s\S]*?)```/g)) {
    const fenced = tryParse((match[2] ?? "").trim());
    if (fenced.ok) return fenced.value;
  }

  let tried = 0;
  for (let start = 0; start < text.length && tried < MAX_CANDIDATES; start++) {
    const ch = text[start];
    if (ch !== "{" && ch !== "[") continue;
    tried++;
    const end = balancedEnd(text, start);
    if (end === undefined) continue;
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate.ok) return candidate.value;
  }
  return undefined;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Index of the bracket closing the one at `start`, skipping brackets inside JSON strings. */
function balancedEnd(text: string, start: number): number | undefined {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return undefined;
      if (stack.length === 0) return i;
    }
  }
  return undefined;
}

/**
 * The JSON a model's choice carries: what the provider already parsed (structured output), or else
 * what `extractJson` recovers from its text. `undefined` when there is none.
 */
export function choiceJson(
  choice: { readonly json?: unknown; readonly text: string } | undefined,
): unknown | undefined {
  if (!choice) return undefined;
  return choice.json !== undefined ? choice.json : extractJson(choice.text);
}
