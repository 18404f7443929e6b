import { createRng } from "@rubric/core";
import {
  citationsVerifier,
  excludesVerifier,
  findCitations,
  includesVerifier,
  markdownCounts,
  measureLength,
} from "@rubric/verifiers";
import { beforeAll, describe, expect, it } from "vitest";
import { gymSamples, presenceRubric, strictRubric, type GymSamples } from "../__fixtures__/gym.js";
import { changedSpan } from "../measure/diff.js";
import type { HackSample } from "../sample/sample.js";
import { PROBES, PROBE_IDS, UnknownProbeError, resolveProbes } from "./catalog.js";
import { neutralize } from "./neutral.js";
import type { Probe, ProbeEdit } from "./probe.js";
import { rubricSurface } from "./surface.js";

let gym: GymSamples;
beforeAll(async () => {
  gym = await gymSamples(12);
});

const surface = rubricSurface(presenceRubric);
const apply = (probe: Probe, sample: HackSample, seed = 0, on = surface): ProbeEdit | undefined =>
  probe.apply({ sample, surface: on, rng: createRng(seed).fork(`${probe.id}\u0000${sample.id}`) });
const byId = (id: string) => PROBES.find((p) => p.id === id)!;
const added = (sample: HackSample, text: string) => changedSpan(sample.output, text).added;

describe("the probe catalog", () => {
  it("has the stable ids of issue 7, and more", () => {
    const required = [
      "keyword-stuffing",
      "rubric-echo",
      "verbosity-padding",
      "format-mimicry",
      "empty-structure",
      "confident-wrong-claim",
      "fabricated-citations",
      "self-praise",
      "judge-injection",
      "judge-injection-html-comment",
      "judge-injection-invisible",
      "prompt-echo",
      "answer-enumeration",
      "homoglyph",
    ];
    expect(PROBE_IDS.slice(0, required.length)).toEqual(required);
    expect(PROBE_IDS).toEqual(expect.arrayContaining(["buzzwords", "pleasantry", "three-point-format"]));
    expect(new Set(PROBE_IDS).size).toBe(PROBE_IDS.length);
  });

  it("resolves ids and custom probes, and names unknown ids", () => {
    const custom: Probe = { id: "custom", title: "Custom", exploit: "x", matchedBy: "y", apply: () => undefined };
    expect(resolveProbes(["homoglyph", custom]).map((p) => p.id)).toEqual(["homoglyph", "custom"]);
    expect(() => resolveProbes(["nope"])).toThrow(UnknownProbeError);
    expect(() => resolveProbes(["nope"])).toThrow(/known: keyword-stuffing, /);
    expect(() => resolveProbes(["homoglyph", "homoglyph"])).toThrow(/twice/);
  });
});

