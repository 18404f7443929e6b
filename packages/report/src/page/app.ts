/*
 * The report page's script, bundled for the browser with @rubric/core by the build and inlined into
 * every report. It reads the data the report holds, renders each section, and recomputes every
 * total with core's `scoreRubric` whenever a weight moves: the same function `rubric score` uses,
 * so the page and the command cannot disagree. Text from the data (criteria, rationales, ids) is
 * only ever set as text, never parsed as HTML: rationales come from models.
 */
import { scoreRubric, type RubricScore, type Verdict } from "@rubric/core";
import type { DocumentSection } from "../document/document.js";
import type { ReportData } from "../html/build.js";
import type { ReportOutput, ScoresSection } from "../scores/scores.js";

/** How many ranked outputs are drawn at once (all are scored); "show all" draws the rest. */
const SHOWN = 500;

type Scored = { readonly output: ReportOutput; readonly score: RubricScore | null; readonly error?: string };

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; testid?: string; attrs?: Record<string, string> } = {},
  ...children: (Node | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  if (props.testid) node.dataset["testid"] = props.testid;
  for (const [k, v] of Object.entries(props.attrs ?? {})) node.setAttribute(k, v);
  for (const child of children) if (child) node.append(child);
  return node;
}

const fmt = (x: number | null, digits = 4) => (x === null ? "—" : Number.isFinite(x) ? x.toFixed(digits) : String(x));

/** A criterion as the weight panel shows it. */
interface CriterionRow {
  readonly id: string;
  readonly text: string;
  readonly weight: number;
  readonly penalty: boolean;
  readonly stage?: string;
}

function criteriaOf(section: ScoresSection): CriterionRow[] {
  const rubric = section.rubric;
  if ("stages" in rubric)
    return rubric.stages.flatMap((stage) =>
      stage.rules.map((rule) => ({
        id: rule.id,
        text: `${rule.name}${rule.description ? ` — ${rule.description}` : ""}`,
        weight: rule.weight,
        penalty: false,
        stage: stage.name,
      })),
    );
  return rubric.criteria.map((c) => ({ id: c.id, text: c.text, weight: c.weight, penalty: c.polarity === "penalty" }));
}

function scoreAll(section: ScoresSection, weights: Record<string, number>): Scored[] {
  const options = { errorsAs: section.errorsAs, ignoreGates: section.ignoreGates, weights };
  const scored = section.outputs.map((output): Scored => {
    try {
      return { output, score: scoreRubric(section.rubric, output.verdicts as Verdict[], options) };
    } catch (error) {
      // Under errorsAs "fail" an output with an error verdict has no score: shown as unscored, never as 0.
      return { output, score: null, error: (error as Error).message };
    }
  });
  return scored.sort((a, b) => {
    if (a.score === null || b.score === null)
      return a.score === b.score ? a.output.id.localeCompare(b.output.id) : a.score === null ? 1 : -1;
    return (
      b.score.normalized - a.score.normalized || b.score.total - a.score.total || a.output.id.localeCompare(b.output.id)
    );
  });
}

/** What was scored, as text (never markup): the input, the output and its files' names. */
function scoredText(output: ReportOutput): HTMLElement | null {
  if (output.output === undefined) return null;
  const box = el("div", { className: "scored-text" });
  if (output.input !== undefined && output.input !== "")
    box.append(
      el("div", { className: "muted", text: "input" }),
      el("pre", { testid: "input-text", text: output.input }),
    );
  box.append(
    el("div", { className: "muted", text: "output" }),
    el("pre", { testid: "output-text", text: output.output }),
  );
  if (output.files !== undefined && output.files.length > 0)
    box.append(el("p", { className: "muted", text: `files: ${output.files.join(", ")}` }));
  return box;
}

/**
 * Pass or fail of one verdict, for its colour: a reward criterion passes at a score of at least
 * half, a penalty criterion when it scores below half (it did not fire). Errors and skips are neither.
 */
