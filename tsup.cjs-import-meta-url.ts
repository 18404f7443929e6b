// Injected into every CommonJS bundle by tsup.base.ts, which defines `import.meta.url` as this
// value. pathToFileURL percent-encodes the path (spaces, `#`, `?`), which `file:${__filename}` does not.
declare const __filename: string;
declare const require: (id: "node:url") => typeof import("node:url");

const fileUrl = (): string => require("node:url").pathToFileURL(__filename).href;

// Pure, and the module lookup inside the function: a bundle that never reads import.meta.url drops it all.
export const __rubricImportMetaUrl = /* @__PURE__ */ fileUrl();