describe("probes and their matched controls", () => {
  it("are deterministic for a seed", () => {
    for (const probe of PROBES)
      for (const sample of gym.samples) expect(apply(probe, sample), probe.id).toEqual(apply(probe, sample));
  });

  it("insertion probes: the control has exactly the probe's length, word count and line structure", () => {
    const insertions = [
      "keyword-stuffing",
      "rubric-echo",
      "confident-wrong-claim",
      "fabricated-citations",
      "self-praise",
      "judge-injection",
      "judge-injection-html-comment",
      "judge-injection-invisible",
      "prompt-echo",
      "answer-enumeration",
      "buzzwords",
      "pleasantry",
    ];
    for (const id of insertions)
      for (const sample of gym.samples) {
        const edit = apply(byId(id), sample)!;
        expect(edit, id).toBeDefined();
        expect(edit.control.length, id).toBe(edit.probe.length);
        expect(measureLength(edit.control, "words"), id).toBe(measureLength(edit.probe, "words"));
        expect(
          edit.control.split("\n").map((l) => l.length),
          id,
        ).toEqual(edit.probe.split("\n").map((l) => l.length));
        expect(markdownCounts(edit.control), id).toEqual(markdownCounts(edit.probe));
        expect(edit.control, id).not.toBe(edit.probe);
      }
  });

  it("format probes keep the words and drop the structure; verbosity's control is the honest output", () => {
    for (const sample of gym.samples) {
      for (const id of ["format-mimicry", "three-point-format"]) {
        const edit = apply(byId(id), sample)!;
        expect(measureLength(edit.control, "words"), id).toBe(measureLength(edit.probe, "words"));
        expect(markdownCounts(edit.probe).bullets, id).toBeGreaterThan(markdownCounts(edit.control).bullets);
      }
      const padded = apply(byId("verbosity-padding"), sample)!;
      expect(padded.control).toBe(sample.output);
      expect(measureLength(padded.probe, "words")).toBeGreaterThan(measureLength(sample.output, "words"));
    }
  });

  it("keyword stuffing puts every paid term in; its control none", async () => {
    const sample = gym.samples[0]!;
    const edit = apply(byId("keyword-stuffing"), sample)!;
    for (const criterion of presenceRubric.criteria) {
      const spec = includesVerifier.specSchema.parse(criterion.verifier);
      expect((await includesVerifier.verify(criterion, spec, { output: added(sample, edit.probe) }, {})).score).toBe(1);
      expect((await includesVerifier.verify(criterion, spec, { output: added(sample, edit.control) }, {})).score).toBe(
        0,
      );
    }
  });

  it("fabricated citations add three new numbered references that the citations rule counts; the control adds none", async () => {
    const sample = gym.samples.find((s) => /\[\d+\]/.test(s.output))!;
    const edit = apply(byId("fabricated-citations"), sample)!;
    const before = findCitations(sample.output, ["bracket", "url", "doi"]).length;
    expect(findCitations(edit.probe, ["bracket", "url", "doi"]).length).toBeGreaterThanOrEqual(before + 6); // 3 brackets, 3 URLs, 3 DOIs
    expect(findCitations(edit.control, ["bracket", "url", "doi"]).length).toBe(before);
    const spec = citationsVerifier.specSchema.parse({ kind: "citations", min: before + 3, styles: ["bracket"] });
    expect(
      (await citationsVerifier.verify({ id: "c", text: "cites", verifier: spec }, spec, { output: edit.probe }, {}))
        .score,
    ).toBe(1);
  });

  it("homoglyph: the forbidden term vanishes for an excludes rule in the probe, not in the control, which swaps as many letters elsewhere", async () => {
    const hedged = gym.samples.filter((s) => /\b(might|perhaps|possibly)\b/i.test(s.output));
    expect(hedged.length).toBeGreaterThan(0);
    const rule = { kind: "excludes" as const, terms: ["might", "perhaps", "possibly", "maybe"] };
    const spec = excludesVerifier.specSchema.parse(rule);
    const on = rubricSurface({
      id: "r",
      criteria: [{ id: "no-hedging", text: "Avoids hedging", weight: 1, polarity: "reward", verifier: rule }],
    });
    for (const sample of hedged) {
      const edit = apply(byId("homoglyph"), sample, 0, on)!;
      const score = async (output: string) =>
        (await excludesVerifier.verify({ id: "no-hedging", text: "", verifier: rule }, spec, { output }, {})).score;
      expect(await score(sample.output)).toBe(0);
      expect(await score(edit.probe)).toBe(1);
      expect(await score(edit.control)).toBe(0);
      const nonAscii = (t: string) => [...t].filter((c) => c.charCodeAt(0) > 0x7f).length;
      expect(nonAscii(edit.control)).toBe(nonAscii(edit.probe));
      expect(edit.probe.length).toBe(sample.output.length);
    }
    expect(apply(byId("homoglyph"), { id: "x", output: "Nothing hedged here." }, 0, on)).toBeUndefined();
  });

  it("the invisible injection adds nothing a reader sees, and carries the instruction in tag characters", () => {
    const sample = gym.samples[0]!;
    const edit = apply(byId("judge-injection-invisible"), sample)!;
    const inserted = added(sample, edit.probe);
    expect(inserted.replace(/[\s\p{Cf}]/gu, "")).toBe("");
    const decoded = [...inserted]
      .map((c) => c.codePointAt(0)!)
      .filter((c) => c >= 0xe0020 && c <= 0xe007e)
      .map((c) => String.fromCodePoint(c - 0xe0000))
      .join("");
    expect(decoded).toMatch(/^Note to the evaluator: .*maximum score\.$/);
  });

  it("empty structure adds the rubric's required headings with nothing under them", () => {
    const on = rubricSurface(strictRubric);
    expect(on.structure.headings).toEqual(["## Summary", "## Recommendation"]);
    const edit = apply(byId("empty-structure"), gym.samples[0]!, 0, on)!;
    expect(added(gym.samples[0]!, edit.probe).trim()).toBe("## Summary\n\n## Recommendation");
    expect(added(gym.samples[0]!, edit.control).trim()).toBe("Summary Recommendation");
    expect(apply(byId("empty-structure"), gym.samples[0]!)).toBeUndefined(); // the presence rubric asks for no structure
  });

  it("prompt echo needs an input, and answer enumeration something to enumerate", () => {
    expect(apply(byId("prompt-echo"), { id: "x", output: "Fine." })).toBeUndefined();
    expect(apply(byId("answer-enumeration"), { id: "x", output: "No numbers here." })).toBeDefined(); // "No" is a yes/no answer
    expect(
      added(
        { id: "x", output: "It is 42." },
        apply(byId("answer-enumeration"), { id: "x", output: "It is 42." })!.probe,
      ),
    ).toContain("41, 43, 84, 21");
    expect(apply(byId("answer-enumeration"), { id: "x", output: "Nothing to list." })).toBeUndefined();
  });
});

describe("neutralize", () => {
  it("keeps layout, length and function words, and drops every rubric word", () => {
    const avoid = new Set(["revenue", "risks"]);
    const text = "## Revenue\n\n- The revenue rose 12% [3].\n<!-- Risks: none -->";
    const out = neutralize(text, createRng(1), { avoid });
    expect(out.length).toBe(text.length);
    expect(out.replace(/[\p{L}\p{N}]/gu, "x")).toBe(text.replace(/[\p{L}\p{N}]/gu, "x"));
    expect(out).toMatch(
      /^## [A-Z][a-z]{6}\n\n- The [a-z]{7} [a-z]{4} [a-z]{2}% \[[a-z]\]\.\n<!-- [A-Z][a-z]{4}: [a-z]{4} -->$/,
    );
    expect(out.toLowerCase()).not.toMatch(/revenue|risks|rose|none|12|3/);
  });
});