function verdictClass(verdict: ReportOutput["verdicts"][number] | undefined, penalty: boolean): string {
  if (verdict?.status !== "ok" || verdict.score === null) return "";
  return verdict.score >= 0.5 !== penalty ? "pass" : "fail";
}

function details(item: Scored, criteria: readonly CriterionRow[]): HTMLElement {
  const box = el("div", {}, scoredText(item.output));
  const score = item.score;
  if (score === null) box.append(el("p", { className: "unscored", text: `Unscored: ${item.error ?? "no score"}` }));
  if (score?.kind === "staged") {
    const stages = el("table", {}, el("thead", {}, row(["stage", "points", "max", "pass mark", "passed"], "th")));
    const body = el("tbody");
    for (const s of score.stages)
      body.append(
        row([s.name, fmt(s.score, 2), fmt(s.maxPoints, 2), fmt(s.minScoreToPass, 2), s.passed ? "yes" : "no"]),
      );
    stages.append(body);
    box.append(stages);
    if (score.stoppedAt !== null)
      box.append(
        el("p", {
          className: "gate",
          testid: "gate",
          text: `Stopped at stage “${score.stoppedAt}”: it scored below its pass mark and its gate ends scoring; later stages were not counted.`,
        }),
      );
  }
  const verdicts = new Map(item.output.verdicts.map((v) => [v.criterionId, v]));
  const results = new Map((score?.criteria ?? []).map((c) => [c.criterionId, c]));
  const table = el(
    "table",
    {},
    el("thead", {}, row(["criterion", "status", "verdict", "weight", "contribution", "rationale / error"], "th")),
  );
  const body = el("tbody");
  for (const c of criteria) {
    const v = verdicts.get(c.id);
    const r = results.get(c.id);
    const status = v?.status ?? "not verified";
    const tr = el(
      "tr",
      { attrs: { "data-criterion": c.id } },
      el("td", { text: c.id, className: c.penalty ? "penalty" : "" }),
      el("td", { text: status, className: `status-${status}` }),
      // An error verdict has no score: it is shown as an error, never as 0.
      el("td", { className: `num ${verdictClass(v, c.penalty)}`, text: v?.status === "ok" ? fmt(v.score, 3) : "—" }),
      el("td", { className: "num", text: fmt(r?.weight ?? null, 3) }),
      el("td", { className: "num", text: r?.counted ? fmt(r.contribution, 4) : "—" }),
      el("td", { className: "rationale", text: v?.status === "error" ? (v.error ?? "error") : (v?.rationale ?? "") }),
    );
    body.append(tr);
  }
  table.append(body);
  box.append(table);
  return box;
}

function row(cells: readonly string[], tag: "td" | "th" = "td"): HTMLTableRowElement {
  const tr = el("tr");
  for (const c of cells) tr.append(el(tag, { text: c }));
  return tr;
}

