// The layering rules `pnpm test` enforces (`pnpm deps`): no circles, no reaching into another
// package's files, and no arrow pointing up the layer diagram of docs/architecture.md.
//
// A package's source may import only the packages below it. Test files (`*.test.ts`), test
// fixtures and benches (`bench/`) may also use their package's devDependencies (e.g. verifiers' tests run a judge on a
// @rubric/providers model), so the layer rule skips them; the circle and internals rules do not.

/** Which workspace packages each package's source may import: the layer diagram. */
const LAYERS = {
  core: [],
  providers: ["core"],
  verifiers: ["core"],
  autointeract: ["core", "verifiers"],
  // The Python trainer's client: both papers' trainers (gspo, rlxar) train through it.
  sidecar: ["core"],
  gspo: ["core", "verifiers", "autointeract", "sidecar"],
  hackbench: ["core", "verifiers"],
  report: ["core"],
  "arco-heads": ["core"],
  // ARCO's branch: parallel to gspo (ARCANE's), never importing it.
  rlxar: ["core", "verifiers", "autointeract", "sidecar", "arco-heads"],
  // The papers' reproductions sit above every library they reproduce (ARCO's will use rlxar and arco-heads).
  repro: ["core", "verifiers", "autointeract", "sidecar", "gspo", "arco-heads", "rlxar"],
  cli: [
    "core",
    "providers",
    "verifiers",
    "autointeract",
    "sidecar",
    "gspo",
    "hackbench",
    "arco-heads",
    "rlxar",
    "repro",
    "report",
  ],
};
const ALL = Object.keys(LAYERS);
const TESTS = "(\\.test\\.ts$|/__fixtures__/)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A dependency circle: split the shared piece into its own module.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-package-internals",
      severity: "error",
      comment: "Import a sibling package through its public door (its name), never its files.",
      // Shared test fixtures (`src/__fixtures__/`) are the one exception: a test may reuse a
      // sibling's (the CLI's hackbench tests run on hackbench's gym samples).
      from: { path: "^packages/([^/]+)/" },
      to: { path: "^packages/[^/]+/src/", pathNot: ["^packages/$1/", "/__fixtures__/"] },
    },
    ...ALL.map((name) => ({
      name: `layer-${name}`,
      severity: "error",
      comment: `@rubric/${name} may import only: ${LAYERS[name].map((n) => `@rubric/${n}`).join(", ") || "no workspace package"}.`,
      from: { path: `^packages/${name}/src/`, pathNot: TESTS },
      // A workspace import resolves to the package's files (`packages/x/dist/…`, symlinks
      // followed) or, when the importer does not declare the dependency, stays `@rubric/x`.
      to: {
        path: "^(packages/[^/]+/|@rubric/)",
        pathNot: [`^(packages/|@rubric/)(${[name, ...LAYERS[name]].join("|")})(/|$)`],
      },
    })),
  ],
  options: {
    // Built files are kept as leaves (a workspace import resolves to them) but not crawled.
    doNotFollow: { path: ["node_modules", "/dist/"] },
    exclude: { path: ["/bench/\\.build/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "default"],
      extensions: [".ts", ".js", ".json"],
    },
    combinedDependencies: false,
  },
};
