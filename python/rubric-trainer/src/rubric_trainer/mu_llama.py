"""μ on a small pretrained llama read from a GGUF file (``model.kind 'llama'``): the backbone a
language model's pretraining shaped, which ARCO's μ has (a Qwen3 through transformers) and μ
built from scratch lacks, on a machine without transformers or a download. The same two heads as
``mu_model.MuNetwork`` (its LM head writes the criteria, the score head scores them), the same
attention-mask rule, and the same three ONNX graphs, so @rubric/arco-heads serves it unchanged.

The architecture is llama.cpp's ``LLM_ARCH_LLAMA``: RMSNorm before attention and MLP, rotary
positions on adjacent pairs (ggml's ``rope`` "normal" mode, which GGUF's stored q/k weights are
laid out for), grouped-query attention, a SwiGLU MLP and no biases. Positions come from the
attention mask (cumsum − 1) as in ``MuNetwork``, so left and right padding read alike. The key
and value cache holds every query head (the grouped heads repeated): the manifest's cache shape
is then ``heads × headWidth`` for both kinds, at the cost of a cache twice as wide as llama.cpp's
for a 2:1 grouping — small at the sizes that run on a CPU.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch
from torch import nn
from torch.nn import functional as F

from .gguf import GgufFault, GgufFile
from .mu_model import Cache, MuNetwork, ScoreHead, mask_geometry

DEFAULT_ROPE_BASE = 10000.0
DEFAULT_NORM_EPS = 1e-5
ADD_SPACE_PREFIX_DEFAULT = True
"""llama.cpp's default for a SentencePiece vocabulary that does not say."""


class RmsNorm(nn.Module):
    def __init__(self, width: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary positions on adjacent pairs (x₀, x₁), (x₂, x₃), …: x [B, heads, T, width], cos and
    sin [B, 1, T, width / 2]."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class LlamaAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head = d_model // n_heads
        self.width = d_model
        self.scale = 1.0 / math.sqrt(self.head)
        self.q = nn.Linear(d_model, n_heads * self.head, bias=False)
        self.k = nn.Linear(d_model, n_kv_heads * self.head, bias=False)
        self.v = nn.Linear(d_model, n_kv_heads * self.head, bias=False)
        self.out = nn.Linear(n_heads * self.head, d_model, bias=False)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch, length = x.shape[0], x.shape[1]

        def heads(t: torch.Tensor, count: int) -> torch.Tensor:
            return t.reshape(batch, length, count, self.head).transpose(1, 2)

        def grouped(t: torch.Tensor) -> torch.Tensor:
            # Query head i reads key/value head i // (n_heads / n_kv_heads), as llama.cpp groups
            # them. expand + reshape with the traced batch and length, not repeat_interleave,
            # whose ONNX export fixes the example's shape.
            repeat = self.n_heads // self.n_kv_heads
            return t.unsqueeze(2).expand(batch, self.n_kv_heads, repeat, length, self.head).reshape(batch, self.n_heads, length, self.head)

        q = rotate(heads(self.q(x), self.n_heads), cos, sin)
        k = grouped(rotate(heads(self.k(x), self.n_kv_heads), cos, sin))
        v = grouped(heads(self.v(x), self.n_kv_heads))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        # One baddbmm for scale × q·kᵀ + bias: the three passes over [B, heads, T, T] it replaces
        # cost a third of μ-SFT's time at the gym's 700-token prompts (a head of 8 dimensions
        # leaves the matrix products memory-bound).
        keys = k.shape[2]
        flat = (batch * self.n_heads, length, keys)
        logits = torch.baddbmm(bias.expand(batch, self.n_heads, length, keys).reshape(flat), q.reshape(batch * self.n_heads, length, self.head), k.reshape(batch * self.n_heads, keys, self.head).transpose(1, 2), alpha=self.scale)
        mixed = (F.softmax(logits, dim=-1) @ v.reshape(batch * self.n_heads, keys, self.head)).reshape(batch, self.n_heads, length, self.head)
        return self.out(mixed.transpose(1, 2).reshape(batch, length, self.width)), (k, v)


class LlamaBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, d_ff: int, eps: float) -> None:
        super().__init__()
        self.attention_norm = RmsNorm(d_model, eps)
        self.attention = LlamaAttention(d_model, n_heads, n_kv_heads)
        self.mlp_norm = RmsNorm(d_model, eps)
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        mixed, present = self.attention(self.attention_norm(x), bias, cos, sin, past)
        x = x + mixed
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h)), present