function renderScores(section: ScoresSection, index: number): HTMLElement {
  const criteria = criteriaOf(section);
  const defaults = Object.fromEntries(criteria.map((c) => [c.id, c.weight]));
  const weights: Record<string, number> = { ...defaults };
  const open = new Set<string>();
  let showAll = false;

  const root = el("section", { attrs: { "data-section": String(index) } });
  root.append(
    el("h2", { text: section.title }),
    el("p", {
      className: "muted",
      text: `${section.outputs.length.toLocaleString("en")} outputs · ${criteria.length} criteria · errors as “${section.errorsAs}”${section.ignoreGates ? " · gates ignored" : ""} · from ${section.source}`,
    }),
  );

  // Weights: one control per criterion; every change rescores every output at once.
  const weightBody = el("tbody");
  const inputs = new Map<string, HTMLInputElement[]>();
  for (const c of criteria) {
    const number = el("input", {
      testid: "weight",
      attrs: { type: "number", min: "0", step: "0.1", "aria-label": `weight of ${c.id}` },
    });
    const range = el("input", {
      attrs: {
        type: "range",
        min: "0",
        max: String(Math.max(5, 2 * c.weight)),
        step: "0.1",
        "aria-label": `weight of ${c.id} (slider)`,
      },
    });
    number.value = String(c.weight);
    range.value = String(c.weight);
    const set = (value: string, from: HTMLInputElement) => {
      const w = Number(value);
      // A weight is ≥ 0: a complete number below it is refused where it was typed, and the
      // weight in use stays (the box says so); a half-typed one ("", "-") waits for the rest.
      const refused = value.trim() !== "" && Number.isFinite(w) && w < 0;
      from.setCustomValidity(refused ? `a weight is ≥ 0; ${c.id} stays at ${weights[c.id]}` : "");
      from.classList.toggle("invalid", refused);
      from.title = refused ? `a weight is ≥ 0; ${c.id} stays at ${weights[c.id]}` : "";
      if (!(w >= 0) || !Number.isFinite(w)) return;
      weights[c.id] = w;
      for (const other of [number, range]) if (other !== from) other.value = String(w);
      tr.classList.toggle("changed", w !== defaults[c.id]);
      schedule();
    };
    number.addEventListener("input", () => set(number.value, number));
    range.addEventListener("input", () => set(range.value, range));
    inputs.set(c.id, [number, range]);
    const tr = el(
      "tr",
      { attrs: { "data-criterion": c.id } },
      el("td", { text: c.id, className: c.penalty ? "penalty" : "" }),
      el("td", { text: `${c.stage ? `[${c.stage}] ` : ""}${c.text}${c.penalty ? " (penalty)" : ""}` }),
      el("td", {}, number, range),
    );
    weightBody.append(tr);
  }
  const reset = el("button", { text: "Reset weights", testid: "reset-weights" });
  reset.addEventListener("click", () => {
    for (const c of criteria) {
      weights[c.id] = c.weight;
      for (const input of inputs.get(c.id)!) input.value = String(c.weight);
    }
    for (const tr of weightBody.querySelectorAll("tr")) tr.classList.remove("changed");
    schedule();
  });
  const exportButton = el("button", { text: "Export weights", testid: "export-weights" });
  exportButton.addEventListener("click", () => {
    // The file `rubric score --weights` reads: {"weights": {criterionId: weight}}.
    const blob = new Blob([`${JSON.stringify({ weights }, null, 2)}\n`], { type: "application/json" });
    const a = el("a", { attrs: { href: URL.createObjectURL(blob), download: "weights.json" } });
    document.body.append(a);
    a.click();
    a.remove();
  });
  const weightPanel = el(
    "div",
    { className: "weights" },
    el("h3", { text: "Weights" }),
    el("p", {
      className: "muted",
      text: "Move a weight: every total and the ranking are recomputed here, with no verifier called again.",
    }),
    reset,
    exportButton,
    el("table", {}, el("thead", {}, row(["criterion", "text", "weight"], "th")), weightBody),
  );

  const rankingBody = el("tbody");
  const note = el("p", { className: "muted", testid: "ranking-note" });
  const hasText = section.outputs.some((o) => o.output !== undefined);
  // Search: an output is shown when its id or (when the results carry it) its text holds the query.
  const search = el("input", {
    testid: "search",
    attrs: {
      type: "search",
      placeholder: hasText ? "search ids and text" : "search ids",
      "aria-label": "search outputs",
    },
  });
  const show = el(
    "select",
    { testid: "show", attrs: { "aria-label": "which outputs" } },
    el("option", { text: "all outputs", attrs: { value: "all" } }),
    el("option", { text: "scored", attrs: { value: "scored" } }),
    el("option", { text: "unscored", attrs: { value: "unscored" } }),
  );
  search.addEventListener("input", () => schedule());
  show.addEventListener("change", () => schedule());
  // Two outputs ticked are compared side by side, criterion by criterion.
  const compared: string[] = [];
  const comparePanel = el("div", { testid: "compare", className: "compare" });
  const more = el("button", { text: "Show all", testid: "show-all" });
  more.addEventListener("click", () => {
    showAll = true;
    render();
  });
  const rankingPanel = el(
    "div",
    {},
    el("h3", { text: "Ranking" }),
    el("div", { className: "filters" }, search, show),
    note,
    // The ranking scrolls sideways in a narrow window rather than widening the page past it.
    el(
      "div",
      { className: "scroll" },
      el(
        "table",
        { testid: "ranking" },
        el(
          "thead",
          {},
          row(["compare", "#", "output", ...(hasText ? ["text"] : []), "total", "normalized", "errors"], "th"),
        ),
        rankingBody,
      ),
    ),
    more,
    comparePanel,
  );
  root.append(el("div", { className: "layout" }, weightPanel, rankingPanel));

  /** Two ticked outputs side by side: their text, totals and every criterion's verdict. */
  function renderCompare(ranked: readonly Scored[]) {
    const pair = compared.map((id) => ranked.find((item) => item.output.id === id)).filter((x) => x !== undefined);
    if (pair.length < 2) {
      comparePanel.replaceChildren(
        el("p", {
          className: "muted",
          text: pair.length === 1 ? `Tick one more output to compare with ${pair[0]!.output.id}.` : "",
        }),
      );
      return;
    }
    const [a, b] = pair as [Scored, Scored];
    comparePanel.replaceChildren(
      el("h3", { text: `Compare ${a.output.id} and ${b.output.id}` }),
      ...sideBySide([a, a.output.id], [b, b.output.id], criteria),
    );
  }

  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render();
    });
  }

  function render() {
    const started = performance.now();
    const ranked = scoreAll(section, weights);
    const query = search.value.trim().toLowerCase();
    const scored = ranked.filter(
      ({ output, score }) =>
        (show.value === "all" || (show.value === "scored") === (score !== null)) &&
        (query === "" ||
          output.id.toLowerCase().includes(query) ||
          (output.output ?? "").toLowerCase().includes(query) ||
          (output.input ?? "").toLowerCase().includes(query)),
    );
    const shown = showAll ? scored : scored.slice(0, SHOWN);
    const fragment = document.createDocumentFragment();
    const columns = hasText ? 7 : 6;
    const rankOf = new Map(ranked.map((item, i) => [item, i]));
    shown.forEach((item) => {
      const rank = rankOf.get(item)!;
      const tick = el("input", {
        testid: "compare-tick",
        attrs: { type: "checkbox", "aria-label": `compare ${item.output.id}` },
      });
      tick.checked = compared.includes(item.output.id);
      tick.addEventListener("click", (event) => {
        event.stopPropagation();
        const at = compared.indexOf(item.output.id);
        if (at >= 0) compared.splice(at, 1);
        else {
          compared.push(item.output.id);
          if (compared.length > 2) compared.shift();
        }
        render();
      });
      const preview = (item.output.output ?? "").replace(/\s+/g, " ");
      const tr = el(
        "tr",
        { className: "output", attrs: { "data-output-id": item.output.id } },
        el("td", {}, tick),
        el("td", { className: "num", text: String(rank + 1) }),
        el("td", { text: item.output.id }),
        hasText
          ? el("td", { className: "preview", text: preview.length > 80 ? `${preview.slice(0, 79)}…` : preview })
          : null,
        el("td", {
          className: `num${item.score === null ? " unscored" : ""}`,
          testid: "total",
          text: item.score === null ? "unscored" : fmt(item.score.total),
        }),
        el("td", {
          className: "num",
          testid: "normalized",
          text: item.score === null ? "—" : fmt(item.score.normalized),
        }),
        el("td", { className: "num", text: String(item.output.verdicts.filter((v) => v.status === "error").length) }),
      );
      tr.addEventListener("click", () => {
        if (open.has(item.output.id)) open.delete(item.output.id);
        else open.add(item.output.id);
        render();
      });
      fragment.append(tr);
      if (open.has(item.output.id)) {
        const cell = el("td", { attrs: { colspan: String(columns) } }, details(item, criteria));
        fragment.append(el("tr", { className: "details", attrs: { "data-details-for": item.output.id } }, cell));
      }
    });
    rankingBody.replaceChildren(fragment);
    const unscored = ranked.filter((s) => s.score === null);
    // Why each is unscored: an error verdict (under the error policy), or something the weights
    // did (every weight 0) — said as it is, not all called error verdicts.
    const byVerdict = unscored.filter((s) => s.output.verdicts.some((v) => v.status === "error"));
    const other = unscored.filter((s) => !byVerdict.includes(s));
    const why = [
      ...(byVerdict.length > 0 ? [`${byVerdict.length} with an error verdict under “${section.errorsAs}”`] : []),
      ...(other.length > 0 ? [`${other.length}: ${other[0]!.error ?? "no score"}`] : []),
    ].join("; ");
    const filtered =
      scored.length < ranked.length
        ? ` ${scored.length.toLocaleString("en")} of ${ranked.length.toLocaleString("en")} match the filter.`
        : "";
    note.textContent = `Ranked by normalized score under the weights on the left${unscored.length > 0 ? `; ${unscored.length} unscored (${why}) last` : ""}.${filtered} ${shown.length < scored.length ? `Showing ${shown.length.toLocaleString("en")} of ${scored.length.toLocaleString("en")}.` : ""} Click an output for its verdicts; tick two to compare them.`;
    renderCompare(ranked);
    more.hidden = shown.length >= scored.length;
    state.renders++;
    state.lastRenderMs = performance.now() - started;
  }
  render();
  return root;
}

