import { Effect } from "effect";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidJsRuleLimitsError } from "./errors.js";
import { runJsRule, runJsRuleEffect, type JsRuleResult } from "./run-js-rule.js";
import { JsSandbox } from "./sandbox.js";

// Real QuickJS in real worker threads; nothing is mocked.
const sandbox = new JsSandbox({ maxWorkers: 2 });
afterAll(() => sandbox.close());

const run = (code: string, extra: { input?: string; output?: string; timeoutMs?: number; memoryBytes?: number } = {}) =>
  runJsRule(
    { code, output: extra.output ?? "Total: 42", input: extra.input ?? "Sum the column" },
    { sandbox, ...extra },
  );

function ok(result: JsRuleResult) {
  if (result.status !== "ok") throw new Error(`expected a score, got ${result.kind}: ${result.message}`);
  return result;
}

function failed(result: JsRuleResult) {
  if (result.status !== "error") throw new Error(`expected an error, got score ${result.score}`);
  return result;
}

/** Wall time is the point of a time limit; this allowance absorbs a busy CI machine. */
const SLACK_MS = 3000;

describe("scores", () => {
  it("takes a number, a boolean or { score, rationale } from evaluate", async () => {
    expect(ok(await run("function evaluate() { return 0.25; }")).score).toBe(0.25);
    expect(ok(await run("function evaluate() { return true; }")).score).toBe(1);
    expect(ok(await run("function evaluate() { return false; }")).score).toBe(0);
    const withWhy = ok(
      await run("function evaluate({ output }) { return { score: 0.5, rationale: `saw ${output.length} chars` }; }"),
    );
    expect(withWhy).toMatchObject({ status: "ok", score: 0.5, rationale: "saw 9 chars" });
    expect(withWhy.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("passes input, output and file names to evaluate, also as globals", async () => {
    const result = await runJsRule(
      {
        code: `const evaluate = ({ input, output, files }) =>
          input === "Sum it" && output === "42" && files.length === 1 && files[0].name === "a.csv" && files[0].mimeType === "text/csv"
          && globalThis.output === output && typeof globalThis.input === "string";`,
        input: "Sum it",
        output: "42",
        files: [{ name: "a.csv", mimeType: "text/csv" }],
      },
      { sandbox },
    );
    expect(ok(result).score).toBe(1);
  });

  it("gives the rule names and types of files but never their paths, frozen", async () => {
    const files = [{ name: "report.docx", path: "/etc/passwd", mimeType: "application/msword" }];
    const code = `files.length === 1 && files[0].path === undefined && Object.keys(files[0]).join() === "name,mimeType"
      && Object.isFrozen(files) && Object.isFrozen(files[0])`;
    expect(ok(await runJsRule({ code, output: "", files }, { sandbox })).score).toBe(1);
  });

  it("sees an empty input when there is none", async () => {
    expect(ok(await runJsRule({ code: "input === ''", output: "x" }, { sandbox })).score).toBe(1);
  });

  it("accepts a bare expression: the script's last value is the result", async () => {
    expect(ok(await run('output.includes("Total")')).score).toBe(1);
    expect(ok(await run("const n = Number(output.split(': ')[1]); n / 100")).score).toBe(0.42);
    expect(ok(await run("({ score: 0.75, rationale: 'object literal in parentheses' })"))).toMatchObject({
      score: 0.75,
      rationale: "object literal in parentheses",
    });
  });

  it("awaits an async evaluate", async () => {
    expect(ok(await run("async function evaluate() { await null; return { score: 0.3 }; }")).score).toBe(0.3);
  });

  it("clamps scores to [0, 1]", async () => {
    expect(ok(await run("1.7")).score).toBe(1);
    expect(ok(await run("-0.2")).score).toBe(0);
    expect(ok(await run("({ score: 3 })")).score).toBe(1);
  });

  it("treats a null rationale as none, and cuts a very long one", async () => {
    expect(ok(await run("({ score: 1, rationale: null })")).rationale).toBeUndefined();
    const long = ok(await run("({ score: 1, rationale: 'r'.repeat(1e6) })"));
    expect(long.rationale!.length).toBeLessThan(5000);
  });
});

describe("a rule that cannot give a score is an error, never a 0", () => {
  it("rejects NaN, infinities, strings and missing scores as invalid results", async () => {
    for (const code of [
      "NaN",
      "1 / 0",
      "'0.5'",
      "({ score: NaN })",
      "({ score: 'high' })",
      "({ rationale: 'no score' })",
      "[1]",
      "null",
      "() => 1",
    ]) {
      const error = failed(await run(code));
      expect(error.kind, code).toBe("invalid-result");
    }
    expect(failed(await run("({ score: NaN })")).message).toMatch(/returned \{ score: NaN/);
  });

  it("says when evaluate forgot to return, or the script ended without a value", async () => {
    expect(failed(await run("function evaluate() { output.length > 3; }")).message).toMatch(
      /evaluate returned undefined.*return` missing/,
    );
    expect(failed(await run("let x = 1;")).message).toMatch(/the code returned undefined.*define `function evaluate/);
  });

  it("reports an exception with its message and QuickJS stack", async () => {
    const error = failed(await run("function evaluate() {\n  throw new TypeError('no table found');\n}"));
    expect(error).toMatchObject({ kind: "exception", message: "TypeError: no table found (line 2, column 22)" });
    expect(error.stack).toContain("rule.js:2");
    expect(failed(await run("throw 'plain string'")).message).toBe("threw a non-Error value: plain string");
    expect(failed(await run("async function evaluate() { throw new Error('later'); }")).message).toMatch(
      /^Error: later/,
    );
  });

  it("reports code that does not parse as a syntax error, with where", async () => {
    const error = failed(await run("function evaluate( {"));
    expect(error.kind).toBe("syntax");
    expect(error.message).toMatch(/^SyntaxError: .* \(line 1, column \d+\)$/);
    // Rules are scripts, not modules.
    expect(failed(await run("import fs from 'fs'; 1")).kind).toBe("syntax");
  });

  it("reports a promise that can never settle", async () => {
    expect(failed(await run("function evaluate() { return new Promise(() => {}); }"))).toMatchObject({
      kind: "invalid-result",
      message: expect.stringMatching(/never settles/),
    });
  });
});

describe("containment", () => {
  it("has no module system, process or Node globals", async () => {
    expect(failed(await run("require('fs')"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/^ReferenceError: 'require' is not defined/),
    });
    expect(failed(await run("process.exit(1)"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/^ReferenceError: 'process' is not defined/),
    });
    expect(failed(await run("function evaluate() { return import('fs'); }"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/could not load module 'fs'/),
    });
    expect(failed(await run("this.constructor.constructor('return process')()")).message).toMatch(
      /^ReferenceError: 'process' is not defined/,
    );
    // console exists only as a silent stub of five methods (see worker-source.ts), not Node's.
    const absent = ["process", "require", "module", "Buffer", "__dirname", "global", "Deno", "Bun", "WebAssembly"];
    expect(
      ok(await run(`[${absent.map((name) => `globalThis.${name}`).join(", ")}].every((v) => v === undefined)`)).score,
    ).toBe(1);
    expect(
      ok(
        await run(
          "Object.keys(console).sort().join() === 'debug,error,info,log,warn' && console.log('x') === undefined",
        ),
      ).score,
    ).toBe(1);
  });

  it("has no network", async () => {
    for (const code of ["fetch('http://127.0.0.1/')", "new XMLHttpRequest()", "new WebSocket('ws://127.0.0.1/')"])
      expect(failed(await run(code)), code).toMatchObject({
        kind: "exception",
        message: expect.stringMatching(/^ReferenceError: '\w+' is not defined/),
      });
  });

  it("has no timers", async () => {
    expect(failed(await run("setTimeout(() => {}, 0)"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/^ReferenceError: 'setTimeout' is not defined/),
    });
    expect(
      ok(await run("[typeof setInterval, typeof setImmediate, typeof queueMicrotask].every((t) => t === 'undefined')"))
        .score,
    ).toBe(1);
  });

  it("offers only ECMAScript built-ins and the data handed in", async () => {
    const ecmascript = new Set(
      `Error EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError AggregateError Array Object Function
       Iterator parseInt parseFloat isNaN isFinite decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape Infinity
       NaN undefined eval Number Boolean String Math Reflect Symbol globalThis BigInt Date RegExp JSON Proxy Map Set WeakMap WeakSet console
       ArrayBuffer SharedArrayBuffer Uint8ClampedArray Int8Array Uint8Array Int16Array Uint16Array Int32Array Uint32Array BigInt64Array
       BigUint64Array Float16Array Float32Array Float64Array DataView Promise WeakRef FinalizationRegistry Atomics input output files`.split(
        /\s+/,
      ),
    );
    const result = ok(await run("({ score: 1, rationale: Object.getOwnPropertyNames(globalThis).join(' ') })"));
    const unexpected = result.rationale!.split(" ").filter((name) => !ecmascript.has(name));
    expect(unexpected).toEqual([]);
  });

  it("interrupts an infinite loop at its time limit", async () => {
    const started = performance.now();
    const error = failed(await run("while (true) {}", { timeoutMs: 200 }));
    expect(error).toMatchObject({ kind: "timeout", message: "ran past its 200 ms time limit and was interrupted" });
    expect(performance.now() - started).toBeLessThan(200 + SLACK_MS);
  });

  it("interrupts loops hidden in promise jobs and in getters read after the rule returns", async () => {
    expect(
      failed(
        await run("Promise.resolve().then(function loop() { return Promise.resolve().then(loop); })", {
          timeoutMs: 200,
        }),
      ).kind,
    ).toBe("timeout");
    expect(failed(await run("({ get score() { for (;;) {} } })", { timeoutMs: 200 })).kind).toBe("timeout");
    expect(failed(await run("throw { get message() { for (;;) {} } }", { timeoutMs: 200 })).kind).toBe("timeout");
  });

  it("kills a rule stuck inside a built-in that never checks for interrupts, and recovers", async () => {
    // A naive substring search of 3e6 × 1e5 steps in native code: QuickJS never polls its interrupt handler.
    const started = performance.now();
    const error = failed(await run("'a'.repeat(3e6).includes('a'.repeat(1e5) + 'b')", { timeoutMs: 200 }));
    expect(error.kind).toBe("timeout");
    expect(error.message).toMatch(/could not be interrupted .*; its worker thread was replaced/);
    expect(performance.now() - started).toBeLessThan(200 + SLACK_MS);
    expect(ok(await run("1")).score).toBe(1);
  });

  it("stops huge allocations at the memory limit", async () => {
    const attempts = [
      "'x'.repeat(2 ** 29)", // a 512 Mi-character string in one allocation
      "new Array(5e8).fill(0)", // 4 GB worth of array slots
      "const kept = []; for (;;) kept.push(new Uint8Array(1 << 20))", // many allocations each under the limit
      "const kept = new Map(); for (let i = 0; ; i++) kept.set(i, { i })",
    ];
    for (const code of attempts) {
      const error = failed(await run(code, { timeoutMs: 10_000 }));
      expect(error.kind, code).toBe("memory");
      expect(error.message, code).toMatch(/the limit is 32 MiB$/);
    }
    expect(ok(await run("1")).score).toBe(1);
  });

  it("says a text too large for the heap is too large, not a timeout, and reads one that fits", async () => {
    const huge = "a".repeat(40 * 2 ** 20);
    const error = failed(await run("output.length", { output: huge }));
    expect(error.kind).toBe("memory");
    expect(error.message).toBe(
      "the input and output hold 41,943,054 characters, more than the rule's memory limit of 32 MiB can hold beside the rule (at most half of it); raise memoryBytes or shorten the text",
    );
    const fits = "a".repeat(8 * 2 ** 20);
    expect(ok(await run("output.length === 8 * 2 ** 20", { output: fits, timeoutMs: 10_000 })).score).toBe(1);
  });

  it("enforces the memory limit it is given", async () => {
    const code = "const kept = []; for (let i = 0; i < 48; i++) kept.push(new Uint8Array(1 << 20)); kept.length / 48";
    expect(failed(await run(code, { memoryBytes: 32 * 2 ** 20 })).kind).toBe("memory");
    expect(ok(await run(code, { memoryBytes: 128 * 2 ** 20 })).score).toBe(1);
  });

  it("turns deep recursion and deep nesting into errors, not a crash", async () => {
    expect(failed(await run("function down(n) { return down(n + 1) + 1; } down(0)"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/stack overflow/),
    });
    expect(failed(await run("JSON.parse('['.repeat(1e6))"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/stack overflow/),
    });
    expect(failed(await run("eval('('.repeat(1e5) + '1' + ')'.repeat(1e5))"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/stack overflow/),
    });
    // Ordinary recursion still has room.
    expect(ok(await run("function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); } depth(500) / 500")).score).toBe(
      1,
    );
  });

  it("keeps prototype pollution inside the sandbox and inside the run", async () => {
    expect(
      ok(
        await run(
          "Object.prototype.polluted = 1; Array.prototype.push = null; String.prototype.includes = () => true; 1",
        ),
      ).score,
    ).toBe(1);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(typeof [].push).toBe("function");
    expect(
      ok(await run("({}).polluted === undefined && typeof [].push === 'function' && !'abc'.includes('z')")).score,
    ).toBe(1);
  });

  it("leaks no state from one run to the next", async () => {
    const code =
      "globalThis.runs = (globalThis.runs ?? 0) + 1; var seen = typeof leftover; globalThis.leftover = 1; runs === 1 && seen === 'undefined'";
    for (let i = 0; i < 4; i++) expect(ok(await run(code)).score).toBe(1);
  });

  it("gives the rule read-only inputs", async () => {
    expect(failed(await run("'use strict'; output = 'rewritten'; 1"))).toMatchObject({
      kind: "exception",
      message: expect.stringMatching(/'output' is read-only/),
    });
    // A rule may still shadow them with its own declarations.
    expect(ok(await run("let output = 'mine'; output === 'mine'")).score).toBe(1);
  });
});

describe("runJsRule as a function", () => {
  it("rejects limits a spec could not ask for", async () => {
    await expect(runJsRule({ code: "1", output: "" }, { sandbox, timeoutMs: 0 })).rejects.toThrow(
      InvalidJsRuleLimitsError,
    );
    await expect(runJsRule({ code: "1", output: "" }, { sandbox, memoryBytes: 2 ** 40 })).rejects.toThrow(
      /memoryBytes: .*, got 1099511627776/,
    );
  });

  it("rejects with the signal's reason when aborted, and the sandbox carries on", async () => {
    const aborted = new AbortController();
    aborted.abort(new Error("not needed"));
    await expect(runJsRule({ code: "1", output: "" }, { sandbox, signal: aborted.signal })).rejects.toThrow(
      "not needed",
    );

    const later = new AbortController();
    setTimeout(() => later.abort(new Error("cancelled")), 100);
    const started = performance.now();
    await expect(
      runJsRule({ code: "while (true) {}", output: "" }, { sandbox, timeoutMs: 30_000, signal: later.signal }),
    ).rejects.toThrow("cancelled");
    expect(performance.now() - started).toBeLessThan(SLACK_MS);
    expect(ok(await run("1")).score).toBe(1);
  });

  it("runs rules side by side on several workers", async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(`${i} / 10`)));
    expect(results.map((r) => ok(r).score)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5]);
    expect(sandbox.workerCount).toBeLessThanOrEqual(2);
  });

  it("reports a closed sandbox as unavailable rather than running anywhere else", async () => {
    const closed = new JsSandbox({ maxWorkers: 1 });
    await closed.close();
    expect(failed(await runJsRule({ code: "1", output: "" }, { sandbox: closed }))).toMatchObject({
      kind: "sandbox-unavailable",
    });
  });

  it("has an Effect form whose failures are tagged", async () => {
    const program = runJsRuleEffect({ code: "while (true) {}", output: "" }, { sandbox, timeoutMs: 100 }).pipe(
      Effect.map(() => "scored"),
      Effect.catchTag("JsRuleTimeoutError", (error) => Effect.succeed(`timed out: ${error.kind}`)),
    );
    expect(await Effect.runPromise(program)).toBe("timed out: timeout");
  });
});
