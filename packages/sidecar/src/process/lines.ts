/**
 * Splits a stream into lines without ever holding more than `maxBytes` of one: a longer line is
 * reported once (`overflow`) and skipped up to its newline. `readline` would buffer it whole (a
 * 537 MB line once did).
 */
export function readBoundedLines(
  stream: NodeJS.ReadableStream,
  maxBytes: number,
  on: { readonly line: (line: string) => void; readonly overflow: () => void },
): void {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  stream.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      if (!skipping && size + piece.length <= maxBytes)
        on.line(
          Buffer.concat([...parts, piece])
            .toString("utf8")
            .replace(/\r$/, ""),
        );
      else if (!skipping) on.overflow();
      parts = [];
      size = 0;
      skipping = false;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (skipping || rest.length === 0) return;
    if (size + rest.length > maxBytes) {
      skipping = true;
      parts = [];
      size = 0;
      on.overflow();
      return;
    }
    parts.push(rest);
    size += rest.length;
  });
}
