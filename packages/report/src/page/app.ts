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

function details(item: Scored, criteria: readonly CriterionRow[]): HTMLElement {
  const box = el("div");
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
      el("td", { className: "num", text: v?.status === "ok" ? fmt(v.score, 3) : "—" }),
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
  const more = el("button", { text: "Show all", testid: "show-all" });
  more.addEventListener("click", () => {
    showAll = true;
    render();
  });
  const rankingPanel = el(
    "div",
    {},
    el("h3", { text: "Ranking" }),
    note,
    el(
      "table",
      { testid: "ranking" },
      el("thead", {}, row(["#", "output", "total", "normalized", "errors"], "th")),
      rankingBody,
    ),
    more,
  );
  root.append(el("div", { className: "layout" }, weightPanel, rankingPanel));

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
    const scored = scoreAll(section, weights);
    const shown = showAll ? scored : scored.slice(0, SHOWN);
    const fragment = document.createDocumentFragment();
    shown.forEach((item, rank) => {
      const tr = el(
        "tr",
        { className: "output", attrs: { "data-output-id": item.output.id } },
        el("td", { className: "num", text: String(rank + 1) }),
        el("td", { text: item.output.id }),
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
        const cell = el("td", { attrs: { colspan: "5" } }, details(item, criteria));
        fragment.append(el("tr", { className: "details", attrs: { "data-details-for": item.output.id } }, cell));
      }
    });
    rankingBody.replaceChildren(fragment);
    const unscored = scored.filter((s) => s.score === null);
    // Why each is unscored: an error verdict (under the error policy), or something the weights
    // did (every weight 0) — said as it is, not all called error verdicts.
    const byVerdict = unscored.filter((s) => s.output.verdicts.some((v) => v.status === "error"));
    const other = unscored.filter((s) => !byVerdict.includes(s));
    const why = [
      ...(byVerdict.length > 0 ? [`${byVerdict.length} with an error verdict under “${section.errorsAs}”`] : []),
      ...(other.length > 0 ? [`${other.length}: ${other[0]!.error ?? "no score"}`] : []),
    ].join("; ");
    note.textContent = `Ranked by normalized score under the weights on the left${unscored.length > 0 ? `; ${unscored.length} unscored (${why}) last` : ""}. ${shown.length < scored.length ? `Showing ${shown.length.toLocaleString("en")} of ${scored.length.toLocaleString("en")}.` : ""} Click an output for its verdicts.`;
    more.hidden = shown.length >= scored.length;
    state.renders++;
    state.lastRenderMs = performance.now() - started;
  }
  render();
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
  state.sections = data.sections.length;
  state.ready = true;
}

main();
