/**
 * A query as searches compare it: lower case, runs of whitespace as one space, trimmed. Candidate
 * lists drop repeats by it, and SFT matches a teacher's query to a candidate by it.
 */
export function queryKey(query: string): string {
  return query.toLowerCase().replace(/\s+/gu, " ").trim();
}
