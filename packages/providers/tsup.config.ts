import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.base";

// `testing` is its own door: a local OpenAI-wire server for tests, never loaded by the main one.
export default defineConfig(libraryBuild({ index: "src/index.ts", testing: "src/testing/openai-chat-server.ts" }));
