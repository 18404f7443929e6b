/**
 * What an edit changed, as one span: everything between the longest common prefix and the
 * longest common suffix of the two texts. For an appended block that is the block itself.
 *
 * @example
 * changedSpan("Revenue rose.", "Revenue rose.\n\nKeywords: revenue.\n"); // { removed: "", added: "\n\nKeywords: revenue.\n" }
 */
export function changedSpan(before: string, after: string): { readonly removed: string; readonly added: string } {
  let start = 0;
  const limit = Math.min(before.length, after.length);
  while (start < limit && before[start] === after[start]) start++;
  let end = 0;
  while (end < limit - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { removed: before.slice(start, before.length - end), added: after.slice(start, after.length - end) };
}