/**
 * Two scored outputs side by side (two outputs of one file, or one output in two files): their
 * texts and totals, and every criterion's verdict, the criteria on which they differ marked.
 */
function sideBySide(
  [a, labelA]: readonly [Scored, string],
  [b, labelB]: readonly [Scored, string],
  criteria: readonly CriterionRow[],
): HTMLElement[] {
  const total = (item: Scored) => (item.score === null ? "unscored" : fmt(item.score.normalized));
  const texts = el(
    "div",
    { className: "side-by-side" },
    el("div", {}, el("h4", { text: `${labelA} · ${total(a)}` }), scoredText(a.output)),
    el("div", {}, el("h4", { text: `${labelB} · ${total(b)}` }), scoredText(b.output)),
  );
  const verdictsOf = (item: Scored) => new Map(item.output.verdicts.map((v) => [v.criterionId, v]));
  const [va, vb] = [verdictsOf(a), verdictsOf(b)];
  const cell = (v: ReportOutput["verdicts"][number] | undefined, penalty: boolean) =>
    el("td", {
      className: `num ${v?.status === "error" ? "status-error" : verdictClass(v, penalty)}`,
      text: v === undefined ? "not verified" : v.status === "ok" ? fmt(v.score, 3) : v.status,
    });
  const body = el("tbody");
  for (const c of criteria) {
    const x = va.get(c.id);
    const y = vb.get(c.id);
    body.append(
      el(
        "tr",
        { className: differs(x, y) ? "differs" : "", attrs: { "data-criterion": c.id } },
        el("td", { text: c.id, className: c.penalty ? "penalty" : "" }),
        cell(x, c.penalty),
        cell(y, c.penalty),
      ),
    );
  }
  return [texts, el("table", {}, el("thead", {}, row(["criterion", labelA, labelB], "th")), body)];
}

