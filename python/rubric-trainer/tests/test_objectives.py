"""The torch objectives reproduce @rubric/core's shared vectors: every loss, ratio, clipped
fraction, KL and (through autograd) every gradient, to 1e-6 (they agree far closer in float64)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from rubric_trainer.objectives import clipped_objective, group_advantages, kl_k3, pad_rows, unpad_rows

VECTORS = Path(__file__).resolve().parents[3] / "packages" / "core" / "fixtures" / "policy-gradient-vectors.json"
FIXTURE = json.loads(VECTORS.read_text())
OBJECTIVE_OF = {"gspoObjective": "gspo", "grpoObjective": "grpo", "drGrpoObjective": "dr-grpo"}
TOLERANCE = 1e-6


def cases(*functions: str) -> list:
    return [pytest.param(case, id=case["name"]) for case in FIXTURE["cases"] if case["fn"] in functions]


def assert_close(actual, expected, path: str = "expected") -> None:
    """Same nesting, numbers within TOLERANCE (relative above 1); names the first difference."""
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: got {actual!r}, expected {len(expected)} items"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, f"{path}[{i}]")
        return
    assert math.isfinite(actual), f"{path}: got {actual}"
    assert abs(actual - expected) <= TOLERANCE * max(1.0, abs(expected)), f"{path}: got {actual!r}, expected {expected!r}"


def padded_mask(case_input: dict, key: str) -> torch.Tensor:
    rows = case_input[key]
    mask = case_input.get("mask") or [[1] * len(row) for row in rows]
    return pad_rows([[1.0 if m in (1, True) else 0.0 for m in row] for row in mask]).bool()


def test_the_fixture_has_every_objective_and_kl() -> None:
    assert FIXTURE["version"] == 1
    names = [case["fn"] for case in FIXTURE["cases"]]
    for fn in OBJECTIVE_OF:
        assert names.count(fn) >= 12
    assert names.count("klK3") >= 5


@pytest.mark.parametrize("case", cases(*OBJECTIVE_OF))
def test_objective_matches_core(case: dict) -> None:
    given, expected = case["input"], case["expected"]
    lengths = [len(row) for row in given["logpNew"]]
    logp_new = pad_rows(given["logpNew"]).requires_grad_(True)
    result = clipped_objective(
        OBJECTIVE_OF[case["fn"]],
        logp_new,
        pad_rows(given["logpOld"]),
        padded_mask(given, "logpNew"),
        torch.tensor(given["advantages"], dtype=torch.float64),
        eps_low=given.get("epsLow"),
        eps_high=given.get("epsHigh"),
        beta=given.get("beta", 0.0),
        logp_ref=pad_rows(given["logpRef"]) if "logpRef" in given else None,
        max_tokens=given.get("maxTokens"),
    )
    result.loss.backward()
    assert_close(result.loss.item(), expected["loss"], "loss")
    ratios = result.ratios.tolist() if case["fn"] == "gspoObjective" else unpad_rows(result.ratios, lengths)
    assert_close(ratios, expected["ratios"], "ratios")
    assert_close(result.clipped_fraction, expected["clippedFraction"], "clippedFraction")
    assert_close(unpad_rows(logp_new.grad, lengths), expected["gradLogpNew"], "gradLogpNew")
    assert ("kl" in expected) == (result.kl is not None)
    if result.kl is not None:
        assert_close(result.kl.item(), expected["kl"], "kl")


@pytest.mark.parametrize("case", cases("klK3"))
def test_kl_k3_matches_core(case: dict) -> None:
    given, expected = case["input"], case["expected"]
    lengths = [len(row) for row in given["logp"]]
    logp = pad_rows(given["logp"]).requires_grad_(True)
    result = kl_k3(logp, pad_rows(given["logpRef"]), padded_mask(given, "logp"))
    result.mean.backward()
    assert_close(unpad_rows(result.per_token, lengths), expected["perToken"], "perToken")
    assert_close(result.mean.item(), expected["mean"], "mean")
    assert_close(unpad_rows(logp.grad, lengths), expected["gradLogp"], "gradLogp")


@pytest.mark.parametrize("case", cases("groupAdvantages"))
def test_group_advantages_match_core(case: dict) -> None:
    given = case["input"]
    options = {key: given[key] for key in ("normalize", "eps", "ddof") if key in given}
    assert_close(group_advantages(given["rewards"], **options), case["expected"])


def test_objectives_refuse_inputs_core_refuses() -> None:
    ones = torch.zeros(1, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"mask\[0\]: every token is masked out"):
        clipped_objective("gspo", ones, ones, torch.zeros(1, 2, dtype=torch.bool), torch.ones(1, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"logp_ref: required when beta > 0"):
        clipped_objective("grpo", ones, ones, torch.ones(1, 2, dtype=torch.bool), torch.ones(1, dtype=torch.float64), beta=0.1)
    with pytest.raises(ValueError, match=r"objective: expected one of gspo, grpo, dr-grpo"):
        clipped_objective("ppo", ones, ones, torch.ones(1, 2, dtype=torch.bool), torch.ones(1, dtype=torch.float64))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"rewards: expected a non-empty array"):
        group_advantages([])


def test_masked_tokens_may_hold_huge_values_without_poisoning_the_gradient() -> None:
    # A masked token whose log-ratio overflows exp must not turn the gradient into NaN (inf·0).
    logp_new = torch.tensor([[-1.0, 900.0]], dtype=torch.float64, requires_grad=True)
    for objective in ("gspo", "grpo", "dr-grpo"):
        logp_new.grad = None
        result = clipped_objective(objective, logp_new, torch.tensor([[-1.0, 0.0]], dtype=torch.float64), torch.tensor([[True, False]]), torch.tensor([2.0], dtype=torch.float64))
        result.loss.backward()
        assert result.loss.item() == pytest.approx(-2.0)
        assert logp_new.grad.tolist() == [[-2.0, 0.0]]
