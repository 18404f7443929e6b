"""The network of ARCO's rubric model μ: one causal transformer backbone with two heads, the LM
head that writes a step's criteria and a score head that scores them, d ∈ [−1, 1]^K.

The backbone is a small GPT like ``model.TinyCausalLM``, rewritten rather than reused because μ
needs what the policy's model lacks: an attention mask (steps of different lengths share a batch)
and a key/value cache that ONNX can carry between a prefill graph and a decode graph. Positions
are counted from the attention mask (cumsum − 1), so left padding (batched generation) and right
padding (batched scoring) give every real token the same position as it has alone.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

MASKED = -1e9
"""The additive bias of a key a query may not see. Finite, not −inf: a padding query that sees no
key at all then gets a uniform (finite) softmax instead of NaN, and its output is never read."""

Cache = list[tuple[torch.Tensor, torch.Tensor]]
"""Per layer, keys and values [batch, heads, positions, head width]."""


def mask_geometry(attention_mask: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The new tokens' positions [B, T] and the additive attention bias [B, 1, T, P + T] of a mask
    over the cached positions and the ``length`` new ones (1 = a real token). A query sees a key
    when the key is real and its position is not later than the query's; positions come from the
    mask (cumsum − 1), so this one rule is both the causal mask and the padding mask, for every μ
    backbone (``MuNetwork``, ``mu_llama``)."""
    mask = attention_mask.long()
    key_positions = torch.cumsum(mask, dim=1) - 1  # [B, P + T]
    query_positions = key_positions[:, -length:]
    visible = (key_positions.unsqueeze(1) <= query_positions.unsqueeze(2)) & (mask.unsqueeze(1) > 0)  # [B, T, P + T]
    return query_positions, torch.where(visible, 0.0, MASKED).unsqueeze(1)


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        # Python constants, not read off the input: the ONNX trace keeps only batch and length dynamic.
        self.n_heads = n_heads
        self.width = d_model
        self.head = d_model // n_heads
        self.scale = 1.0 / math.sqrt(self.head)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        # LoRA deltas on slices of qkv by target name (``mu_lora``); empty without an adapter, so a
        # μ without LoRA has the same parameters, state dict and traced graph as before.
        self.lora = nn.ModuleDict()

    def forward(self, x: torch.Tensor, bias: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch, length = x.shape[0], x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=2)
        if "q_proj" in self.lora:
            q = q + self.lora["q_proj"](x)
        if "v_proj" in self.lora:
            v = v + self.lora["v_proj"](x)
        q, k, v = (t.reshape(batch, length, self.n_heads, self.head).transpose(1, 2) for t in (q, k, v))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        mixed = F.softmax((q @ k.transpose(2, 3)) * self.scale + bias, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, length, self.width)), (k, v)


class MuBlock(nn.Module):
    """A pre-norm transformer block."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = CachedSelfAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor, bias: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        mixed, present = self.attention(self.norm1(x), bias, past)
        x = x + mixed
        return x + self.mlp(self.norm2(x)), present


class ScoreHead(nn.Module):
    """ARCO's score head (``dual_head_mu.py``): H→512→128→K, GELU between, tanh at the end."""

    def __init__(self, d_model: int, k: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d_model, 512), nn.GELU(), nn.Linear(512, 128), nn.GELU(), nn.Linear(128, k), nn.Tanh())

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.layers(pooled)