class LlamaMuNetwork(nn.Module):
    """μ's two heads on a llama backbone. ``spec`` is ``mu.init``'s model with its architecture
    filled in (``llama_architecture``); the weights are random from the seed until
    ``load_gguf`` (a new μ) or a checkpoint (``Mu.load``) sets them."""

    def __init__(self, spec: dict, k: int) -> None:
        super().__init__()
        d_model, n_heads, n_kv_heads = spec["d_model"], spec["n_heads"], spec["n_kv_heads"]
        self.vocab_size = spec["vocab_size"]
        self.max_seq_len = spec["max_seq_len"]
        self.n_layers = spec["n_layers"]
        self.rope_base = float(spec["rope_base"])
        self.head = d_model // n_heads
        self.tokens = nn.Embedding(self.vocab_size, d_model)
        self.blocks = nn.ModuleList(LlamaBlock(d_model, n_heads, n_kv_heads, spec["d_ff"], spec["norm_eps"]) for _ in range(self.n_layers))
        self.norm = RmsNorm(d_model, spec["norm_eps"])
        self.lm_head = nn.Linear(d_model, self.vocab_size, bias=False)
        self.score_head = ScoreHead(d_model, k)

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, past: Optional[Cache] = None) -> tuple[torch.Tensor, Cache]:
        """``MuNetwork.hidden``'s contract: positions and visibility from the mask alone."""
        query_positions, bias = mask_geometry(attention_mask, input_ids.shape[1])
        x = self.tokens(input_ids)
        bias = bias.to(x.dtype)
        # θ_i = base^(−2i / width) for pair i; the angle of a token is its position × θ_i.
        pairs = torch.arange(0, self.head, 2, dtype=torch.float32, device=x.device)
        inverse = torch.pow(torch.tensor(self.rope_base, device=x.device), -pairs / self.head)
        angles = query_positions.clamp(min=0).to(torch.float32).unsqueeze(2) * inverse  # [B, T, width / 2]
        cos, sin = angles.cos().unsqueeze(1).to(x.dtype), angles.sin().unsqueeze(1).to(x.dtype)
        presents: Cache = []
        for i, block in enumerate(self.blocks):
            x, present = block(x, bias, cos, sin, past[i] if past is not None else None)
            presents.append(present)
        return self.norm(x), presents

    next_logits = MuNetwork.next_logits
    keep_rows = staticmethod(MuNetwork.keep_rows)
    scores = MuNetwork.scores
    forward = MuNetwork.forward
    backbone_parameters = MuNetwork.backbone_parameters
    base_state = MuNetwork.base_state

    def load_gguf(self, gguf: GgufFile) -> None:
        """The backbone's weights from the file (the score head keeps its seeded draw). An output
        matrix the file leaves out is the token embeddings' (a tied LM head)."""
        names = {"tokens.weight": "token_embd.weight", "norm.weight": "output_norm.weight", "lm_head.weight": "output.weight" if "output.weight" in gguf.tensors else "token_embd.weight"}
        for i in range(self.n_layers):
            for ours, theirs in (
                ("attention_norm.weight", "attn_norm.weight"),
                ("attention.q.weight", "attn_q.weight"),
                ("attention.k.weight", "attn_k.weight"),
                ("attention.v.weight", "attn_v.weight"),
                ("attention.out.weight", "attn_output.weight"),
                ("mlp_norm.weight", "ffn_norm.weight"),
                ("gate.weight", "ffn_gate.weight"),
                ("up.weight", "ffn_up.weight"),
                ("down.weight", "ffn_down.weight"),
            ):
                names[f"blocks.{i}.{ours}"] = f"blk.{i}.{theirs}"
        state = self.state_dict()
        with torch.no_grad():
            for ours, theirs in names.items():
                tensor = gguf.tensor(theirs)
                if tuple(tensor.shape) != tuple(state[ours].shape):
                    raise GgufFault(gguf.path, f"tensor {theirs!r} is {list(tensor.shape)}, where the architecture its metadata states needs {list(state[ours].shape)}", gguf.param)
                state[ours].copy_(tensor)


