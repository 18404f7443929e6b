"""The TRL reward function's own checks. Its scoring against the real TypeScript reward server is
tested from the TypeScript side (packages/gspo/src/sidecar/trl-reward.test.ts), which starts it."""

from __future__ import annotations

import socket

import pytest

from rubric_trainer import RewardServerError, make_trl_reward, trl_reward
from rubric_trainer.reward_client import text_of


def test_conversational_items_become_their_joined_contents() -> None:
    assert text_of("plain") == "plain"
    assert text_of([{"role": "system", "content": "Be brief."}, {"role": "assistant", "content": "Paris."}]) == "Be brief.\nParis."
    with pytest.raises(TypeError, match="expected a string or a list of"):
        text_of([{"role": "assistant"}])


def test_prompts_and_completions_must_pair_up() -> None:
    with pytest.raises(ValueError, match=r"prompts: expected 2 prompts \(one per completion\), got 1"):
        make_trl_reward("http://127.0.0.1:9")(["a"], ["b", "c"])


def test_an_unreachable_server_is_a_named_error() -> None:
    # A port that was free a moment ago: nothing listens there, so the connection is refused.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(RewardServerError, match="cannot reach the reward server") as caught:
        make_trl_reward(f"http://127.0.0.1:{port}", timeout_s=5)(["q"], ["a"])
    assert caught.value.url == f"http://127.0.0.1:{port}" and caught.value.status is None


def test_the_module_level_function_needs_the_server_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUBRIC_REWARD_URL", raising=False)
    with pytest.raises(RewardServerError, match="set RUBRIC_REWARD_URL"):
        trl_reward(["q"], ["a"])