class MuNetwork(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, d_ff: int, max_seq_len: int, k: int) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.n_layers = n_layers
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(MuBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.score_head = ScoreHead(d_model, k)

    def backbone_parameters(self) -> list[nn.Parameter]:
        head = {id(p) for p in self.score_head.parameters()}
        return [p for p in self.parameters() if id(p) not in head]

    def base_state(self) -> dict[str, torch.Tensor]:
        """The backbone's own weights: the state dict without the score head and any LoRA adapter."""
        return {name: t for name, t in self.state_dict().items() if not name.startswith("score_head.") and ".lora." not in name}

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, past: Optional[Cache] = None) -> tuple[torch.Tensor, Cache]:
        """The last hidden states [B, T, H] of ``input_ids`` [B, T], and the cache after them.

        ``attention_mask`` [B, P + T] covers the cached positions and the new ones (1 = a real token).
        A query sees a key when the key is real and its position is not later than the query's;
        positions come from the mask, so this one rule is both the causal mask and the padding mask.
        """
        query_positions, bias = mask_geometry(attention_mask, input_ids.shape[1])
        x = self.tokens(input_ids) + self.positions(query_positions.clamp(min=0))
        presents: Cache = []
        for i, block in enumerate(self.blocks):
            x, present = block(x, bias.to(x.dtype), past[i] if past is not None else None)
            presents.append(present)
        return self.norm(x), presents

    def next_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, past: Optional[Cache] = None) -> tuple[torch.Tensor, Cache]:
        """One step of ``mu_generate``'s loop: the LM head's logits at the last new position [B, V]
        and the cache after ``input_ids`` (what ``PrefillGraph`` and ``DecodeGraph`` compute)."""
        hidden, presents = self.hidden(input_ids, attention_mask, past)
        return self.lm_head(hidden[:, -1]), presents

    @staticmethod
    def keep_rows(cache: Cache, rows: torch.Tensor) -> Cache:
        """The cache of the batch rows ``rows`` only (rows that stopped writing leave the batch)."""
        return [(key.index_select(0, rows), value.index_select(0, rows)) for key, value in cache]

    def scores(self, hidden: torch.Tensor, pool_mask: torch.Tensor) -> torch.Tensor:
        """d [B, K]: the score head over the masked mean of ``hidden`` where ``pool_mask`` is 1."""
        weights = pool_mask.to(hidden.dtype).unsqueeze(2)
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        return self.score_head(pooled)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        pool_mask: torch.Tensor,
        logits: bool = True,
        positions: Optional[torch.Tensor] = None,
    ) -> tuple[Optional[torch.Tensor], torch.Tensor]:
        """The training forward: (log-softmax of the LM head, d [B, K]).

        The log-softmax is [B, T, V] over every position, or [B, C, V] over ``positions`` [B, C]
        only (the criteria window μ's losses read): the LM head over every position of a batch
        of long prompts costs more than the rest of the step together (B·T·V floats, and their
        gradient), and the training losses never read a prompt position's logits.

        DistributedDataParallel installs its gradient hooks around the wrapped module's own
        ``forward``, so μ's steps must come through here rather than ``hidden``/``scores``. With
        ``logits`` False the LM head is not run and None stands for its output: a step without a
        KL term does not use the LM head, and DDP (find_unused_parameters) learns which
        parameters a step leaves out by walking back from what ``forward`` returns, so an output
        the loss never reads would leave DDP waiting for gradients that never come.
        """
        hidden, _ = self.hidden(input_ids, attention_mask)
        logp = None
        if logits:
            read = hidden if positions is None else hidden.gather(1, positions.unsqueeze(2).expand(-1, -1, hidden.shape[2]))
            logits = self.lm_head(read)
            if logits.dtype in (torch.float16, torch.bfloat16):
                # A half-precision transformers backbone's (this forward is that network's too):
                # the log-softmax, the CE and the KL in float32.
                logits = logits.float()
            logp = torch.log_softmax(logits, dim=2)
        return logp, self.scores(hidden, pool_mask)


class ScoreGraph(nn.Module):
    """What ``score.onnx`` computes: (input_ids, attention_mask, pool_mask) → scores [B, K]."""

    def __init__(self, network: MuNetwork) -> None:
        super().__init__()
        self.network = network

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pool_mask: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.network.hidden(input_ids, attention_mask)
        return self.network.scores(hidden, pool_mask)


class PrefillGraph(nn.Module):
    """What ``prefill.onnx`` computes: (input_ids, attention_mask) → the last position's logits
    [B, V] and every layer's keys and values. Only the last position: generation reads nothing
    else, and [B, T, V] at B = 250 would materialise 1.5 GB (the inputs are left-padded, so the
    last position is every row's last real token)."""

    def __init__(self, network: MuNetwork) -> None:
        super().__init__()
        self.network = network

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        hidden, presents = self.network.hidden(input_ids, attention_mask)
        return (self.network.lm_head(hidden[:, -1]), *[t for kv in presents for t in kv])


class DecodeGraph(nn.Module):
    """What ``decode.onnx`` computes: new tokens, the mask over past + new, and the past keys and
    values (past_key_0, past_value_0, past_key_1, …) → the last new position's logits [B, V] and
    the extended keys and values."""

    def __init__(self, network: MuNetwork) -> None:
        super().__init__()
        self.network = network

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *past_flat: torch.Tensor) -> tuple[torch.Tensor, ...]:
        past = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(self.network.n_layers)]
        hidden, presents = self.network.hidden(input_ids, attention_mask, past)
        return (self.network.lm_head(hidden[:, -1]), *[t for kv in presents for t in kv])


def cache_names(prefix: str, n_layers: int) -> list[str]:
    return [f"{prefix}_{kind}_{i}" for i in range(n_layers) for kind in ("key", "value")]
