import { GdpvalDataError, type GdpvalTask } from "./tasks.js";

/** A task id or prefix that names no task of the pool searched. */
export class GdpvalTaskNotFoundError extends GdpvalDataError {
  override readonly name: string = "GdpvalTaskNotFoundError";
  override readonly code: `gdpval.${string}` = "gdpval.task-not-found";
  constructor(
    /** What was looked for: a whole id or a prefix of one. */
    readonly query: string,
    message: string,
  ) {
    super(message);
  }
}

/** A prefix shared by several task ids; `candidates` are all of them, in pool order. */
export class GdpvalTaskAmbiguousError extends GdpvalDataError {
  override readonly name: string = "GdpvalTaskAmbiguousError";
  override readonly code: `gdpval.${string}` = "gdpval.task-ambiguous";
  constructor(
    readonly query: string,
    readonly candidates: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

/** How many candidate ids an ambiguity message names before "…"; `candidates` holds them all. */
const NAMED = 5;

/**
 * The task named by a whole id or by a unique prefix of one (ids are UUIDs: the first 8 characters
 * almost always name a task, which is what people type). A whole id wins even when it is also a
 * prefix of another id.
 *
 * `tasks` may be any records that carry a task (GDPval examples, their `task`); `pool` names what
 * was searched in the messages ("eval" gives "no GDPval eval task …").
 *
 * @example
 * const gdpval = await loadGdpval("../shared/data/gdpval");
 * findGdpvalTask(gdpval.eval, "b57efde3", { pool: "eval" }).task.task_id; // "b57efde3-…"
 * @throws GdpvalTaskNotFoundError when no id starts with `idOrPrefix`.
 * @throws GdpvalTaskAmbiguousError when several do, naming them.
 */
export function findGdpvalTask<T extends GdpvalTask | { readonly task: GdpvalTask }>(
  tasks: readonly T[],
  idOrPrefix: string,
  options: { readonly pool?: string } = {},
): T {
  const idOf = (t: T) => ("task" in t ? t.task.task_id : t.task_id);
  const what = options.pool === undefined ? "GDPval task" : `GDPval ${options.pool} task`;
  // An empty prefix would match every task: it is a mistake, not a request for the first one.
  if (idOrPrefix === "") throw new GdpvalTaskNotFoundError(idOrPrefix, `an empty string names no ${what}`);
  const exact = tasks.find((t) => idOf(t) === idOrPrefix);
  if (exact) return exact;
  const matches = tasks.filter((t) => idOf(t).startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new GdpvalTaskNotFoundError(idOrPrefix, `no ${what} has an id starting with ${JSON.stringify(idOrPrefix)}`);
  const candidates = matches.map(idOf);
  throw new GdpvalTaskAmbiguousError(
    idOrPrefix,
    candidates,
    `${JSON.stringify(idOrPrefix)} is a prefix of ${candidates.length} ${what} ids (${candidates.slice(0, NAMED).join(", ")}${candidates.length > NAMED ? ", …" : ""}); give more of it`,
  );
}