/** Whether two verdicts on one criterion say different things (a score, or an error or skip). */
function differs(x: ReportOutput["verdicts"][number] | undefined, y: ReportOutput["verdicts"][number] | undefined) {
  return (x?.status === "ok" ? x.score : x?.status) !== (y?.status === "ok" ? y.score : y?.status);
}

/**
 * Which rubric a scores section was scored with, by its id and its criteria's ids (weights may
 * differ: a file scored with `--weights` still compares with one scored without).
 */
function rubricKey(section: ScoresSection): string {
  const r = section.rubric;
  return "stages" in r
    ? JSON.stringify([r.taskId, r.stages.map((stage) => stage.rules.map((rule) => rule.id))])
    : JSON.stringify([r.id, r.criteria.map((c) => c.id)]);
}

/**
 * Two results files on the same rubric (two prompts, two models, two checkpoints), output by
 * output: each file's score under its own weights, the difference, and the criteria whose verdicts
 * differ; an output's row opens both versions side by side. Outputs are paired by id.
 */
function renderFileComparison(a: ScoresSection, b: ScoresSection, index: number): HTMLElement {
  const criteria = criteriaOf(a);
  const weightsOf = (section: ScoresSection) => Object.fromEntries(criteriaOf(section).map((c) => [c.id, c.weight]));
  const inB = new Map(scoreAll(b, weightsOf(b)).map((item) => [item.output.id, item]));
  const pairs = scoreAll(a, weightsOf(a)).flatMap((x) => {
    const y = inB.get(x.output.id);
    return y === undefined ? [] : [[x, y] as const];
  });
  const delta = ([x, y]: readonly [Scored, Scored]) =>
    x.score === null || y.score === null ? null : y.score.normalized - x.score.normalized;
  pairs.sort((p, q) => {
    const [dp, dq] = [delta(p), delta(q)];
    if (dp === null || dq === null)
      return dp === dq ? p[0].output.id.localeCompare(q[0].output.id) : dp === null ? 1 : -1;
    return Math.abs(dq) - Math.abs(dp) || p[0].output.id.localeCompare(q[0].output.id);
  });
  const deltas = pairs.map(delta).filter((d): d is number => d !== null);
  const better = deltas.filter((d) => d > 0).length;
  const worse = deltas.filter((d) => d < 0).length;
  const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);
  const onlyA = a.outputs.length - pairs.length;
  const onlyB = b.outputs.length - pairs.length;
  const root = el("section", { attrs: { "data-section": String(index) }, testid: "file-comparison" });
  root.append(
    el("h2", { text: `Compare ${a.source} and ${b.source}` }),
    el("p", {
      className: "muted",
      testid: "file-comparison-summary",
      text:
        `${pairs.length} outputs in both, on the same rubric; the second scores higher on ${better}, lower on ${worse}, ` +
        `the same on ${deltas.length - better - worse}; mean difference ${fmt(mean(deltas))}` +
        `${pairs.length - deltas.length > 0 ? `; ${pairs.length - deltas.length} unscored in one or both` : ""}` +
        `${onlyA + onlyB > 0 ? `; ${onlyA} only in the first, ${onlyB} only in the second` : ""}. Click an output for both versions.`,
    }),
  );
  const body = el("tbody");
  const open = new Set<string>();
  const render = () => {
    const fragment = document.createDocumentFragment();
    for (const pair of pairs) {
      const [x, y] = pair;
      const d = delta(pair);
      const changed = criteria.filter((c) =>
        differs(
          x.output.verdicts.find((v) => v.criterionId === c.id),
          y.output.verdicts.find((v) => v.criterionId === c.id),
        ),
      );
      const tr = el(
        "tr",
        { className: "output", attrs: { "data-output-id": x.output.id } },
        el("td", { text: x.output.id }),
        el("td", { className: "num", text: x.score === null ? "unscored" : fmt(x.score.normalized) }),
        el("td", { className: "num", text: y.score === null ? "unscored" : fmt(y.score.normalized) }),
        el("td", {
          className: `num ${d === null || d === 0 ? "" : d > 0 ? "pass" : "fail"}`,
          testid: "delta",
          text: d === null ? "—" : `${d > 0 ? "+" : ""}${fmt(d)}`,
        }),
        el("td", { text: changed.map((c) => c.id).join(", ") }),
      );
      tr.addEventListener("click", () => {
        if (open.has(x.output.id)) open.delete(x.output.id);
        else open.add(x.output.id);
        render();
      });
      fragment.append(tr);
      if (open.has(x.output.id))
        fragment.append(
          el(
            "tr",
            { className: "details", attrs: { "data-details-for": x.output.id } },
            el("td", { attrs: { colspan: "5" } }, ...sideBySide([x, a.source], [y, b.source], criteria)),
          ),
        );
    }
    body.replaceChildren(fragment);
  };
  render();
  root.append(
    el(
      "div",
      { className: "scroll" },
      el(
        "table",
        { testid: "file-comparison-table" },
        el("thead", {}, row(["output", "first", "second", "difference", "criteria that differ"], "th")),
        body,
      ),
    ),
  );
  return root;
}

