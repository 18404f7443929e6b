import { type InputFileOptions, openInputFile, unreadableError } from "./open.js";

/**
 * The bytes of an input file, chunk by chunk, for a file read in one pass without being held
 * whole (hashed, or cut into lines): a regular file only, checked before anything is read, and
 * not a link when links are refused. The file is closed when the loop ends, early or not.
 *
 * @example
 * const hash = createHash("sha256");
 * for await (const chunk of readInputChunks("models/mu/v3/score.onnx", { symlinks: "refuse" })) hash.update(chunk);
 */
export async function* readInputChunks(path: string, options: InputFileOptions = {}): AsyncGenerator<Buffer> {
  const { handle } = await openInputFile(path, options);
  try {
    for (;;) {
      // A fresh buffer each time: a caller may keep the chunks it was given (lines in flight do).
      const buffer = Buffer.allocUnsafe(1 << 20);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, buffer.length, null));
      } catch (error) {
        throw unreadableError(path, error);
      }
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
