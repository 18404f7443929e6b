import { gymTask, loadGdpval } from "@rubric/autointeract";
import { gymPrompt, QUESTION_REPERTOIRE } from "@rubric/gspo";
import { describe, expect, it } from "vitest";
import { GDPVAL, SMALL_GYM_CONFIG as config } from "./__fixtures__/gym.js";
import type { FixedCriterion } from "./controls.js";
import { evalRubrics, managerRubrics } from "./evaluation.js";
import { trainArcaneManagers } from "./training.js";

describe("evalRubrics", () => {
  it("the controls that claim not to hear the stakeholder do not: their rubrics stay the same whatever the replies", async () => {
    const managers = await trainArcaneManagers(5, { gdpvalDir: GDPVAL, config });
    const gdpval = await loadGdpval(GDPVAL);
    const fixed: FixedCriterion[] = [{ kind: "brief", rank: 0 }];
    let gspoHeard = 0;
    for (const entry of gdpval.eval.slice(0, 8)) {
      const task = gymTask(entry.task);
      const heard = await gymPrompt(task, 5, QUESTION_REPERTOIRE);
      // The same task and stakeholder seed, other replies (another stakeholder's).
      const other = { ...heard, replies: (await gymPrompt(task, 77, QUESTION_REPERTOIRE)).replies };
      expect(other.replies).not.toEqual(heard.replies);
      const a = evalRubrics(managers, heard, fixed, { judgeNoise: 0.3 });
      const b = evalRubrics(managers, other, fixed, { judgeNoise: 0.3 });
      for (const row of ["gspoNoQuestions", "gspoUninformative", "fixedRubric", "oracle"] as const)
        expect(b.rows[row].guide).toEqual(a.rows[row].guide);
      expect(b.noDialogue).toEqual(a.noDialogue);
      if (JSON.stringify(a.rows.gspo.guide) !== JSON.stringify(b.rows.gspo.guide)) gspoHeard++;
      // The trained rows are the managers' own; the noisy oracle guides with the oracle and judges with noise.
      expect(a.rows.gspo.guide).toEqual(managerRubrics(managers, heard).gspo.rubric);
      expect(a.rows.oracleNoisy.guide).toEqual(a.rows.oracle.guide);
      expect(a.rows.oracleNoisy.judge?.noise).toBe(0.3);
      expect(a.rows.oracle.judge).toBeUndefined();
      expect(a.rows.fixedRubric.guide.criteria).toHaveLength(1);
    }
    // The trained manager itself does read the replies, so the invariance above is not vacuous.
    expect(gspoHeard).toBeGreaterThan(0);
  });
});
