import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Question } from "../../dialogue/dialogue.js";
import { RoleOutputError } from "../../dialogue/errors.js";
import type { Answer, Stakeholder } from "./stakeholder.js";

/**
 * A person answering at a terminal (or any pair of streams): each question is printed and one
 * line of input is the answer. End of input is an error, not an empty answer.
 */
export function terminalStakeholder(
  io: { readonly input: Readable; readonly output: Writable; readonly name?: string } = {
    input: process.stdin,
    output: process.stderr,
  },
): Stakeholder {
  const lines = createInterface({ input: io.input, crlfDelay: Infinity })[Symbol.asyncIterator]();
  let asked = 0;
  return {
    name: io.name ?? "terminal",
    async answer(question: Question): Promise<Answer> {
      asked++;
      io.output.write(`\nQuestion ${asked}: ${question.text}\n> `);
      const line = await lines.next();
      if (line.done) throw new RoleOutputError("the terminal closed before an answer was given");
      return { text: String(line.value).trim() };
    },
  };
}
