// The packages as a downstream developer meets them: packs every published package (built
// beforehand), installs the tarballs with npm into scratch projects under the system temp dir, far
// from the workspace's node_modules, and uses them from ESM and from CommonJS.
//
//   pnpm run test:consumer            (pnpm test runs it after the build)
//   node scripts/consumer-test.mjs --keep   leaves the scratch projects behind for a look
//
// Projects: "all" (every package, installed as `npm i packed/*.tgz` installs them: README's ten lines as .mts and .cts type-checked by tsc and run,
// every `exports` door imported and required, the CLI's bin, a local GGUF model through the
// CommonJS build), "rules" (@rubric/core + @rubric/verifiers alone: rule-only scoreOutputs, no
// node-llama-cpp, a small tree), "providers" (@rubric/providers alone: llamaCpp names what to install).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { publishedPackages, removeDir, root, scratchProject, treeSize } from "./packed.mjs";

const keep = process.argv.includes("--keep");
// biome-ignore lint/suspicious/noUndeclaredEnvVars: not a turbo task; pnpm test runs this script itself
const shared = process.env["RUBRIC_SHARED_DIR"] ?? path.resolve(root, "..", "shared");
const modelPath = path.join(shared, "models", "stories260K.gguf");
/**
 * Ceiling for core + verifiers installed alone. They measure ≈50 MB, most of it `effect` (34 MB);
 * node-llama-cpp leaking back in as a dependency would add 83–730 MB.
 */
const RULES_TREE_LIMIT_MB = 80;

const scratch = [];
let current = "setup";

