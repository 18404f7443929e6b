"""The client's own checks. Its scoring against the real TypeScript reward server (`rubric serve`,
installed from this directory by pip) is tested from the TypeScript side
(packages/cli/src/serve.test.ts and packages/sidecar/src/client/trl-reward.test.ts), which starts it."""

from __future__ import annotations

import socket

import pytest

from rubric_reward import RewardServerError, RewardUnavailableError, make_trl_reward, trl_reward
from rubric_reward.client import cause_of, check_policy, text_of


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


def test_the_error_policy_is_checked_and_a_cause_is_read_from_the_result() -> None:
    assert check_policy("raise") == "raise" and check_policy("none") == "none" and check_policy(0) == 0.0
    for bad in ("zero", True, None):
        with pytest.raises(ValueError, match="on_error: expected 'raise', 'none' or a number"):
            check_policy(bad)
    result = {"verdicts": [{"criterionId": "a", "status": "ok"}, {"criterionId": "tone", "status": "error", "error": "judge: HTTP 400"}]}
    assert cause_of(result) == "tone: judge: HTTP 400"
    assert cause_of({"verdicts": [], "scoreError": "ScoreError: gate"}) == "ScoreError: gate"
    assert cause_of(None) == "no reward and no cause given"
    message = str(RewardUnavailableError("http://h", {i: f"c{i}" for i in range(7)}))
    assert "7 completion(s) got no reward: [0] c0; [1] c1; [2] c2; [3] c3; [4] c4; and 2 more" in message
    assert "on_error='none'" in message


def test_the_module_level_function_reads_its_policy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_REWARD_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("RUBRIC_REWARD_ON_ERROR", "sometimes")
    with pytest.raises(ValueError, match="RUBRIC_REWARD_ON_ERROR: expected raise, none or a number"):
        trl_reward(["q"], ["a"])
