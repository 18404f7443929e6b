#!/usr/bin/env node
import { runCli } from "./cli.js";

// A reader that goes away (`rubric … | head`) is not a failure of the command: stop quietly, as
// Unix tools do, instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await runCli(
  process.argv.slice(2),
  { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
  { isTTY: process.stderr.isTTY === true },
);