/** Runs one named step; a failure names the step, prints what it saw, and exits 1. */
async function step(name, fn) {
  current = name;
  const started = performance.now();
  const result = await fn();
  console.log(`  ok  ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

class StepFailure extends Error {}

function check(condition, message) {
  if (!condition) throw new StepFailure(message);
}

/** Runs a command; on a non-zero exit throws with its whole output. */
function run(command, args, cwd) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    throw new StepFailure(
      `\`${[command, ...args].join(" ")}\` in ${cwd} exited ${error.status}:\n${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
  }
}

/** `npm install` without blocking, so the scratch projects install side by side. */
function npmInstall(dir, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...args], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new StepFailure(`npm install in ${dir} exited ${code}:\n${output}`)),
    );
  });
}

function write(dir, file, text) {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

/** The README's "Ten lines of it" TypeScript block, verbatim. */
function readmeTenLines() {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  const block = /## Ten lines of it\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  check(block !== undefined, 'README.md has no "## Ten lines of it" section with a ```ts block');
  return block;
}

/** What the ten lines printed: the README's own line, then the checks' JSON line. */
function tenLinesPrinted(output) {
  const lines = output.trim().split("\n");
  check(
    lines[0] === "normalized 0.2500; with blame weighted 6: 0.0000",
    `the ten lines printed ${JSON.stringify(lines[0])}, not what the README says`,
  );
  return JSON.parse(lines.at(-1));
}

/** Every door of every package: `@rubric/x` and its `./sub` exports, data and wildcard doors left out. */
function doors() {
  const out = [];
  for (const [name, dir] of publishedPackages()) {
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    for (const [key, target] of Object.entries(manifest.exports)) {
      if (key.includes("*") || key.endsWith(".json") || typeof target === "string") continue;
      out.push(key === "." ? name : `${name}${key.slice(1)}`);
    }
  }
  return out;
}

/** A module that prints each door's export names as JSON; `.mts` imports them, `.cts` requires them. */
function doorsSource(specs) {
  const imports = specs.map((spec, i) => `import * as door${i} from ${JSON.stringify(spec)};`).join("\n");
  const entries = specs.map((spec, i) => `  ${JSON.stringify(spec)}: Object.keys(door${i}).sort(),`).join("\n");
  return `${imports}\n\nconsole.log(JSON.stringify({\n${entries}\n}));\n`;
}

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    types: ["node"],
    outDir: "out",
    rootDir: "src",
    // Our declarations are checked too, not only how they resolve.
    skipLibCheck: false,
  },
  include: ["src"],
};

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), "rubric-packed-"));
  scratch.push(work);
  // The command the README gives users (`pnpm pack:all <folder>`), run as they run it.
  const tarballs = await step("pnpm pack:all: every published package into one folder", () => {
    const printed = run(process.execPath, [path.join(root, "scripts/pack-all.mjs"), work], root);
    const rows = printed
      .split("\n")
      .map((line) => /^(@rubric\/\S+)\s+(\S+\.tgz)$/.exec(line.trim()))
      .filter((match) => match !== null);
    check(
      printed.includes(`npm i ${path.relative(root, work)}/*.tgz`),
      `pack:all did not print the install command:\n${printed}`,
    );
    return new Map(rows.map(([, name, file]) => [name, path.resolve(root, file)]));
  });
  check(tarballs.size === publishedPackages().size, `packed ${tarballs.size} of ${publishedPackages().size} packages`);

  const cli = JSON.parse(readFileSync(path.join(root, "packages/cli/package.json"), "utf8"));
  const llamaVersion = cli.dependencies["node-llama-cpp"];
  const llamaBinary = { linux: `linux-${process.arch}`, darwin: `mac-${process.arch}`, win32: `win-${process.arch}` }[
    process.platform
  ];
  const typesNode = JSON.parse(readFileSync(path.join(root, "packages/core/package.json"), "utf8")).devDependencies[
    "@types/node"
  ];

  // "all" and "rules" are installed as a user installs before publication (`npm i packed/*.tgz`,
  // or the tarballs one needs): no overrides, so a package whose `@rubric/*` range its sibling
  // tarball does not meet would be fetched from the registry, where it is not, and fail.
  const all = scratchProject([...tarballs.keys()], tarballs, {
    overrides: false,
    dependencies: {
      "@types/node": typesNode,
      // node-llama-cpp's prebuilt binary for this platform only (its optional deps hold every
      // platform's and GPU's builds, 730 MB), as TOOLCHAIN.md measured.
      ...(llamaBinary === undefined ? {} : { [`@node-llama-cpp/${llamaBinary}`]: llamaVersion }),
    },
  });
  const rules = scratchProject(["@rubric/core", "@rubric/verifiers"], tarballs, { overrides: false });
  const providers = scratchProject(["@rubric/providers"], tarballs);
  scratch.push(all, rules, providers);

  await step("npm install the tarballs into three scratch projects under the temp dir", () =>
    Promise.all([
      // No install scripts: the one that has one (node-llama-cpp) only re-checks the binary installed here.
      npmInstall(all, ["--omit=optional", "--ignore-scripts"]),
      npmInstall(rules),
      npmInstall(providers),
    ]),
  );

  // ---- all: ESM and CommonJS against every package ----
  const tenLines = readmeTenLines();
  const tenLinesChecks = `
if (score.normalized !== 0.25) throw new Error(\`README: score.normalized is \${score.normalized}, README says 0.25\`);
if (edited.normalized !== 0) throw new Error(\`README: reweight gave \${JSON.stringify(edited)}, README says 0\`);
console.log(JSON.stringify({ normalized: score.normalized, edited: edited.normalized }));
`;
  const specs = doors();
  write(all, "tsconfig.json", `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  write(all, "src/ten-lines.mts", tenLines + tenLinesChecks);
  write(all, "src/ten-lines.cts", tenLines + tenLinesChecks);
  write(all, "src/doors.mts", doorsSource(specs));
  write(all, "src/doors.cts", doorsSource(specs));
  write(
    all,
    "src/llama.cts",
    `import { llamaCpp } from "@rubric/providers";

// The CommonJS build loads ESM-only node-llama-cpp through a real import(), not require().
async function main(): Promise<void> {
  const model = llamaCpp({ modelPath: ${JSON.stringify(modelPath)}, threads: 1 });
  try {
    const response = await model.generate({ messages: [{ role: "user", content: "Once upon a time" }], maxTokens: 8, seed: 1 });
    const text = response.choices[0]?.text ?? "";
    if (response.usage.outputTokens < 1) throw new Error(\`no tokens generated: \${JSON.stringify(response)}\`);
    console.log(JSON.stringify({ outputTokens: response.usage.outputTokens, text }));
  } finally {
    await model.dispose();
  }
}
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`,
  );

  await step(
    "all: tsc (module nodenext) type-checks the README's ten lines as .mts and .cts, and every door both ways",
    () => run(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "."], all),
  );
  const tsOut = path.join(all, "out");
  await step("all: README's ten lines run as ESM (.mjs)", () => {
    const printed = tenLinesPrinted(run(process.execPath, ["ten-lines.mjs"], tsOut));
    check(printed.normalized === 0.25, `ESM ten lines printed ${JSON.stringify(printed)}`);
  });
  await step("all: README's ten lines run through require (.cjs)", () => {
    const emitted = readFileSync(path.join(tsOut, "ten-lines.cjs"), "utf8");
    check(emitted.includes('require("@rubric/core")'), `tsc did not emit a require() in ten-lines.cjs:\n${emitted}`);
    const printed = tenLinesPrinted(run(process.execPath, ["ten-lines.cjs"], tsOut));
    check(printed.normalized === 0.25, `CommonJS ten lines printed ${JSON.stringify(printed)}`);
  });
  await step(`all: every door (${specs.length}) gives the same exports to import and to require`, () => {
    const esm = JSON.parse(run(process.execPath, ["doors.mjs"], tsOut));
    const cjs = JSON.parse(run(process.execPath, ["doors.cjs"], tsOut));
    for (const spec of specs) {
      check(
        JSON.stringify(esm[spec]) === JSON.stringify(cjs[spec]),
        `${spec}: import gives [${esm[spec]}], require gives [${cjs[spec]}]`,
      );
    }
    check(esm["@rubric/core"].includes("scoreRubric"), "@rubric/core exports no scoreRubric");
  });
  await step("all: an error made by the CommonJS build passes the ESM build's isRubricError", () => {
    const script = `
import("@rubric/core").then((esm) => {
  const cjs = require("@rubric/providers");
  const error = new cjs.ProviderConfigError("x");
  if (!esm.isRubricError(error)) throw new Error("isRubricError(ESM) rejected a CommonJS-built error");
});`;
    run(process.execPath, ["-e", script], all);
  });
  await step("all: @rubric/report writes a page with its script, from import and from require", () => {
    // The page's browser script ships in dist/ beside the library: a tarball without it would
    // only fail when someone writes a report.
    const section = `{ kind: "scores", title: "t", source: "s", rubricKind: "flat", errorsAs: "fail", ignoreGates: false,
      rubric: { id: "r", criteria: [{ id: "a", text: "A", weight: 1, polarity: "reward", verifier: { kind: "includes", terms: ["a"] } }] },
      outputs: [{ id: "o", verdicts: [{ criterionId: "a", score: 1, status: "ok" }], recorded: { total: 1, normalized: 1 } }] }`;
    const verify = `if (!html.includes("__rubricReport") || html.length < 100000) throw new Error("report page without its script: " + html.length + " chars");`;
    run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { buildReport } from "@rubric/report"; const html = buildReport([${section}]); ${verify}`,
      ],
      all,
    );
    run(
      process.execPath,
      ["-e", `const { buildReport } = require("@rubric/report"); const html = buildReport([${section}]); ${verify}`],
      all,
    );
  });
  await step("all: the rubric bin runs", () => {
    const version = run(path.join(all, "node_modules/.bin/rubric"), ["--version"], all).trim();
    check(version === cli.version, `rubric --version printed ${JSON.stringify(version)}, package is ${cli.version}`);
  });
  await step("all: the CommonJS @rubric/providers runs llamaCpp on the shared GGUF model", () => {
    const built = readFileSync(path.join(all, "node_modules/@rubric/providers/dist/index.cjs"), "utf8");
    check(!/require\(["']node-llama-cpp["']\)/.test(built), "dist/index.cjs require()s node-llama-cpp");
    check(existsSync(modelPath), `no model at ${modelPath} (set RUBRIC_SHARED_DIR)`);
    const printed = JSON.parse(run(process.execPath, ["llama.cjs"], tsOut));
    check(printed.outputTokens >= 1, `llama printed ${JSON.stringify(printed)}`);
  });

  // ---- rules: core + verifiers alone ----
  write(
    rules,
    "rules.mjs",
    `import { parseFlatRubric } from "@rubric/core";
import { scoreOutputs } from "@rubric/verifiers";

const rubric = parseFlatRubric({
  id: "memo",
  criteria: [
    { id: "revenue", text: "Mentions revenue", weight: 2, verifier: { kind: "includes", terms: ["revenue"] } },
    { id: "short", text: "At most 12 words", weight: 1, verifier: { kind: "length", unit: "words", max: 12 } },
  ],
});
const results = await scoreOutputs(rubric, [
  { id: "both", input: "Summarise Q3", output: "Revenue rose 4%." },
  { id: "neither", input: "Summarise Q3", output: "Things went fine this quarter, more or less, as expected by most of the people involved." },
]);
console.log(JSON.stringify(Object.fromEntries(results.map((r) => [r.id, r.score?.normalized ?? null]))));
`,
  );
  await step("rules: a rule-only scoreOutputs with @rubric/core + @rubric/verifiers alone", () => {
    const printed = JSON.parse(run(process.execPath, ["rules.mjs"], rules));
    check(
      printed.both === 1 && printed.neither === 0,
      `rule scores were ${JSON.stringify(printed)}, want both 1, neither 0`,
    );
  });
  await step(
    `rules: no node-llama-cpp or @rubric/providers installed, node_modules under ${RULES_TREE_LIMIT_MB} MB`,
    () => {
      for (const name of ["node-llama-cpp", "@rubric/providers", "@huggingface/inference"]) {
        check(!existsSync(path.join(rules, "node_modules", name)), `${name} was installed with core + verifiers`);
      }
      const { bytes, packages } = treeSize(path.join(rules, "node_modules"));
      const mb = bytes / 1e6;
      console.log(`      node_modules: ${mb.toFixed(1)} MB, ${packages} packages`);
      check(
        mb < RULES_TREE_LIMIT_MB,
        `core + verifiers installed ${mb.toFixed(1)} MB (limit ${RULES_TREE_LIMIT_MB} MB)`,
      );
    },
  );

  await missingOnnxRuntime(all);

  // ---- providers alone: node-llama-cpp is an optional peer ----
  write(providers, "model.gguf", "not a model: llamaCpp must stop at the missing node-llama-cpp before reading it\n");
  const missingPeer = (load) => `${load}
const model = llamaCpp({ modelPath: "model.gguf", threads: 1 });
model.generate({ messages: [{ role: "user", content: "hi" }] }).then(
  () => { console.error("generate succeeded without node-llama-cpp"); process.exit(1); },
  (error) => {
    const ok = error instanceof ProviderConfigError && error.code === "provider.config" &&
      error.message.includes("npm install node-llama-cpp");
    if (!ok) { console.error("wrong error:", error); process.exit(1); }
    console.log(JSON.stringify({ name: error.name, message: error.message }));
  },
);`;
  write(
    providers,
    "missing-peer.mjs",
    missingPeer('import { llamaCpp, ProviderConfigError } from "@rubric/providers";'),
  );
  write(
    providers,
    "missing-peer.cjs",
    missingPeer('const { llamaCpp, ProviderConfigError } = require("@rubric/providers");'),
  );
  await step(
    "providers: llamaCpp without node-llama-cpp fails with ProviderConfigError saying what to install (ESM and CJS)",
    () => {
      check(
        !existsSync(path.join(providers, "node_modules/node-llama-cpp")),
        "npm installed the optional peer node-llama-cpp",
      );
      for (const file of ["missing-peer.mjs", "missing-peer.cjs"]) {
        const printed = JSON.parse(run(process.execPath, [file], providers));
        check(printed.name === "ProviderConfigError", `${file}: ${JSON.stringify(printed)}`);
      }
    },
  );
}

/** `RubricModel.load` in the "all" project, where the optional peer onnxruntime-node is not installed. */
async function missingOnnxRuntime(all) {
  const script = (load) => `${load}
RubricModel.load("models/mu").then(
  () => { console.error("RubricModel loaded without onnxruntime-node"); process.exit(1); },
  (error) => {
    const ok = error instanceof OnnxRuntimeMissingError && error.code === "arco.runtime-missing" &&
      error.message.includes("npm install onnxruntime-node");
    if (!ok) { console.error("wrong error:", error); process.exit(1); }
    console.log(JSON.stringify({ name: error.name }));
  },
);`;
  write(all, "missing-ort.mjs", script('import { RubricModel, OnnxRuntimeMissingError } from "@rubric/arco-heads";'));
  write(
    all,
    "missing-ort.cjs",
    script('const { RubricModel, OnnxRuntimeMissingError } = require("@rubric/arco-heads");'),
  );
  await step(
    "all: RubricModel without onnxruntime-node fails with OnnxRuntimeMissingError saying what to install (ESM and CJS)",
    () => {
      check(
        !existsSync(path.join(all, "node_modules/onnxruntime-node")),
        "npm installed the optional peer onnxruntime-node",
      );
      for (const file of ["missing-ort.mjs", "missing-ort.cjs"]) {
        const printed = JSON.parse(run(process.execPath, [file], all));
        check(printed.name === "OnnxRuntimeMissingError", `${file}: ${JSON.stringify(printed)}`);
      }
    },
  );
}

const started = performance.now();
console.log("consumer test: the packed packages installed with npm outside the workspace");
try {
  await main();
  console.log(`consumer test passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`\nconsumer test FAILED at step: ${current}`);
  console.error(error instanceof StepFailure ? error.message : error);
  if (!keep) console.error("(rerun with --keep to leave the scratch projects behind)");
  process.exitCode = 1;
} finally {
  if (keep) console.log(`scratch projects kept: ${scratch.join(" ")}`);
  else for (const dir of scratch) removeDir(dir);
}
