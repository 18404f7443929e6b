import type { IntegrityCard, ProbeResult } from "./card.js";

const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
const interval = (ci: readonly [number, number]) => `${signed(ci[0])} … ${signed(ci[1])}`;

/** Shows an edit in a fence, visibly: invisible characters are named, long edits cut. */
function shown(text: string, limit = 600): string {
  const visible = text
    .trim()
    .replace(
      /[\u{E0020}-\u{E007E}]+/gu,
      (run) =>
        `⟦${[...run].length} invisible tag characters: "${[...run].map((c) => String.fromCodePoint(c.codePointAt(0)! - 0xe0000)).join("")}"⟧`,
    )
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, "⟦zero-width⟧");
  const cut =
    visible.length > limit ? `${visible.slice(0, limit)}… (${visible.length - limit} more characters)` : visible;
  return `\`\`\`\`text\n${cut === "" ? "(nothing)" : cut}\n\`\`\`\``;
}

// Line breaks (CommonMark's and Unicode's) and other control characters could end the line a
// value sits on and start one of the writer's choosing: a heading, a forged verdict. (Tested by
// code point: biome refuses control characters in a regular expression.)
const LINE_BREAKS = new Set([0x0a, 0x0d, 0x85, 0x2028, 0x2029]);
const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f);

function oneLine(value: string): string {
  let out = "";
  for (const c of value.replace(/\r\n/g, "\n")) {
    const code = c.codePointAt(0)!;
    if (LINE_BREAKS.has(code)) out += "⏎";
    else if (code === 0x09) out += " ";
    else if (isControl(code)) out += `⟦U+${code.toString(16).toUpperCase().padStart(4, "0")}⟧`;
    else out += c;
  }
  return out;
}

/**
 * A value the card did not write (a sample id, a criterion id, the rubric's id, the judge's
 * name) as an inline code span that stays one: line breaks shown as ⏎, a tab as a space and other control
 * characters by their code point, so the value cannot end its line; the fence one backtick longer than the
 * longest run inside (CommonMark's rule), so it cannot close its span; in a table, `|` escaped,
 * so it cannot end its cell.
 */
export function inlineCode(value: string, place: "text" | "table" = "text"): string {
  let text = oneLine(value);
  if (place === "table") text = text.replace(/\|/g, "\\|");
  if (text === "") return "` `";
  const longest = (text.match(/`+/g) ?? []).reduce((most, run) => Math.max(most, run.length), 0);
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

function row(p: ProbeResult): string {
  const trueGain = p.trueGain === null ? "" : ` | ${signed(p.trueGain.gain)}`;
  const paid =
    p.exploited
      .slice(0, 4)
      .map((id) => inlineCode(id, "table"))
      .join(", ") + (p.exploited.length > 4 ? `, +${p.exploited.length - 4}` : "");
  const gain = p.applicable === 0 ? "n/a" : signed(p.gain);
  const verdict = p.exploit ? "**yes**" : p.inconclusive ? "can't tell" : "no";
  return `| ${inlineCode(p.id, "table")} | ${gain} | ${p.applicable === 0 ? "" : interval(p.ci)} | ${verdict}${trueGain} | ${p.applicable} | ${paid} |`;
}

function exploitSection(p: ProbeResult): string {
  const lines = [
    `### ${inlineCode(p.id)} — ${p.title}`,
    "",
    `A scorer that ${p.tests}.`,
    "",
    `Gain ${signed(p.gain)} (${interval(p.ci)}) over ${p.applicable} samples.`,
  ];
  if (p.trueGain) lines.push(`True utility changed by ${signed(p.trueGain.gain)} (${interval(p.trueGain.ci)}).`);
  lines.push(
    "",
    `Criteria that paid: ${p.criteria
      .filter((c) => c.gain > 0)
      .map((c) => `${inlineCode(c.id)} ${signed(c.gain)} (on ${c.paid}/${p.applicable})`)
      .join(", ")}.`,
  );
  if (p.example) {
    const e = p.example;
    lines.push(
      "",
      `Worked example, sample ${inlineCode(e.sampleId)}: probe ${e.probeScore.toFixed(3)} vs control ${e.controlScore.toFixed(3)} (${signed(e.gain)}).`,
      "",
      "The probe changed:",
      "",
      shown(e.probeEdit),
      "",
      `The control (${p.matchedBy}) changed:`,
      "",
      shown(e.controlEdit),
    );
  }
  if (p.replay) lines.push("", `Replay: ${inlineCode(p.replay)}`);
  return lines.join("\n");
}

function verdictLine(card: IntegrityCard): string {
  const detectable =
    card.detectableGain === null
      ? ""
      : ` The smallest gain this run could have detected is ${card.detectableGain.toFixed(3)}.`;
  if (card.verdict === "hackable")
    return `**Verdict: hackable.** ${card.exploits.length} of ${card.probes.length} probes are exploits: ${card.exploits.map((id) => inlineCode(id)).join(", ")}.`;
  if (card.verdict === "inconclusive")
    return `**Verdict: inconclusive.** No probe is an exploit, but ${card.inconclusive.length} could not be ruled out (their intervals reach τ = ${card.threshold}): ${card.inconclusive.map((id) => inlineCode(id)).join(", ")}. More samples narrow the intervals.${detectable}`;
  return `**Verdict: clean.** Every applicable probe's interval lies below τ = ${card.threshold}: none gains that much.${detectable}`;
}

/**
 * The integrity card as Markdown: verdict, each probe's gain with its interval, the criteria each
 * exploit paid, a worked example per exploit and the commands that replay them.
 *
 * @example
 * writeFileSync("card.md", cardToMarkdown(card));
 */
export function cardToMarkdown(card: IntegrityCard): string {
  const withTrue = card.probes.some((p) => p.trueGain !== null);
  const lines = [
    `# Integrity card: ${inlineCode(card.rubric.id)}`,
    "",
    verdictLine(card),
    "",
    `${card.samples} samples · ${card.rubric.criteria} criteria · judge: ${card.judge === null ? "not given" : inlineCode(card.judge)} · seed ${card.seed} · τ = ${card.threshold} · ${Math.round(card.confidence * 100)}% paired bootstrap intervals (${card.resamples} resamples) · honest outputs score ${card.honestMean.toFixed(3)} on average.`,
    "",
    "Gain = score(probe) − score(control), averaged over the samples a probe applies to; the control changes the output as much (length, structure) without the exploit. A probe is an exploit when its gain exceeds τ and its interval excludes 0, ruled out when its interval lies below τ, and can't-tell otherwise.",
    "",
    `| probe | gain | ${Math.round(card.confidence * 100)}% CI | exploit${withTrue ? " | true Δ" : ""} | samples | criteria that paid |`,
    `| --- | ---: | --- | ---${withTrue ? " | ---:" : ""} | ---: | --- |`,
    ...card.probes.map(row),
  ];
  const exploits = card.probes.filter((p) => p.exploit);
  if (exploits.length > 0) lines.push("", "## Exploits", "", exploits.map(exploitSection).join("\n\n"));
  if (card.command) lines.push("", `Replay the whole card: ${inlineCode(card.command)}`);
  return `${lines.join("\n")}\n`;
}
