"""μ on a Hugging Face causal LM (``model.kind 'transformers'``), ARCO's own setting: the backbone
``from_pretrained(name)`` with a peft LoRA adapter (``lora``) and μ's score head over its last
hidden states. transformers and peft are imported only here, when such a μ is built, so that a
sidecar without them serves the tiny μ and names the missing package for this one.

The adapter keeps the interface of ``mu_lora.TinyLora`` (parameters, reference, training, state),
so ``Mu``'s optimiser groups, μ_ref and checkpoints are one code path for both kinds. Only the
tiny kind runs on a machine without them; ``tests/test_mu_transformers.py`` tests this one where
transformers, tokenizers and peft are installed. ``mu.generate`` runs ``mu_generate``'s loop through
the model's own key/value cache, the adapter active; the ONNX export is the tiny μ's alone.
"""

from __future__ import annotations

import inspect
from typing import Optional

import torch
from torch import nn

from .model import dtype_argument, optional_import
from .mu_model import MuNetwork, ScoreHead
from .peft_lora import ADAPTER, REFERENCE, PeftLora

ADAPTER_DIR = "mu-adapter"
"""The peft adapter directory beside ``mu.pt`` (``save_pretrained``); μ_ref's is ``mu-reference-adapter``."""
REFERENCE_DIR = "mu-reference-adapter"


class TransformersMuNetwork(nn.Module):
    """μ's two heads on a pretrained causal LM: its own LM head, and the score head over the pooled
    last hidden states. ``forward`` and ``scores`` are ``MuNetwork``'s, over ``hidden`` here."""

    def __init__(self, name: str, k: int, lora: Optional[dict], dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        transformers = optional_import("transformers", "mu.init with model.kind 'transformers'")
        if lora is not None:
            optional_import("peft", "mu.init with lora on model.kind 'transformers'")
        # Always the dtype asked for (float32 by default), never the checkpoint's: transformers 5
        # loads in the checkpoint's own dtype by default (bfloat16 for most pretrained LMs). The
        # score head is float32 whatever the backbone's (``scores`` casts its input), and so are
        # peft's adapter weights (its autocast_adapter_dtype upcasts them on a half-precision base).
        self.inner = transformers.AutoModelForCausalLM.from_pretrained(name, **dtype_argument(transformers, dtype))
        # The model's own tokenizer: μ's prompts, criteria and SFT targets are its ids
        # (``mu.tokenize``/``mu.chat``), as ARCO's μ reads its chat-templated prompt.
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(name)
        config = self.inner.config
        self.vocab_size = int(config.vocab_size)
        self.max_seq_len = int(getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", 2048))
        self.n_layers = int(config.num_hidden_layers)
        self.score_head = ScoreHead(int(config.hidden_size), k)

    @property
    def lm_head(self) -> nn.Module:
        return self.inner.get_output_embeddings()

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, list]:
        out = self.inner(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True, use_cache=False)
        return out.hidden_states[-1], []

    def scores(self, hidden: torch.Tensor, pool_mask: torch.Tensor) -> torch.Tensor:
        """``MuNetwork.scores`` in float32: a bfloat16 or float16 backbone's hidden states are cast
        before the pooling, the score head's weights are float32 throughout."""
        return MuNetwork.scores(self, hidden.to(self.score_head.layers[0].weight.dtype), pool_mask)

    def next_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, past: object = None) -> tuple[torch.Tensor, object]:
        """``MuNetwork.next_logits`` through the model's own cache (``past``: its Cache object, or
        None for the prompt). Positions come from the attention mask, as the tiny μ's do and as HF's
        ``generate`` computes them, so a left-padded row writes what it writes alone; the adapter,
        when there is one, is peft's active adapter."""
        positions = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)[:, -input_ids.shape[1] :]
        out = self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions, past_key_values=past, use_cache=True, **self.last_logits_only())
        return out.logits[:, -1], out.past_key_values

    def last_logits_only(self) -> dict:
        """The keyword that keeps the LM head to the last position where the model takes one
        (transformers ≥ 4.50 ``logits_to_keep``, 4.45 ``num_logits_to_keep``): the prompt's
        [B, T, V] logits of a 150k-token vocabulary would otherwise take gigabytes."""
        causal = self.inner.get_base_model() if hasattr(self.inner, "get_base_model") else self.inner
        accepted = inspect.signature(type(causal).forward).parameters
        return next(({name: 1} for name in ("logits_to_keep", "num_logits_to_keep") if name in accepted), {})

    @staticmethod
    def keep_rows(cache: object, rows: torch.Tensor) -> object:
        if isinstance(cache, tuple):  # the legacy format of older transformers: per layer (key, value)
            return tuple((key.index_select(0, rows), value.index_select(0, rows)) for key, value in cache)
        cache.batch_select_indices(rows)  # type: ignore[attr-defined]  # DynamicCache, in place
        return cache

    forward = MuNetwork.forward
    backbone_parameters = MuNetwork.backbone_parameters

    def base_state(self) -> dict[str, torch.Tensor]:
        """Nothing under LoRA: the frozen base is ``from_pretrained(name)`` again, not a copy in μ's checkpoint."""
        if hasattr(self.inner, "peft_config"):
            return {}
        return {name: t for name, t in self.state_dict().items() if not name.startswith("score_head.")}


def mu_peft_lora(network: TransformersMuNetwork, settings: dict, seed: int) -> PeftLora:
    """μ's adapter: its peft directories ``mu-adapter`` and ``mu-reference-adapter`` beside ``mu.pt``."""
    return PeftLora(network, settings, seed, needed_for="mu.init with lora on model.kind 'transformers'", adapter_dir=ADAPTER_DIR, reference_dir=REFERENCE_DIR)
