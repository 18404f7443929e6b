import { scoreRubric, type FlatRubric, type Verdict } from "@rubric/core";
import { describe, expect, it } from "vitest";
import { buildReport } from "../html/build.js";
import { ReportInputError } from "../errors.js";
import { scoresSection } from "./scores.js";

const rubric = {
  id: "memo",
  criteria: [
    {
      id: "terms",
      text: "Mentions revenue",
      weight: 2,
      polarity: "reward",
      verifier: { kind: "includes", terms: ["revenue"] },
    },
    {
      id: "hype",
      text: "Says guaranteed",
      weight: 1,
      polarity: "penalty",
      verifier: { kind: "includes", terms: ["guaranteed"] },
    },
  ],
} as FlatRubric;

function results(verdicts: Verdict[][], withRubric = true) {
  return {
    errorsAs: "fail",
    errors: 0,
    ...(withRubric ? { rubric, ignoreGates: false } : {}),
    results: verdicts.map((v, i) => {
      const score = scoreRubric(rubric, v);
      return { id: `o${i}`, total: score.total, normalized: score.normalized, errors: 0, verdicts: v };
    }),
  };
}

const ok = (criterionId: string, score: number): Verdict => ({
  criterionId,
  score,
  status: "ok",
  rationale: `${criterionId} ${score}`,
});

describe("scoresSection", () => {
  it("reads score results with their rubric, keeping each output's verdicts and recorded score", () => {
    const section = scoresSection(
      results([
        [ok("terms", 1), ok("hype", 0)],
        [ok("terms", 0), ok("hype", 1)],
      ]),
      "r.json",
    );
    expect(section).toMatchObject({
      kind: "scores",
      rubricKind: "flat",
      errorsAs: "fail",
      ignoreGates: false,
      title: "Scores: memo",
    });
    expect(section.outputs.map((o) => o.recorded.total)).toEqual([2, -1]);
    expect(section.outputs[0]!.verdicts[0]).toMatchObject({ criterionId: "terms", rationale: "terms 1" });
  });

  it("refuses results their rubric does not give, naming the output: a report never shows them under another rubric", () => {
    const file = results([[ok("terms", 1), ok("hype", 0)]]);
    const other = { ...rubric, criteria: [{ ...rubric.criteria[0]!, weight: 3 }, rubric.criteria[1]!] };
    const error = (() => {
      try {
        scoresSection({ ...file, rubric: other }, "r.json");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ReportInputError);
    expect((error as Error).message).toBe(
      "r.json: results[0] (o0): the run recorded a total of 2 but the rubric gives 3: these results were not scored with this rubric",
    );
  });

  it("asks for the rubric when the results hold none, and takes it from a rubric file", () => {
    const file = results([[ok("terms", 0.5), ok("hype", 0)]], false);
    expect(() => scoresSection(file, "old.json")).toThrow(/old.json: the results hold no rubric .*--rubric <file>/);
    const section = scoresSection(file, "old.json", { text: JSON.stringify(rubric), source: "rubric.json" });
    expect(section.outputs[0]!.recorded.total).toBe(1);
    expect(() => scoresSection({ results: [] }, "bad.json")).toThrow(ReportInputError);
  });
});

describe("buildReport", () => {
  it("keeps text from the data inside its script element: no markup of an output's closes it", () => {
    const hostile = [{ ...ok("terms", 1), rationale: "</script><script>alert(1)</script><!--" }, ok("hype", 0)];
    const html = buildReport([scoresSection(results([hostile]), "r.json")], { title: "<b>t</b>" });
    // One closing tag for the data, one for the page's script: the rationale's are escaped.
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain("<title>&lt;b&gt;t&lt;/b&gt;</title>");
    const data = JSON.parse(html.match(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/)![1]!);
    expect(data.sections[0].outputs[0].verdicts[0].rationale).toBe("</script><script>alert(1)</script><!--");
  });
});
