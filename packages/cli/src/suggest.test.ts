import { describe, expect, it } from "vitest";
import { suggest } from "./suggest.js";

const COMMANDS = ["validate", "score", "schema", "elicit", "repro", "hackbench", "help"];

describe("suggest", () => {
  it("names the command a typo or a unique prefix meant", () => {
    expect(suggest("scor", COMMANDS)).toBe("score");
    expect(suggest("valdiate", COMMANDS)).toBe("validate");
    expect(suggest("hack", COMMANDS)).toBe("hackbench");
    expect(suggest("elicti", COMMANDS)).toBe("elicit");
  });

  it("suggests nothing for a word that is far from every command", () => {
    expect(suggest("deploy", COMMANDS)).toBeUndefined();
    expect(suggest("x", COMMANDS)).toBeUndefined();
  });
});
