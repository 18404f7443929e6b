"""ARCO's losses for μ as pure functions: the class weights and the decomposition loss of
``mu.step``, and its KL to μ_ref. Apart from ``Mu``, which splits them across micro-batches and
ranks, so that each can be checked against its formula alone.
"""

from __future__ import annotations

from typing import Sequence

import torch

POSITIVE_REWARD = 0.5
"""A trajectory with R > 0.5 is of the positive class when the batch is balanced."""


def class_weights(rewards: Sequence[float]) -> list[float]:
    """ARCO's class balance: w = N/(2·n_pos) for R > 0.5, N/(2·n_neg) otherwise.

    When the batch holds one class only, its weight is N/(2·N) = ½ (the formula with the absent
    class's count never used); the released trainer's notes do not say more, and a constant factor
    on the whole batch only rescales the step, which Adam undoes.
    >>> class_weights([1, 0, 0, 0])
    [2.0, 0.6666666666666666, 0.6666666666666666, 0.6666666666666666]
    """
    n = len(rewards)
    positives = sum(1 for r in rewards if r > POSITIVE_REWARD)
    negatives = n - positives
    return [n / (2 * positives) if r > POSITIVE_REWARD else n / (2 * negatives) for r in rewards]


def decomposition_loss(step_scores: Sequence[torch.Tensor], rewards: Sequence[float]) -> torch.Tensor:
    """(1/N) Σ_τ w_τ (Σ_t mean_k d_{t,k} − R_τ)² for ``step_scores[τ]`` = d of trajectory τ, [T_τ, K].

    The 1/N is ARCO's: the trainer sums the per-trajectory losses' gradients and divides by the
    batch size. With both classes present Σ w = N, so this is a weighted mean.
    """
    return weighted_square_errors(step_scores, rewards, class_weights(rewards)) / len(rewards)


def weighted_square_errors(step_scores: Sequence[torch.Tensor], rewards: Sequence[float], weights: Sequence[float]) -> torch.Tensor:
    """Σ_τ w_τ (Σ_t mean_k d_{t,k} − R_τ)²: the decomposition loss's numerator, with the weights
    given, so that a rank can sum its own trajectories under weights drawn from the whole batch."""
    total = step_scores[0].new_zeros(())
    for d, reward, weight in zip(step_scores, rewards, weights):
        total = total + weight * (d.mean(dim=1).sum() - reward) ** 2
    return total


def value_loss(step_scores: Sequence[torch.Tensor], rewards: Sequence[float]) -> torch.Tensor:
    """(1/N) Σ_τ w_τ (1/T_τ) Σ_t (mean_k d_{t,k} − R_τ)²: ours, beside ARCO's decomposition loss.
    Every step's score is regressed on its trajectory's outcome (a value of the prefix and the
    action), class-balanced as the decomposition loss is, each trajectory weighing the same
    whatever its length; @rubric/core's ``valueLoss`` is the same function (shared vectors)."""
    return value_square_errors(step_scores, rewards, class_weights(rewards)) / len(rewards)


def value_square_errors(step_scores: Sequence[torch.Tensor], rewards: Sequence[float], weights: Sequence[float]) -> torch.Tensor:
    """Σ_τ w_τ (1/T_τ) Σ_t (mean_k d_{t,k} − R_τ)²: the value loss's numerator, with the weights given."""
    total = step_scores[0].new_zeros(())
    for d, reward, weight in zip(step_scores, rewards, weights):
        total = total + weight * ((d.mean(dim=1) - reward) ** 2).mean()
    return total


def criteria_kl(logp: torch.Tensor, logp_ref: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """KL(μ_ref ‖ μ) per step, averaged over its criteria tokens: ``logp``/``logp_ref`` are
    log-softmaxes [B, T, V], ``mask`` [B, T] marks criteria positions; returns [B].

    The direction is ARCO's code, not its docstring: ``F.kl_div(logp_current, logp_ref,
    log_target=True)`` is Σ_v p_ref (log p_ref − log p), i.e. KL(μ_ref ‖ μ), which is what is
    computed here (mass-covering: μ is pushed to keep every token μ_ref likes).
    """
    per_token = (logp_ref.exp() * (logp_ref - logp)).sum(dim=2)
    weights = mask.to(per_token.dtype)
    return (per_token * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
