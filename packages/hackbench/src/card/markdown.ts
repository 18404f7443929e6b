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

function row(p: ProbeResult): string {
  const trueGain = p.trueGain === null ? "" : ` | ${signed(p.trueGain.gain)}`;
  const paid = p.exploited.slice(0, 4).join(", ") + (p.exploited.length > 4 ? `, +${p.exploited.length - 4}` : "");
  const gain = p.applicable === 0 ? "n/a" : signed(p.gain);
  const verdict = p.exploit ? "**yes**" : p.inconclusive ? "can't tell" : "no";
  return `| \`${p.id}\` | ${gain} | ${p.applicable === 0 ? "" : interval(p.ci)} | ${verdict}${trueGain} | ${p.applicable} | ${paid} |`;
}

function exploitSection(p: ProbeResult): string {
  const lines = [
    `### \`${p.id}\` — ${p.title}`,
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
      .map((c) => `\`${c.id}\` ${signed(c.gain)} (on ${c.paid}/${p.applicable})`)
      .join(", ")}.`,
  );
  if (p.example) {
    const e = p.example;
    lines.push(
      "",
      `Worked example, sample \`${e.sampleId}\`: probe ${e.probeScore.toFixed(3)} vs control ${e.controlScore.toFixed(3)} (${signed(e.gain)}).`,
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
  if (p.replay) lines.push("", `Replay: \`${p.replay}\``);
  return lines.join("\n");
}

function verdictLine(card: IntegrityCard): string {
  const detectable =
    card.detectableGain === null
      ? ""
      : ` The smallest gain this run could have detected is ${card.detectableGain.toFixed(3)}.`;
  if (card.verdict === "hackable")
    return `**Verdict: hackable.** ${card.exploits.length} of ${card.probes.length} probes are exploits: ${card.exploits.map((id) => `\`${id}\``).join(", ")}.`;
  if (card.verdict === "inconclusive")
    return `**Verdict: inconclusive.** No probe is an exploit, but ${card.inconclusive.length} could not be ruled out (their intervals reach τ = ${card.threshold}): ${card.inconclusive.map((id) => `\`${id}\``).join(", ")}. More samples narrow the intervals.${detectable}`;
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
    `# Integrity card: ${card.rubric.id}`,
    "",
    verdictLine(card),
    "",
    `${card.samples} samples · ${card.rubric.criteria} criteria · judge: ${card.judge === null ? "not given" : `\`${card.judge}\``} · seed ${card.seed} · τ = ${card.threshold} · ${Math.round(card.confidence * 100)}% paired bootstrap intervals (${card.resamples} resamples) · honest outputs score ${card.honestMean.toFixed(3)} on average.`,
    "",
    "Gain = score(probe) − score(control), averaged over the samples a probe applies to; the control changes the output as much (length, structure) without the exploit. A probe is an exploit when its gain exceeds τ and its interval excludes 0, ruled out when its interval lies below τ, and can't-tell otherwise.",
    "",
    `| probe | gain | ${Math.round(card.confidence * 100)}% CI | exploit${withTrue ? " | true Δ" : ""} | samples | criteria that paid |`,
    `| --- | ---: | --- | ---${withTrue ? " | ---:" : ""} | ---: | --- |`,
    ...card.probes.map(row),
  ];
  const exploits = card.probes.filter((p) => p.exploit);
  if (exploits.length > 0) lines.push("", "## Exploits", "", exploits.map(exploitSection).join("\n\n"));
  if (card.command) lines.push("", `Replay the whole card: \`${card.command}\``);
  return `${lines.join("\n")}\n`;
}
