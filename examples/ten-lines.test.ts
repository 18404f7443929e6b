import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

describe("the README's ten lines", () => {
  it("are this file's code, and print what the README says", () => {
    const readme = readFileSync(here("../README.md"), "utf8");
    const block = /## Ten lines of it\n\n```ts\n([\s\S]*?)\n```/u.exec(readme)?.[1];
    const code = readFileSync(here("ten-lines.ts"), "utf8").split("\n").slice(1).join("\n").trimEnd();
    expect(block).toBe(code);
    const printed = execFileSync(here("node_modules/.bin/tsx"), [here("ten-lines.ts")], { encoding: "utf8" });
    expect(printed.trim()).toBe("normalized 0.2500; with blame weighted 6: 0.0000");
    expect(readme).toContain(`\`${printed.trim()}\``);
  });
});
