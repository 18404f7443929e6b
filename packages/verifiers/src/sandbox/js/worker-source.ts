/**
 * The program each sandbox worker thread runs, as CommonJS source for `new Worker(src, { eval: true })`.
 *
 * Why a string: the package is bundled into one `dist/index.js`, and under vitest the sources are
 * TypeScript that a bare worker thread cannot load, so a separate worker file would exist in
 * neither place. The string is deliberately dumb — it drives QuickJS and reports what happened;
 * every decision about what an outcome means is made in typed code on the host side
 * (`run-js-rule.ts`), and every reply is checked there against `WorkerReplySchema`.
 *
 * One job at a time, each in a fresh QuickJS runtime and context that are disposed afterwards.
 * The WebAssembly instance under them (the "engine") is kept between jobs and replaced when it
 * cannot be trusted: after the host side of QuickJS threw (V8's own stack overflowing inside a
 * deeply nested parse leaves it half-unwound), after a leak it cannot clean up, or when an
 * earlier rule grew its heap past what the next rule may use.
 */
export const QUICKJS_WORKER_SOURCE = /* js */ `
"use strict";
const { readFileSync } = require("node:fs");
const { dirname } = require("node:path");
const { parentPort, workerData } = require("node:worker_threads");
const { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } = require(workerData.quickjsEntry);
const { initialHeapBytes, stackBytes, headroomBytes, maxTextChars } = workerData;

const PAGE_BYTES = 65536;
// Compiled once per worker; a new instance of it takes a few milliseconds.
const wasmPath = require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm", { paths: [dirname(workerData.quickjsEntry)] });
const wasmModule = new WebAssembly.Module(readFileSync(wasmPath));

// In WebAssembly builds QuickJS's own memory limit refuses only single allocations larger than
// the limit: it counts every block as 0 bytes, having no malloc_usable_size there (see
// quickjs-emscripten issues #255 and #271). What does bound a rule is the heap itself, which
// Emscripten's allocator grows through the Memory's grow method; refusing to grow makes malloc
// return NULL, which QuickJS reports as "InternalError: out of memory". (The glue of the pinned
// quickjs-emscripten 0.32.0 calls wasmMemory.grow(); run-js-rule.test.ts checks the limit holds.)
function newEngine() {
  const engine = { heapLimitBytes: Infinity, heapExhausted: false, retired: false };
  const memory = new WebAssembly.Memory({ initial: initialHeapBytes / PAGE_BYTES, maximum: 32768 });
  const grow = memory.grow;
  memory.grow = function (pages) {
    if (this.buffer.byteLength + pages * PAGE_BYTES > engine.heapLimitBytes) {
      engine.heapExhausted = true;
      throw new RangeError("over the rule's memory limit");
    }
    return grow.call(this, pages);
  };
  engine.memory = memory;
  // Emscripten prints aborts to stderr; they reach the host as the thrown RuntimeError instead.
  const quiet = { print: () => undefined, printErr: () => undefined };
  const variant = newVariant(RELEASE_SYNC, { wasmModule: wasmModule, wasmMemory: memory, emscriptenModule: quiet });
  return newQuickJSWASMModuleFromVariant(variant).then((module) => {
    engine.module = module;
    return engine;
  });
}

// Runs in the VM before the rule. The rule sees the data as read-only globals and as the one
// argument of evaluate(); configurable so that a rule may still declare its own "let output".
// LLM-written rules call console.log, which QuickJS lacks: it is a silent no-op rather than a
// ReferenceError. Math.random is a fixed-seed xorshift, so a rule's verdict is reproducible
// (and cacheable) run after run.
// The texts go in as strings rather than JSON, which QuickJS would parse slowly for a long output.
const PRELUDE = '(function (input, output, filesJson) {\\n' +
  '  "use strict";\\n' +
  '  const files = Object.freeze(JSON.parse(filesJson).map((file) => Object.freeze(file)));\\n' +
  '  const args = Object.freeze({ input: input, output: output, files: files });\\n' +
  '  for (const key of ["input", "output", "files"])\\n' +
  '    Object.defineProperty(globalThis, key, { value: args[key], writable: false, enumerable: false, configurable: true });\\n' +
  '  const quiet = () => undefined;\\n' +
  '  Object.defineProperty(globalThis, "console", { value: Object.freeze({ log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet }), writable: true, enumerable: false, configurable: true });\\n' +
  '  let state = 0x9e3779b9;\\n' +
  '  Math.random = function random() { state ^= state << 13; state ^= state >>> 17; state ^= state << 5; return (state >>> 0) / 4294967296; };\\n' +
  '  return args;\\n' +
  '})';
// Copies a returned object's score and rationale into a plain object, and cuts long strings
// before they are copied out of the VM. Run in the VM, so that a getter or Proxy trap that throws
// is the rule's exception, and the copy has no getters left.
const READER = '(function (value) {\\n' +
  '  const clip = (text) => (typeof text === "string" && text.length > ' + maxTextChars + ' ? text.slice(0, ' + maxTextChars + ') + "…" : text);\\n' +
  '  return value !== null && typeof value === "object" ? { score: value.score, rationale: clip(value.rationale) } : clip(value);\\n' +
  '})';
// A separate script sees the rule's global lexical scope, so "const evaluate = ..." is found too.
const LOOKUP = 'typeof evaluate === "function" ? evaluate : undefined';

function clip(text) {
  return text.length > maxTextChars ? text.slice(0, maxTextChars) + "…" : text;
}

/** A primitive as itself; anything else as { type } so the host can say what it got. */
function leaf(context, handle) {
  const type = context.typeof(handle);
  if (type === "number") return { type: type, value: context.getNumber(handle) };
  if (type === "string") return { type: type, value: clip(context.getString(handle)) };
  if (type === "boolean") return { type: type, value: context.dump(handle) === true };
  if (type === "object" && context.sameValue(handle, context.null)) return { type: "null" };
  return { type: type };
}

/** A plain { score, rationale } object (made by READER) as host values: no JSON, so NaN stays NaN. */
function describeCopy(context, copy) {
  const score = context.getProp(copy, "score");
  const rationale = context.getProp(copy, "rationale");
  try {
    return { type: "object", score: leaf(context, score), rationale: leaf(context, rationale) };
  } finally {
    score.dispose();
    rationale.dispose();
  }
}

function describeThrown(context, handle) {
  try {
    const dumped = context.dump(handle);
    if (dumped !== null && typeof dumped === "object" && typeof dumped.message === "string") {
      const thrown = { message: clip(dumped.message) };
      if (typeof dumped.name === "string") thrown.name = dumped.name;
      if (typeof dumped.stack === "string" && dumped.stack !== "") thrown.stack = clip(dumped.stack);
      return thrown;
    }
    const text = typeof dumped === "string" ? dumped : JSON.stringify(dumped);
    return { message: clip(text === undefined ? String(dumped) : text) };
  } catch (error) {
    return { message: "a thrown value that could not be read" };
  }
}

function isPromise(context, handle) {
  const state = context.getPromiseState(handle);
  if (state.notAPromise) return false;
  // A settled promise's state comes with a new handle to its result, which we do not want yet.
  if (state.type === "fulfilled") state.value.dispose();
  if (state.type === "rejected") state.error.dispose();
  return true;
}

function runJob(engine, job) {
  let interrupted = false;
  const runtime = engine.module.newRuntime();
  const context = runtime.newContext();
  const handles = [];
  const own = (handle) => (handles.push(handle), handle);
  // The rule is over: room, so that reading its result or error cannot run out of memory. The
  // allocator grows the heap by at least 5% (and tries 20% first), so a fixed margin is not enough.
  const relax = () => {
    engine.heapLimitBytes = Math.max(engine.heapLimitBytes, engine.memory.buffer.byteLength) * 1.25 + headroomBytes;
    runtime.setMemoryLimit(job.memoryBytes + headroomBytes);
  };
  const threw = (phase, handle) => {
    own(handle);
    if (interrupted) return { type: "timeout" };
    relax();
    // Out of heap, QuickJS may throw null: it had no memory left to build the error.
    const outOfMemory = engine.heapExhausted;
    const error = describeThrown(context, handle);
    // Reading the thrown value can run the rule's getters, which may spin until the deadline.
    return interrupted ? { type: "timeout" } : { type: "threw", phase: phase, error: error, outOfMemory: outOfMemory };
  };

  runtime.setMaxStackSize(stackBytes);
  const prelude = own(context.unwrapResult(context.evalCode(PRELUDE, "<prelude>", { type: "global", strict: true })));
  const texts = [job.input, job.output, JSON.stringify(job.files)].map((text) => own(context.newString(text)));
  const args = own(context.unwrapResult(context.callFunction(prelude, context.undefined, texts)));
  const reader = own(context.unwrapResult(context.evalCode(READER, "<reader>", { type: "global", strict: true })));
  // Set after the prelude, which is ours and must not fail: the limits bind the rule alone, though
  // the inputs it was handed count against its memory.
  runtime.setMemoryLimit(job.memoryBytes);
  engine.heapLimitBytes = Math.max(engine.memory.buffer.byteLength, initialHeapBytes + job.memoryBytes);
  engine.heapExhausted = false;
  runtime.setInterruptHandler(() => {
    if (Date.now() < job.deadline) return false;
    interrupted = true;
    return true;
  });

  const outcome = (() => {
    const compiled = context.evalCode(job.code, "rule.js", { type: "global", compileOnly: true });
    if (compiled.error) return threw("compile", compiled.error);
    compiled.value.dispose();
    const completion = context.evalCode(job.code, "rule.js", { type: "global" });
    if (completion.error) return threw("run", completion.error);
    own(completion.value);
    const lookup = context.evalCode(LOOKUP, "<lookup>", { type: "global" });
    if (lookup.error) return threw("run", lookup.error);
    const evaluate = own(lookup.value);
    let value = completion.value;
    let form = "expression";
    if (context.typeof(evaluate) === "function") {
      form = "function";
      const call = context.callFunction(evaluate, context.undefined, args);
      if (call.error) return threw("run", call.error);
      value = own(call.value);
    }
    if (isPromise(context, value)) {
      // No timers or I/O exist in here, so a promise is settled once the job queue is empty, or never.
      const jobs = runtime.executePendingJobs();
      if (jobs.error && jobs.error.context !== context) {
        // quickjs-emscripten sometimes reports an interrupted job under a context pointer it does
        // not know; the error then cannot be freed, so this engine is dropped uncleaned.
        engine.retired = true;
        return interrupted ? { type: "timeout" } : { type: "crashed", message: "a promise job failed in an unknown context" };
      }
      if (jobs.error) return threw("run", jobs.error);
      const settled = context.getPromiseState(value);
      if (settled.type === "pending") return interrupted ? { type: "timeout" } : { type: "pending", form: form };
      if (settled.type === "rejected") return threw("run", settled.error);
      value = own(settled.value);
    }
    if (interrupted) return { type: "timeout" };
    relax();
    const isObject = leaf(context, value).type === "object";
    const copied = context.callFunction(reader, context.undefined, value);
    if (copied.error) return threw("run", copied.error);
    const returned = isObject ? describeCopy(context, own(copied.value)) : leaf(context, own(copied.value));
    return interrupted ? { type: "timeout" } : { type: "returned", form: form, value: returned };
  })();

  engine.heapLimitBytes = Infinity;
  if (engine.retired) return outcome;
  try {
    for (const handle of handles.reverse()) if (handle.alive) handle.dispose();
    context.dispose();
    runtime.dispose();
  } catch (error) {
    // The outcome stands; the engine does not. QuickJS can leak an object when an interrupt lands
    // inside a promise job, and then aborts on freeing the runtime.
    engine.retired = true;
  }
  return outcome;
}

let engine = newEngine();

engine.then(() => {
  parentPort.on("message", async (job) => {
    let current = await engine;
    // A heap grown past this rule's allowance would hand it the space earlier rules freed.
    if (current.retired || current.memory.buffer.byteLength > initialHeapBytes + job.memoryBytes) {
      engine = newEngine();
      current = await engine;
    }
    const started = performance.now();
    let outcome;
    try {
      outcome = runJob(current, job);
    } catch (error) {
      current.retired = true;
      outcome = { type: "crashed", message: clip(String(error && error.stack ? error.stack : error)) };
    }
    parentPort.postMessage({ type: "done", outcome: outcome, durationMs: performance.now() - started });
  });
  parentPort.postMessage({ type: "ready" });
});
`;
