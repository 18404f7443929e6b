"""GSPO, GRPO and Dr.GRPO clipped objectives, the k3 KL estimator and group advantages in torch.

These are the definitions of @rubric/core's src/policy (and of the shared vectors in
packages/core/fixtures/policy-gradient-vectors.json): the same inputs give the same loss, ratios
and clipped fraction, and autograd gives core's hand-written gradients. Token arrays are padded
[sequence, token] tensors with a boolean mask; every sequence needs at least one unmasked token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence

import torch

Objective = Literal["gspo", "grpo", "dr-grpo"]
OBJECTIVES: tuple[Objective, ...] = ("gspo", "grpo", "dr-grpo")

# (ε_low, ε_high) when not given: GSPO's are the ARCANE paper's, GRPO's the usual 0.2.
DEFAULT_CLIP: dict[str, tuple[float, float]] = {"gspo": (3e-4, 4e-4), "grpo": (0.2, 0.2), "dr-grpo": (0.2, 0.2)}


@dataclass
class ObjectiveResult:
    loss: torch.Tensor
    """The scalar loss to minimise (differentiable): the clipped surrogate plus β·KL."""
    ratios: torch.Tensor
    """GSPO: one sequence ratio s_k per sequence; GRPO / Dr.GRPO: r_k,t at every token, masked or not."""
    clipped_fraction: float
    """GSPO: clipped sequences / sequences; GRPO / Dr.GRPO: clipped unmasked tokens / unmasked tokens."""
    kl: Optional[torch.Tensor]
    """(1/K) Σ_k masked-mean_t k3, unscaled by β; present whenever a reference is given."""


def clipped_objective(
    objective: Objective,
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    *,
    eps_low: Optional[float] = None,
    eps_high: Optional[float] = None,
    beta: float = 0.0,
    logp_ref: Optional[torch.Tensor] = None,
    max_tokens: Optional[float] = None,
) -> ObjectiveResult:
    """The clipped policy-gradient loss of one group of K sequences.

    GSPO: s_k = exp(masked mean_t (new − old)), loss = −(1/K) Σ_k min(s_k·A_k, clip(s_k)·A_k).
    GRPO: r_k,t = exp(new − old), loss = −(1/K) Σ_k (1/|m_k|) Σ_t m_k,t·min(r·A_k, clip(r)·A_k).
    Dr.GRPO: as GRPO with a constant normaliser L (``max_tokens``, default the largest |m_k|).
    All add β·KL with KL = (1/K) Σ_k masked-mean_t k3(ref − new) when ``logp_ref`` is given.
    """
    if objective not in DEFAULT_CLIP:
        raise ValueError(f"objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if beta > 0 and logp_ref is None:
        raise ValueError(f"logp_ref: required when beta > 0 (beta is {beta}), got nothing")
    default_low, default_high = DEFAULT_CLIP[objective]
    low = 1 - (default_low if eps_low is None else eps_low)
    high = 1 + (default_high if eps_high is None else eps_high)
    mask = mask.bool()
    counts = mask.sum(dim=1).to(logp_new.dtype)
    if bool((counts == 0).any()):
        row = int((counts == 0).nonzero()[0, 0])
        raise ValueError(f"mask[{row}]: every token is masked out; a sequence needs at least one unmasked token")
    K = logp_new.shape[0]
    # Masked positions take log-ratio 0 before exp: padding and masked tokens may hold any value,
    # and exp of a huge masked value would put inf·0 = NaN into the gradient through torch.where.
    log_ratio = torch.where(mask, logp_new - logp_old, torch.zeros_like(logp_new))

    if objective == "gspo":
        ratio = torch.exp(log_ratio.sum(dim=1) / counts)
        term, clipped = _clipped_term(ratio, advantages, low, high)
        policy_loss = (0 - term.sum()) / K
        ratios = ratio.detach()
        clipped_fraction = float(clipped.sum()) / K
    else:
        ratio = torch.exp(log_ratio)
        term, clipped = _clipped_term(ratio, advantages.unsqueeze(1), low, high)
        term = torch.where(mask, term, torch.zeros_like(term))
        if objective == "grpo":
            normaliser = counts
        else:
            normaliser = torch.full_like(counts, float(max_tokens) if max_tokens is not None else float(counts.max()))
        policy_loss = (0 - (term.sum(dim=1) / normaliser).sum()) / K
        with torch.no_grad():
            ratios = torch.exp(logp_new - logp_old)
        clipped_fraction = float((clipped & mask).sum()) / float(mask.sum())

    if logp_ref is None:
        return ObjectiveResult(policy_loss, ratios, clipped_fraction, None)
    kl = kl_k3(logp_new, logp_ref, mask).mean
    return ObjectiveResult(policy_loss + beta * kl, ratios, clipped_fraction, kl)


def _clipped_term(ratio: torch.Tensor, advantage: torch.Tensor, low: float, high: float) -> tuple[torch.Tensor, torch.Tensor]:
    """min(ratio·A, clip(ratio, low, high)·A) and where the clipped side is the active one.

    The choice tests the ratio against the bounds (as core does) rather than comparing the two
    products, so it is exact at the bounds, which are not clipped (like torch.clamp), and the
    clipped side carries no gradient.
    """
    above = (advantage > 0) & (ratio > high)
    below = (advantage < 0) & (ratio < low)
    term = torch.where(above, high * advantage, torch.where(below, low * advantage, ratio * advantage))
    return term, above | below


@dataclass
class KlK3:
    per_token: torch.Tensor
    """k3 at every token, masked or not (no gradient)."""
    mean: torch.Tensor
    """(1/K) Σ_k (1/|m_k|) Σ_t m_k,t·k3_k,t, differentiable with respect to logp."""


def kl_k3(logp: torch.Tensor, logp_ref: torch.Tensor, mask: torch.Tensor) -> KlK3:
    """The k3 estimator of KL(π_θ ‖ π_ref): exp(ref − θ) − (ref − θ) − 1 per token, and its masked mean."""
    mask = mask.bool()
    counts = mask.sum(dim=1).to(logp.dtype)
    # expm1 keeps k3 = (e^δ − 1) − δ accurate (and ≥ 0) for tiny δ, exactly as core computes it.
    delta = torch.where(mask, logp_ref - logp, torch.zeros_like(logp))
    k3 = torch.expm1(delta) - delta
    with torch.no_grad():
        everywhere = logp_ref - logp
        per_token = torch.expm1(everywhere) - everywhere
    return KlK3(per_token, (k3.sum(dim=1) / counts).sum() / logp.shape[0])


def group_advantages(rewards: Sequence[float], normalize: Literal["std", "none"] = "std", eps: float = 1e-4, ddof: int = 0) -> list[float]:
    """(r − mean)/(std + eps) with std over n − ddof, or r − mean with normalize "none" (Dr.GRPO).

    A group whose rewards are all equal carries no signal and gets zeros (even with eps = 0).
    """
    n = len(rewards)
    if n == 0:
        raise ValueError("rewards: expected a non-empty array of rewards, got an empty array")
    if not 0 <= ddof < n:
        raise ValueError(f"ddof: expected an integer in [0, {n - 1}], got {ddof}")
    if min(rewards) == max(rewards):
        return [0.0] * n
    mean = sum(rewards) / n
    centred = [r - mean for r in rewards]
    if normalize == "none":
        return centred
    denominator = (sum(d * d for d in centred) / (n - ddof)) ** 0.5 + eps
    return [d / denominator for d in centred]


def pad_rows(rows: Sequence[Sequence[float]], dtype: torch.dtype = torch.float64, fill: float = 0.0) -> torch.Tensor:
    """Ragged [sequence][token] rows as one right-padded tensor (the padding must be masked out)."""
    width = max(len(row) for row in rows)
    out = torch.full((len(rows), width), fill, dtype=dtype)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=dtype)
    return out


def unpad_rows(tensor: torch.Tensor, lengths: Sequence[int]) -> list[list[float]]:
    """The inverse of :func:`pad_rows`: each row cut back to its length, as Python floats."""
    values = tensor.detach().cpu().tolist()
    return [row[:n] for row, n in zip(values, lengths)]
