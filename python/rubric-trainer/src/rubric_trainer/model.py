"""The policies the sidecar can hold: a small causal transformer built from a config (plain torch,
trains on a CPU in seconds, exports to ONNX), or a Hugging Face causal LM by name when
transformers is installed (optionally with a peft LoRA adapter). Both map token ids [batch, seq]
to next-token logits [batch, seq, vocab].
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
from typing import Any, Iterable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from .faults import InvalidParams, Unavailable


# One layer's cached keys and values, [batch, heads, positions, head width] each.
KeyValue = tuple[torch.Tensor, torch.Tensor]


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, max_seq_len: int) -> None:
        super().__init__()
        # Widths are Python constants, not read off the input: the ONNX trace then keeps only the
        # batch and sequence axes dynamic.
        self.n_heads = n_heads
        self.width = d_model
        self.head = d_model // n_heads
        self.scale = 1.0 / math.sqrt(self.head)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        # An additive mask (−inf above the diagonal) sliced to the input's length: exports to ONNX
        # with a dynamic sequence axis. Floating point, not bool: DDP broadcasts buffers when it
        # wraps the model, and gloo cannot broadcast bools. Not persistent: the config defines it.
        self.register_buffer("causal_bias", torch.full((max_seq_len, max_seq_len), float("-inf")).triu(1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length = x.shape[0], x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=2)
        q, k, v = (t.reshape(batch, length, self.n_heads, self.head).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(2, 3)) * self.scale + self.causal_bias[:length, :length]
        mixed = F.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, length, self.width))

    def cached(self, x: torch.Tensor, past: KeyValue | None) -> tuple[torch.Tensor, KeyValue]:
        """``forward`` for new positions after ``past`` (their keys and values), and the cache after them:
        the same arithmetic as a forward over the whole sequence, without recomputing the prefix."""
        batch, length = x.shape[0], x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=2)
        q, k, v = (t.reshape(batch, length, self.n_heads, self.head).transpose(1, 2) for t in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        total = k.shape[2]
        scores = (q @ k.transpose(2, 3)) * self.scale + self.causal_bias[total - length : total, :total]
        mixed = F.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, length, self.width)), (k, v)


class Block(nn.Module):
    """A pre-norm transformer block."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, max_seq_len: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = CausalSelfAttention(d_model, n_heads, max_seq_len)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))

    def cached(self, x: torch.Tensor, past: KeyValue | None) -> tuple[torch.Tensor, KeyValue]:
        mixed, present = self.attention.cached(self.norm1(x), past)
        x = x + mixed
        return x + self.mlp(self.norm2(x)), present


class TinyCausalLM(nn.Module):
    """A small GPT: token and position embeddings, pre-norm blocks, a final norm and an LM head."""

    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, d_ff: int, max_seq_len: int) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, d_ff, max_seq_len) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self.register_buffer("position_ids", torch.arange(max_seq_len), persistent=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(input_ids) + self.positions(self.position_ids[: input_ids.shape[1]])
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def decode(self, input_ids: torch.Tensor, past: list[KeyValue] | None) -> tuple[torch.Tensor, list[KeyValue]]:
        """Logits of the last new position [batch, vocab] for ``input_ids`` that follow ``past``, and
        the cache after them: generation in O(length) per token instead of a forward over the prefix."""
        start = 0 if past is None else past[0][0].shape[2]
        x = self.tokens(input_ids) + self.positions(self.position_ids[start : start + input_ids.shape[1]])
        present: list[KeyValue] = []
        for i, block in enumerate(self.blocks):
            x, kv = block.cached(x, None if past is None else past[i])
            present.append(kv)
        return self.head(self.norm(x[:, -1:, :]))[:, 0, :], present


class TransformersCausalLM(nn.Module):
    """A Hugging Face causal LM and its tokenizer (``from_pretrained(name)``: a hub name, or a local
    directory where nothing can be downloaded), returning logits; it samples through the model's
    own key/value cache."""

    def __init__(self, name: str, dtype: torch.dtype) -> None:
        super().__init__()
        transformers = optional_import("transformers", "policy.init with model.kind 'transformers'")
        self.inner = transformers.AutoModelForCausalLM.from_pretrained(name, **dtype_argument(transformers, dtype))
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(name)
        config = self.inner.config
        self.vocab_size = int(config.vocab_size)
        self.max_seq_len = int(getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", 2048))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        # Right padding only: a causal model's logits before the padding never see it, so no attention mask.
        return self.inner(input_ids=input_ids, use_cache=False).logits

    def decode(self, input_ids: torch.Tensor, past: Any) -> tuple[torch.Tensor, Any]:
        """Logits of the last new position [batch, vocab] after ``past`` (the model's cache object, or
        None), and the cache after them: what ``TinyCausalLM.decode`` does, through transformers."""
        out = self.inner(input_ids=input_ids, past_key_values=past, use_cache=True)
        return out.logits[:, -1, :], out.past_key_values


def dtype_argument(transformers: Any, dtype: torch.dtype) -> dict:
    """``from_pretrained``'s keyword for the dtype to load in. transformers 4.56 renamed torch_dtype
    to dtype; an older one would take an unknown keyword as a config attribute and silently load
    float32. Always pass one: transformers 5 loads in the checkpoint's own dtype ("auto") by default."""
    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": dtype}


def onnx_export_arguments() -> dict:
    """The TorchScript exporter, which the exported graphs are written for: torch ≥ 2.9 exports
    through dynamo unless told otherwise, and its graphs fail the onnx checker at opset 17
    (measured on torch 2.13); Debian's torch 1.13 has no ``dynamo`` argument at all."""
    return {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def optional_import(module: str, needed_for: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise Unavailable(f"{module} is not installed in this interpreter, and {needed_for} needs it: pip install {module} (or use model.kind 'tiny')") from error


def build_model(spec: dict, dtype: torch.dtype, seed: int) -> nn.Module:
    """The model of a validated ``model`` spec, its random initialisation drawn from ``seed``
    (so every rank of a distributed run, and every restart, builds the same parameters)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if spec["kind"] == "transformers":
            # A LoRA adapter (spec["lora"]) is the policy's to add: peft_lora.PeftLora, with π_ref beside it.
            return TransformersCausalLM(spec["name"], dtype)
        model = TinyCausalLM(spec["vocab_size"], spec["d_model"], spec["n_heads"], spec["n_layers"], spec["d_ff"] or 4 * spec["d_model"], spec["max_seq_len"])
        return model.to(dtype)


def check_token_ids(tokens: Sequence[int], vocab_size: int, path: str) -> None:
    """Refuses an id outside the vocabulary, naming its path (an embedding lookup would fail less clearly)."""
    for t, token in enumerate(tokens):
        if not 0 <= token < vocab_size:
            raise InvalidParams(f"{path}[{t}]: expected a token id in [0, {vocab_size - 1}], got {token}", {"path": f"{path}[{t}]"})


def parameter_fingerprint(module: nn.Module) -> str:
    """SHA-256 of the parameters' names and bytes: equal on two copies exactly when they hold the same values."""
    return tensors_fingerprint(module.named_parameters())


def tensors_fingerprint(named: Iterable[tuple[str, torch.Tensor]]) -> str:
    """SHA-256 of named tensors' names and bytes, in the order given."""
    digest = hashlib.sha256()
    for name, tensor in named:
        digest.update(name.encode())
        digest.update(tensor_bytes(tensor))
    return digest.hexdigest()


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """A tensor's raw bytes, wherever it lives. numpy has no bfloat16: such a tensor is read as the
    int16 words that hold it (the same bytes)."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.int16)
    return tensor.numpy().tobytes()
