"""A step, the unit μ reads: the token ids of a step's prompt and of its criteria text, read in one
forward as prompt + criteria. How a request's steps become that forward's tensors and masks, and
how a long batch is cut into forwards of bounded size, is here, shared by scoring and training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

MICRO_BATCH_TOKENS = 4096
"""Padded tokens per training forward. One forward over a whole batch of long prompts pads every
row to the longest and holds [B, heads, T, T] attention for the backward: measured on 96 steps of
150–600 tokens (d 32, 1 layer, 2 threads), 7.9 s for one forward and backward, 2.1 s in
length-sorted groups of 8."""


@dataclass
class Step:
    prompt: list[int]
    criteria: list[int]


def steps_of(rows: Sequence[dict]) -> list[Step]:
    return [Step(list(r["prompt"]), list(r["criteria"])) for r in rows]


POOLINGS = ("prompt+criteria", "criteria", "last")
"""What the score head reads: the mean hidden state over the whole prompt + criteria (ARCO's), over
the criteria only (ours), or the last position's alone (ours: as a reward model reads a sequence;
in a causal backbone it is the one position that has attended to the whole step)."""


def pool_start(pooling: str, prompt: int, length: int) -> int:
    """The first pooled position of a row of ``length`` tokens whose prompt is ``prompt`` long; the
    pool runs from there to the row's end. The TypeScript engine builds the same mask."""
    if pooling == "prompt+criteria":
        return 0
    if pooling == "criteria":
        return prompt
    if pooling == "last":
        return length - 1
    raise ValueError(f"unknown pooling {pooling!r}; known: {', '.join(POOLINGS)}")


def batch(steps: Sequence[Step], pooling: str) -> dict[str, torch.Tensor]:
    """Right-padded prompt + criteria, with the attention, pooling and criteria-target masks.

    ``targets[b, t]`` is the token position t predicts; ``criteria_mask`` marks the positions
    that predict a criteria token (t = |prompt| − 1 … |prompt| + |criteria| − 2). The same
    window, compacted to C = the longest criteria: ``window`` [B, C] holds those positions
    (0 where a row's criteria are shorter), ``window_mask`` marks the real ones and
    ``window_targets`` the tokens they predict.
    """
    width = max(len(s.prompt) + len(s.criteria) for s in steps)
    shape = (len(steps), width)
    input_ids, attention, pool, criteria_mask, targets = (torch.zeros(shape, dtype=torch.long) for _ in range(5))
    window_shape = (len(steps), max(1, max(len(s.criteria) for s in steps)))
    window, window_mask, window_targets = (torch.zeros(window_shape, dtype=torch.long) for _ in range(3))
    for b, step in enumerate(steps):
        row = step.prompt + step.criteria
        n, p, c = len(row), len(step.prompt), len(step.criteria)
        input_ids[b, :n] = torch.tensor(row)
        attention[b, :n] = 1
        pool[b, pool_start(pooling, p, n) : n] = 1
        targets[b, : n - 1] = torch.tensor(row[1:])
        criteria_mask[b, p - 1 : n - 1] = 1
        if c > 0:
            window[b, :c] = torch.arange(p - 1, n - 1)
            window_mask[b, :c] = 1
            window_targets[b, :c] = torch.tensor(step.criteria)
    return {
        "input_ids": input_ids,
        "attention_mask": attention,
        "pool_mask": pool,
        "criteria_mask": criteria_mask,
        "targets": targets,
        "window": window,
        "window_mask": window_mask,
        "window_targets": window_targets,
    }


def micro_batches(lengths: Sequence[int], budget: int = MICRO_BATCH_TOKENS) -> list[list[int]]:
    """Row indices sorted by length, grouped so that a group's padded size (rows × its longest)
    stays within ``budget`` tokens; a row longer than the budget is a group alone.
    >>> micro_batches([5, 1, 3, 2], budget=6)
    [[1, 3], [2], [0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) + 1) * lengths[i] > budget:
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups
