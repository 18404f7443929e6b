"""TRL reward functions backed by the TypeScript reward server of @rubric/verifiers (``serveRewards``).

The server scores each (prompt, completion) with a rubric and answers ``POST /score`` with
``{"rewards": [...], "results": [...]}``; a reward is null when it could not be computed (an
error verdict), and stays None here — TRL (≥ 0.16) ignores None rewards rather than taking a
made-up 0. Standard library only (urllib), so any trainer process can use it.

    from rubric_trainer import make_trl_reward
    trainer = GRPOTrainer(..., reward_funcs=[make_trl_reward("http://127.0.0.1:8787")])
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, Callable, Optional, Sequence

RewardFunction = Callable[..., list]


class RewardServerError(RuntimeError):
    """The reward server could not be reached, refused the batch, or answered something malformed."""

    def __init__(self, url: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.status = status


def text_of(item: Any) -> str:
    """A prompt or completion as text: plain strings, or TRL's conversational lists of messages
    (``[{"role": ..., "content": ...}]``), whose contents are joined by newlines."""
    if isinstance(item, str):
        return item
    if isinstance(item, list) and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in item):
        return "\n".join(m["content"] for m in item)
    raise TypeError(f"expected a string or a list of {{role, content}} messages, got {type(item).__name__}")


def score_batch(
    url: str, prompts: Sequence[str], completions: Sequence[str], timeout_s: float, token: Optional[str] = None
) -> list:
    body = json.dumps({"prompts": list(prompts), "completions": list(completions)}).encode("utf-8")
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{url}/score", data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        try:
            detail = json.loads(detail).get("error", detail)
        except (ValueError, AttributeError):
            pass
        raise RewardServerError(url, f"HTTP {error.code}: {detail}", error.code) from error
    except (urllib.error.URLError, OSError) as error:
        raise RewardServerError(url, f"cannot reach the reward server: {getattr(error, 'reason', error)}") from error
    except ValueError as error:
        raise RewardServerError(url, f"the reply is not JSON: {error}") from error
    rewards = answer.get("rewards") if isinstance(answer, dict) else None
    if not isinstance(rewards, list) or len(rewards) != len(completions):
        raise RewardServerError(url, f"expected {{rewards: [{len(completions)} numbers or nulls]}}, got {str(answer)[:200]}")
    for i, reward in enumerate(rewards):
        if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))):
            raise RewardServerError(url, f"rewards[{i}]: expected a number or null, got {reward!r}")
    return [None if r is None else float(r) for r in rewards]


def make_trl_reward(
    url: str,
    *,
    timeout_s: float = 60.0,
    max_batch: int = 1024,
    name: str = "rubric_reward",
    token: Optional[str] = None,
) -> RewardFunction:
    """A reward function with TRL's signature, ``(prompts, completions, **kwargs) -> list[float | None]``,
    that scores through the reward server at ``url`` in batches of at most ``max_batch``
    (the server refuses more than its own maxBatch, 4,096 by default). ``token`` (default
    ``$RUBRIC_REWARD_TOKEN``) is sent as ``Authorization: Bearer`` for a server started with one."""
    base = url.rstrip("/")
    token = token if token is not None else os.environ.get("RUBRIC_REWARD_TOKEN")

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list:
        # kwargs carries the dataset's other columns (TRL passes them all); the rubric needs none.
        if len(prompts) != len(completions):
            raise ValueError(f"prompts: expected {len(completions)} prompts (one per completion), got {len(prompts)}")
        prompt_texts = [text_of(p) for p in prompts]
        completion_texts = [text_of(c) for c in completions]
        rewards: list = []
        for start in range(0, len(completion_texts), max_batch):
            end = start + max_batch
            rewards.extend(score_batch(base, prompt_texts[start:end], completion_texts[start:end], timeout_s, token))
        return rewards

    # TRL logs each reward function under its __name__.
    reward.__name__ = name
    return reward


def trl_reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list:
    """The TRL reward function for the server named by ``$RUBRIC_REWARD_URL`` (e.g. http://127.0.0.1:8787).

    TRL calls reward functions with dataset columns only, so the address comes from the
    environment; use :func:`make_trl_reward` to pass it (and a timeout) explicitly instead.
    """
    url = os.environ.get("RUBRIC_REWARD_URL")
    if not url:
        raise RewardServerError("(unset)", "set RUBRIC_REWARD_URL to the reward server's address, e.g. http://127.0.0.1:8787")
    return make_trl_reward(url)(prompts, completions, **kwargs)