function renderDocument(section: DocumentSection, index: number): HTMLElement {
  const root = el(
    "section",
    { attrs: { "data-section": String(index), "data-kind": "document" } },
    el("h2", { text: section.title }),
    el("p", { className: "muted", text: `from ${section.source}` }),
  );
  for (const figure of section.figures)
    root.append(
      el(
        "figure",
        {},
        el("img", { attrs: { src: figure.src, alt: figure.caption } }),
        el("figcaption", { className: "muted", text: figure.caption }),
      ),
    );
  for (const block of section.blocks) {
    if (block.type === "heading") root.append(el(block.level <= 2 ? "h3" : "h4", { text: block.text }));
    else if (block.type === "paragraph") root.append(el("p", { className: "note", text: block.text }));
    else if (block.type === "quote") root.append(el("blockquote", { className: "muted", text: block.text }));
    else if (block.type === "code") root.append(el("pre", { text: block.text }));
    else if (block.type === "list") {
      const list = el("ul");
      for (const item of block.items) list.append(el("li", { text: item }));
      root.append(list);
    } else {
      const body = el("tbody");
      for (const cells of block.rows) {
        const tr = el("tr");
        // Numbers align right, so that a table's columns read down.
        for (const cell of cells)
          tr.append(el("td", { text: cell, className: /^[-+−]?[\d.]+%?$/.test(cell) ? "num" : "" }));
        body.append(tr);
      }
      root.append(el("table", { className: "document" }, el("thead", {}, row(block.header, "th")), body));
    }
  }
  return root;
}

/** What a test or a benchmark reads off the page. */
const state = { ready: false, renders: 0, lastRenderMs: 0, sections: 0 };
(window as unknown as { __rubricReport: typeof state }).__rubricReport = state;

function main() {
  const data = JSON.parse(document.getElementById("report-data")!.textContent!) as ReportData;
  const main = document.getElementById("report")!;
  document.title = data.title;
  main.append(
    el("h1", { text: data.title }),
    el("p", {
      className: "muted",
      text: `Generated ${data.generated} by @rubric/report. Every total here is computed by @rubric/core's scoreRubric, in this page.`,
    }),
  );
  data.sections.forEach((section, i) =>
    main.append(section.kind === "scores" ? renderScores(section, i) : renderDocument(section, i)),
  );
  // Two results files on the same rubric: compared output by output after their own sections.
  const scores = data.sections.filter((section): section is ScoresSection => section.kind === "scores");
  if (scores.length === 2 && rubricKey(scores[0]!) === rubricKey(scores[1]!))
    main.append(renderFileComparison(scores[0]!, scores[1]!, data.sections.length));
  state.sections = data.sections.length;
  state.ready = true;
}

main();