def llama_architecture(gguf: GgufFile, max_seq_len: Optional[int]) -> dict:
    """The network's shape from the file's metadata (``llama.*``), as ``mu.init``'s model records
    it, so a checkpoint rebuilds the network without the file. ``max_seq_len`` caps the context
    the file states (rotary positions have no table; the cap bounds μ's sequences)."""
    meta = gguf.metadata
    architecture = meta.get("general.architecture")
    if architecture != "llama":
        raise GgufFault(gguf.path, f"is a {architecture!r} model; μ reads llama GGUF files (general.architecture 'llama')", gguf.param)

    def integer(key: str) -> int:
        value = meta.get(f"llama.{key}")
        if not isinstance(value, int) or value < 1:
            raise GgufFault(gguf.path, f"has no positive llama.{key} in its metadata (got {value!r})", gguf.param)
        return value

    d_model, n_heads = integer("embedding_length"), integer("attention.head_count")
    n_kv_heads = int(meta.get("llama.attention.head_count_kv", n_heads))
    if d_model % n_heads != 0 or n_kv_heads < 1 or n_heads % n_kv_heads != 0:
        raise GgufFault(gguf.path, f"has {n_heads} heads and {n_kv_heads} key/value heads over a width of {d_model}; the heads must divide the width and the key/value heads the heads", gguf.param)
    rope = meta.get("llama.rope.dimension_count", d_model // n_heads)
    if rope != d_model // n_heads:
        raise GgufFault(gguf.path, f"rotates {rope} of each head's {d_model // n_heads} dimensions; μ's llama rotates whole heads", gguf.param)
    context = integer("context_length")
    return {
        "vocab_size": len(gguf_vocabulary(gguf)["tokens"]),
        "d_model": d_model,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "n_layers": integer("block_count"),
        "d_ff": integer("feed_forward_length"),
        "max_seq_len": context if max_seq_len is None else min(context, max_seq_len),
        "rope_base": float(meta.get("llama.rope.freq_base", DEFAULT_ROPE_BASE)),
        "norm_eps": float(meta.get("llama.attention.layer_norm_rms_epsilon", DEFAULT_NORM_EPS)),
    }


def gguf_vocabulary(gguf: GgufFile) -> dict[str, Any]:
    """The file's SentencePiece vocabulary as ``mu.init`` returns it to the client, which tokenizes
    μ's text with it (@rubric/arco-heads' sentencepiece tokenizer): pieces, scores, token types,
    the special ids and whether a space is prefixed."""
    meta = gguf.metadata
    model = meta.get("tokenizer.ggml.model")
    if model != "llama":
        raise GgufFault(gguf.path, f"has a {model!r} tokenizer; μ reads SentencePiece vocabularies (tokenizer.ggml.model 'llama')", gguf.param)
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        raise GgufFault(gguf.path, "has no tokenizer.ggml.tokens", gguf.param)
    scores = meta.get("tokenizer.ggml.scores", [0.0] * len(tokens))
    types = meta.get("tokenizer.ggml.token_type", [1] * len(tokens))
    if len(scores) != len(tokens) or len(types) != len(tokens):
        raise GgufFault(gguf.path, f"has {len(tokens)} tokens but {len(scores)} scores and {len(types)} token types", gguf.param)
    return {
        "tokens": tokens,
        "scores": [float(s) for s in scores],
        "types": [int(t) for t in types],
        "bos": int(meta.get("tokenizer.ggml.bos_token_id", 1)),
        "eos": int(meta.get("tokenizer.ggml.eos_token_id", 2)),
        "unknown": int(meta.get("tokenizer.ggml.unknown_token_id", 0)),
        "add_space_prefix": bool(meta.get("tokenizer.ggml.add_space_prefix", ADD_SPACE_PREFIX_DEFAULT)),
    }
