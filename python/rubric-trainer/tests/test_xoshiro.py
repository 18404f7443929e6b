"""rubric_trainer.xoshiro against vectors from @rubric/core itself (tests/make_xoshiro_vectors.cjs):
mu.generate's sampled tokens agree with the TypeScript generator only if every draw does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_trainer.xoshiro import Xoshiro128StarStar

CASES = json.loads((Path(__file__).parent / "xoshiro_vectors.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c["seed"]))
def test_uint32_and_next_match_core(case: dict) -> None:
    rng = Xoshiro128StarStar(case["state"]["words"])
    assert [rng.uint32() for _ in case["uint32"]] == case["uint32"]
    rng = Xoshiro128StarStar(case["state"]["words"])
    # Exact equality: both sides compute (a·2^26 + b) / 2^53 in doubles without rounding.
    assert [rng.next() for _ in case["next"]] == case["next"]


def test_next_uses_two_outputs_high_27_then_low_26_bits() -> None:
    words = CASES[0]["state"]["words"]
    raw = Xoshiro128StarStar(words)
    a, b = raw.uint32(), raw.uint32()
    assert Xoshiro128StarStar(words).next() == ((a >> 5) * 2**26 + (b >> 6)) / 2**53
    assert raw.words != words  # the stream moved on


def test_refuses_states_core_refuses() -> None:
    with pytest.raises(ValueError, match="fixed point"):
        Xoshiro128StarStar([0, 0, 0, 0])
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        Xoshiro128StarStar([1, 2, 3, 2**32])
    with pytest.raises(ValueError, match="4 unsigned"):
        Xoshiro128StarStar([1, 2, 3])
