import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hotpotGrammar, parseHotpotAction } from "./grammar.js";

const S = (argument: string) => ({ name: "Search", argument });
const F = (argument: string) => ({ name: "Finish", argument });

/** Model outputs as they come, and what ARCO's parse reads in them. */
const CASES: [string, string, ReturnType<typeof S> | undefined][] = [
  ["a bare action line", "Search[Sergei Aleksandrovich Tokarev]", S("Sergei Aleksandrovich Tokarev")],
  ["a bare finish", "Finish[1755]", F("1755")],
  ["spaces around it", "  Finish[ Chief of Protocol ]  \n", F("Chief of Protocol")],
  ["parentheses inside the argument", "Finish[Kiss and Tell (1945 film)]", F("Kiss and Tell (1945 film)")],
  ["`)` as the closer", "Search[Ed Wood)", S("Ed Wood")],
  ["`)` closing after a parenthesis", "Search[Kiss and Tell (1945 film))", S("Kiss and Tell (1945 film)")],
  ["brackets nested inside", "Search[[1] footnote]", S("[1] footnote")],
  ["lower-case name", "search[Moscow State University]", S("Moscow State University")],
  ["upper-case name", "FINISH[yes]", F("yes")],
  [
    "a Thought/Action pair",
    "Thought: I need the university first.\nAction: Search[Tokarev professor]",
    S("Tokarev professor"),
  ],
  [
    "the Action line wins over an action named in the thought",
    "Thought: maybe Search[wrong one] is better\nAction: Search[right one]",
    S("right one"),
  ],
  ["a numbered action label", "Thought 2: enough.\nAction 2: Finish[no]", F("no")],
  ["markdown around the label", "**Thought:** done\n**Action:** Finish[Paris]", F("Paris")],
  [
    "an action alone on the last line",
    "I know where he taught, so I look up the founding year.\nSearch[Moscow State University founded]",
    S("Moscow State University founded"),
  ],
  ["the last line wins over an action mentioned earlier", "I could Search[A] again\nSearch[B]", S("B")],
  [
    "an action inside prose, found anywhere",
    "The answer is Finish[Greenwich Village] as far as I can tell.",
    F("Greenwich Village"),
  ],
  ["an action in backticks", "I will run `Search[Ed Wood director]` now.", S("Ed Wood director")],
  ["a trailing period after a bare line", "Finish[1755].", F("1755")],
  ["a <think> block stripped", "<think>Search[not this]? No, answer.</think>\nFinish[yes]", F("yes")],
  ["several think blocks", "<think>a</think>Thought: b<think>Finish[x]</think>\nAction: Search[c]", S("c")],
  ["a closing </think> with no opening (template-opened block)", "Search[plan] maybe\n</think>\nFinish[no]", F("no")],
  ["an unclosed <think>: cut off while thinking", "<think>I should Search[Ed Wood] first and then", undefined],
  ["text before an unclosed <think> is kept", "Search[Ed Wood]\n<think>and then maybe", S("Ed Wood")],
  ["an empty argument is no action", "Search[]", undefined],
  ["a blank argument is no action", "Finish[   ]", undefined],
  ["an empty argument is skipped for the next action", "Search[] oops, I mean Search[Ed Wood]", S("Ed Wood")],
  ["an unclosed bracket", "Search[Ed Wood", undefined],
  ["a bracket closed on the next line", "Search[Ed\nWood]", undefined],
  ["no action at all", "I think the answer is 1755.", undefined],
  ["a word that only ends in search", "research[1] shows it", undefined],
  ["a space before the bracket", "search [engine]", undefined],
  ["an unknown action", "Lookup[Ed Wood]", undefined],
  ["empty output", "", undefined],
  ["CRLF lines", "Thought: x\r\nAction: Finish[Yes]\r\n", F("Yes")],
];

describe("parseHotpotAction (ARCO's parse tolerance)", () => {
  it.each(CASES)("%s", (_, output, expected) => {
    expect(parseHotpotAction(output)).toEqual(expected);
  });

  it("never throws, on any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        parseHotpotAction(text);
      }),
      { seed: 15, numRuns: 2000 },
    );
  });

  it("reads back what format writes, for any argument without brackets, parentheses or newlines", () => {
    const argument = fc
      .string({ minLength: 1, maxLength: 40 })
      .map((text) => text.replace(/[[\]()\r\n]/gu, "").trim())
      .filter((text) => text !== "");
    fc.assert(
      fc.property(fc.constantFrom("Search", "Finish"), argument, (name, arg) => {
        const action = { name, argument: arg };
        expect(hotpotGrammar.parse(hotpotGrammar.format(action))).toEqual(action);
      }),
      { seed: 15, numRuns: 2000 },
    );
  });

  it("writes the canonical forms", () => {
    expect(hotpotGrammar.format(F("1755"))).toBe("Finish[1755]");
    expect(hotpotGrammar.forms).toEqual(["Search[query]", "Finish[answer]"]);
  });
});
