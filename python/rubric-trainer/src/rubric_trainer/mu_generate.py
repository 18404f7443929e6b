"""``mu.generate``: μ writes criteria with its LM head and key/value cache. The TypeScript
generator (onnxruntime-node over prefill.onnx and decode.onnx) runs the same loop, so every rule
here, down to the float64 inverse CDF of a sampled token, is part of the contract between the two.
A transformers μ runs the same loop through its model's own cache (``next_logits``/``keep_rows``
of either network), with its LoRA adapter active.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import torch

from .faults import InvalidParams, NonFinite
from .mu import Mu
from .xoshiro import Xoshiro128StarStar


def next_tokens(logits: torch.Tensor, temperature: float, streams: Optional[Sequence[Xoshiro128StarStar]]) -> list[int]:
    """One token per row of ``logits`` [B, V], as ``generate`` documents: the argmax (lowest id
    on ties) when greedy, else the inverse CDF of softmax(logits / temperature) at one draw per row.
    Computed in float64, as the TypeScript twin computes on JavaScript numbers."""
    values = logits.double()
    if not bool(torch.isfinite(values).all()):
        raise NonFinite("μ's logits are not finite; no token can be chosen", {})
    if streams is None:
        # torch.argmax returns the first of equal maxima: ties go to the lowest id.
        return [int(i) for i in values.argmax(dim=1)]
    scaled = values / temperature
    if not bool(torch.isfinite(scaled).all()):
        raise InvalidParams(f"params.temperature: logits / {temperature} overflow float64; use a larger temperature", {"path": "params.temperature"})
    p = torch.softmax(scaled, dim=1)
    cumulative = torch.cumsum(p, dim=1)  # a running sum, left to right: its last entry is sum(p)
    u = torch.tensor([stream.next() for stream in streams], dtype=torch.float64)
    above = cumulative > (u * cumulative[:, -1]).unsqueeze(1)
    tokens = []
    for b in range(values.shape[0]):
        hits = above[b].nonzero()
        # No entry above u·sum(p) only by rounding (u·sum(p) rounded up to sum(p)): the last id with mass.
        tokens.append(int(hits[0]) if len(hits) else int((p[b] > 0).nonzero()[-1]))
    return tokens


def generate(
    mu: Mu,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    eos_id: int,
    temperature: float = 0.0,
    rngs: Optional[Sequence[dict]] = None,
    check_cancelled: Optional[Callable[[], None]] = None,
) -> dict:
    """``mu.generate``: new tokens after each prompt, by the LM head with the key/value cache.

    The loop the TypeScript generator (onnxruntime-node, prefill.onnx + decode.onnx) repeats, so
    that both backends write the same tokens:

    - The prompts are left-padded into one batch (mask 0 on the padding); positions come from
      the attention mask, so a row writes what it writes alone. Every row's first token comes
      from the prompt's last-position logits, each later one from the logits after feeding the
      row's previous token.
    - Greedy (``temperature`` 0): the token is the argmax of the logits, the lowest id on ties.
    - Sampled (``temperature`` > 0): in float64, z = logits / temperature, p = softmax(z) (exp of
      z − max z, divided by its sum), c = the running sum of p from id 0 up, so c[V − 1] is
      sum(p); u = ``next()`` of the row's own xoshiro128** stream (one draw per token the row
      writes, EOS included); the token is the smallest id i with c[i] > u · c[V − 1], or, if
      rounding leaves none, the largest id with p > 0.
    - A row stops after writing ``eos_id`` (not in its ids; finished true), after writing
      ``max_new_tokens`` tokens, or when prompt + written tokens reach ``max_seq_len`` (both
      finished false). A prompt must leave room for one token: at most max_seq_len − 1 ids.

    ``rngs`` are core ``RngState``s, one per prompt, required when sampling; they are read, not
    returned: the caller advances its own streams by the tokens written (EOS included).
    """
    n = len(prompts)
    budgets = [min(max_new_tokens, mu.max_seq_len - len(prompt)) for prompt in prompts]
    if temperature > 0 and (rngs is None or len(rngs) != n):
        # The wire schema refuses this already; a direct caller must not get greedy tokens silently.
        raise InvalidParams(f"rng: sampling (temperature {temperature}) needs one stream state per prompt ({n}), got {'none' if rngs is None else len(rngs)}", {"path": "rng"})
    streams = [Xoshiro128StarStar(state["words"]) for state in rngs] if temperature > 0 and rngs is not None else None
    width = max(len(prompt) for prompt in prompts)
    ids = torch.zeros(n, width, dtype=torch.long)
    mask = torch.zeros(n, width, dtype=torch.long)
    for b, prompt in enumerate(prompts):
        ids[b, width - len(prompt) :] = torch.tensor(list(prompt))
        mask[b, width - len(prompt) :] = 1
    ids, mask = ids.to(mu.device), mask.to(mu.device)
    network = mu.network
    written: list[list[int]] = [[] for _ in range(n)]
    finished = [False] * n
    rows = list(range(n))  # the prompts still writing, in batch order
    with torch.no_grad():
        logits, cache = network.next_logits(ids, mask)
        while True:
            if check_cancelled is not None:
                check_cancelled()
            chosen = next_tokens(logits, temperature, [streams[b] for b in rows] if streams is not None else None)
            keep: list[int] = []
            for i, (b, token) in enumerate(zip(rows, chosen)):
                if token == eos_id:
                    finished[b] = True
                    continue
                written[b].append(token)
                if len(written[b]) < budgets[b]:
                    keep.append(i)
            if not keep:
                break
            if len(keep) < len(rows):
                # Rows that stopped leave the batch (and the cache): no compute on them.
                index = torch.tensor(keep, device=mu.device)
                cache = network.keep_rows(cache, index)
                mask = mask.index_select(0, index)
                rows = [rows[i] for i in keep]
            feed = torch.tensor([[written[b][-1]] for b in rows], device=mu.device)
            mask = torch.cat([mask, torch.ones(len(rows), 1, dtype=torch.long, device=mu.device)], dim=1)
            logits, cache = network.next_logits(feed, mask, cache)
    return {"ids": written, "finished": finished}
