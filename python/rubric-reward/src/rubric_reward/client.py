"""The client of the rubric reward server (``rubric serve``, or ``serveRewards`` of @rubric/verifiers),
and TRL reward functions on top of it. Standard library only (urllib), so any trainer process can
use it.

The server scores each (prompt, completion) with a TypeScript rubric and answers ``POST /score``
with ``{"rewards": [...], "results": [...]}``; a reward is null when it could not be computed (an
error verdict, e.g. a judge that did not answer). What a null becomes here is an explicit policy,
``on_error``: ``"raise"`` (the default) raises :class:`RewardUnavailableError` naming each
completion and its cause; ``"none"`` hands TRL a ``None`` (TRL ≥ 0.16 leaves it out of the
reward); a number stands in for it. Never a silent 0.

    from rubric_reward import make_trl_reward
    trainer = GRPOTrainer(..., reward_funcs=[make_trl_reward("http://127.0.0.1:8787")])
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

RewardFunction = Callable[..., list]
ErrorPolicy = Union[str, float]


class RewardServerError(RuntimeError):
    """The reward server could not be reached, refused the batch, or answered something malformed."""

    def __init__(self, url: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.status = status


class RewardUnavailableError(RuntimeError):
    """Some completions got no reward (an error verdict under the server's policy), and the
    policy is ``"raise"``. ``causes`` maps each one's index in the batch to why."""

    def __init__(self, url: str, causes: dict[int, str]) -> None:
        shown = "; ".join(f"[{i}] {cause}" for i, cause in list(causes.items())[:5])
        more = f"; and {len(causes) - 5} more" if len(causes) > 5 else ""
        super().__init__(
            f"{url}: {len(causes)} completion(s) got no reward: {shown}{more} "
            "(pass on_error='none' to hand TRL None for them, or a number to stand in)"
        )
        self.url = url
        self.causes = causes


@dataclass(frozen=True)
class ScoreReply:
    """One batch's answer: a reward per completion (None when it could not be computed) and the
    server's full result per completion (total, normalized, verdicts with their errors)."""

    rewards: list
    results: list


def text_of(item: Any) -> str:
    """A prompt or completion as text: plain strings, or TRL's conversational lists of messages
    (``[{"role": ..., "content": ...}]``), whose contents are joined by newlines."""
    if isinstance(item, str):
        return item
    if isinstance(item, list) and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in item):
        return "\n".join(m["content"] for m in item)
    raise TypeError(f"expected a string or a list of {{role, content}} messages, got {type(item).__name__}")


def cause_of(result: Any) -> str:
    """Why a completion has no reward, from the server's result for it: its first error verdict
    (criterion and message), else the scoring error."""
    if isinstance(result, dict):
        for verdict in result.get("verdicts") or []:
            if isinstance(verdict, dict) and verdict.get("status") == "error":
                return f"{verdict.get('criterionId')}: {verdict.get('error') or 'error verdict'}"
        if result.get("scoreError"):
            return str(result["scoreError"])
    return "no reward and no cause given"


def check_policy(on_error: ErrorPolicy) -> ErrorPolicy:
    if on_error in ("raise", "none"):
        return on_error
    if isinstance(on_error, (int, float)) and not isinstance(on_error, bool):
        return float(on_error)
    raise ValueError(f"on_error: expected 'raise', 'none' or a number, got {on_error!r}")


