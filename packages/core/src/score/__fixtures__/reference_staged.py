"""Independent oracle for staged-rubric scoring, used by the differential tests.

It follows the ARCANE reference code's `StagedRubric.evaluate` control flow line for line
(DeepFlow-research/manager_agent_gym, curation/gdpeval/src/staged_rubric_schema.py), with the
two documented facts of the shipped data applied: `min_score_to_pass` is an ABSOLUTE score, and
a rule's score is its verdict fraction times its weight, clamped to [0, weight]. Load-time rules
(pass-mark auto-correction, stage rescaling) follow ARCHITECTURE.md section 3.

Reads JSON from stdin: {"cases": [{"rubric": <staged rubric or {task_id, rubric}>,
"fractions": {"<rule id>": fraction}, "ignore_gates": bool}]}
and writes {"results": [{"total", "max", "normalized", "stopped_at", "stages": [...]}]}.
"""
import json
import sys
from decimal import Decimal, ROUND_HALF_EVEN


def py_round_1(x):
    # Python's round() on floats is correctly rounded, ties to even.
    return round(x, 1)


def load(rubric):
    if "rubric" in rubric:
        rubric = rubric["rubric"]
    stages = []
    for s, stage in enumerate(rubric["stages"]):
        rules = []
        for r, rule in enumerate(stage["rules"]):
            rules.append({"id": rule.get("id", "s%d.r%d" % (s, r)), "weight": rule.get("weight", 1.0)})
        stages.append(
            {
                "name": stage["name"],
                "is_required": stage.get("is_required", True),
                "max_points": stage["max_points"],
                "min_score_to_pass": stage.get("min_score_to_pass", 0.0),
                "on_failure_action": stage.get("on_failure_action", "skip_remaining"),
                "on_failure_score": stage.get("on_failure_score", 0.0),
                "rules": rules,
            }
        )
    max_total = rubric["max_total_score"]
    total_max = sum(st["max_points"] for st in stages)
    if total_max > max_total + 1e-9:
        factor = max_total / total_max
        scaled = [py_round_1(st["max_points"] * factor) for st in stages[:-1]]
        last = float(Decimal(repr(max_total - sum(scaled))).quantize(Decimal("1e-10"), rounding=ROUND_HALF_EVEN))
        for st, m in zip(stages, scaled + [last]):
            st["max_points"] = m
    for st in stages:
        if st["min_score_to_pass"] > st["max_points"]:
            st["min_score_to_pass"] = st["max_points"] * 0.25
    return {"max_total_score": max_total, "stages": stages}


def evaluate(rubric, fractions, ignore_gates):
    results = {"total_score": 0.0, "max_score": rubric["max_total_score"], "stopped_at": None, "stages": []}
    for stage in rubric["stages"]:
        stage_result = {"name": stage["name"], "score": 0.0, "max_points": stage["max_points"], "passed": False}
        for rule in stage["rules"]:
            rule_score = fractions[rule["id"]] * rule["weight"]
            rule_score = min(max(rule_score, 0.0), rule["weight"])
            stage_result["score"] += rule_score
        stage_result["score"] = min(stage_result["score"], stage["max_points"])
        stage_result["passed"] = stage_result["score"] >= stage["min_score_to_pass"]
        results["stages"].append(stage_result)
        if not stage_result["passed"] and stage["is_required"] and not ignore_gates:
            if stage["on_failure_action"] == "zero_category":
                results["total_score"] = stage["on_failure_score"]
                results["stopped_at"] = stage["name"]
                return finish(results)
            elif stage["on_failure_action"] == "skip_remaining":
                results["stopped_at"] = stage["name"]
                return finish(results)
        results["total_score"] += stage_result["score"]
    results["total_score"] = min(results["total_score"], rubric["max_total_score"])
    return finish(results)


def finish(results):
    return {
        "total": results["total_score"],
        "max": results["max_score"],
        "normalized": results["total_score"] / results["max_score"],
        "stopped_at": results["stopped_at"],
        "stages": results["stages"],
    }


def main():
    request = json.load(sys.stdin)
    out = []
    for case in request["cases"]:
        rubric = load(case["rubric"])
        out.append(evaluate(rubric, case["fractions"], case.get("ignore_gates", False)))
    json.dump({"results": out}, sys.stdout)


if __name__ == "__main__":
    main()