class RewardClient:
    """A reward server at ``url``. ``token`` (default ``$RUBRIC_REWARD_TOKEN``) is sent as
    ``Authorization: Bearer`` for a server started with one."""

    def __init__(self, url: str, *, token: Optional[str] = None, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("RUBRIC_REWARD_TOKEN")
        self.timeout_s = timeout_s

    def _request(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")
            try:
                detail = json.loads(detail).get("error", detail)
            except (ValueError, AttributeError):
                pass
            raise RewardServerError(self.url, f"HTTP {error.code}: {detail}", error.code) from error
        except (urllib.error.URLError, OSError) as error:
            raise RewardServerError(self.url, f"cannot reach the reward server: {getattr(error, 'reason', error)}") from error
        except ValueError as error:
            raise RewardServerError(self.url, f"the reply is not JSON: {error}") from error

    def health(self) -> dict:
        """``GET /health``: ``{"ok": true, "name": ...}`` from a server that is up."""
        answer = self._request("GET", "/health")
        if not isinstance(answer, dict) or answer.get("ok") is not True:
            raise RewardServerError(self.url, f"expected {{ok: true}} from /health, got {str(answer)[:200]}")
        return answer

    def score(self, prompts: Sequence[str], completions: Sequence[str], ids: Optional[Sequence[str]] = None) -> ScoreReply:
        """One ``POST /score``; the server refuses batches above its own limit (4,096 by default)."""
        body: dict = {"prompts": list(prompts), "completions": list(completions)}
        if ids is not None:
            body["ids"] = list(ids)
        answer = self._request("POST", "/score", body)
        rewards = answer.get("rewards") if isinstance(answer, dict) else None
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(rewards, list) or len(rewards) != len(completions):
            raise RewardServerError(self.url, f"expected {{rewards: [{len(completions)} numbers or nulls]}}, got {str(answer)[:200]}")
        for i, reward in enumerate(rewards):
            if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))):
                raise RewardServerError(self.url, f"rewards[{i}]: expected a number or null, got {reward!r}")
        if not isinstance(results, list) or len(results) != len(completions):
            results = [None] * len(completions)
        return ScoreReply([None if r is None else float(r) for r in rewards], results)


def make_trl_reward(
    url: str,
    *,
    timeout_s: float = 60.0,
    max_batch: int = 1024,
    name: str = "rubric_reward",
    token: Optional[str] = None,
    on_error: ErrorPolicy = "raise",
) -> RewardFunction:
    """A reward function with TRL's signature, ``(prompts, completions, **kwargs) -> list``, that
    scores through the reward server at ``url`` in batches of at most ``max_batch``. A completion
    the server could not score is handled by ``on_error`` (see the module's docstring); the whole
    call is scored before any error is raised, so the message names every such completion."""
    client = RewardClient(url, token=token, timeout_s=timeout_s)
    policy = check_policy(on_error)

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list:
        # kwargs carries the dataset's other columns (TRL passes them all); the rubric needs none.
        if len(prompts) != len(completions):
            raise ValueError(f"prompts: expected {len(completions)} prompts (one per completion), got {len(prompts)}")
        prompt_texts = [text_of(p) for p in prompts]
        completion_texts = [text_of(c) for c in completions]
        rewards: list = []
        causes: dict[int, str] = {}
        for start in range(0, len(completion_texts), max_batch):
            end = start + max_batch
            reply = client.score(prompt_texts[start:end], completion_texts[start:end])
            for offset, (value, result) in enumerate(zip(reply.rewards, reply.results)):
                if value is None:
                    causes[start + offset] = cause_of(result)
            rewards.extend(reply.rewards)
        if causes and policy == "raise":
            raise RewardUnavailableError(client.url, causes)
        if isinstance(policy, float):
            return [policy if r is None else r for r in rewards]
        return rewards

    # TRL logs each reward function under its __name__.
    reward.__name__ = name
    return reward


def trl_reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list:
    """The TRL reward function for the server named by ``$RUBRIC_REWARD_URL`` (e.g.
    http://127.0.0.1:8787), with the error policy ``$RUBRIC_REWARD_ON_ERROR`` (``raise``, the
    default; ``none``; or a number). TRL calls reward functions with dataset columns only, so the
    settings come from the environment; :func:`make_trl_reward` takes them as arguments instead."""
    url = os.environ.get("RUBRIC_REWARD_URL")
    if not url:
        raise RewardServerError("(unset)", "set RUBRIC_REWARD_URL to the reward server's address, e.g. http://127.0.0.1:8787")
    policy: ErrorPolicy = os.environ.get("RUBRIC_REWARD_ON_ERROR", "raise")
    if policy not in ("raise", "none"):
        try:
            policy = float(policy)
        except ValueError:
            raise ValueError(f"RUBRIC_REWARD_ON_ERROR: expected raise, none or a number, got {policy!r}") from None
    return make_trl_reward(url, on_error=policy)(prompts, completions, **kwargs)
