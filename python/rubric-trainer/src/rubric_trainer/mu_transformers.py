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

import contextlib
import copy
import inspect
from pathlib import Path
from typing import Iterator, Optional

import torch
from torch import nn

from .faults import InvalidParams
from .model import dtype_argument, optional_import
from .mu_model import MuNetwork, ScoreHead

ADAPTER = "default"
REFERENCE = "reference"
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


class PeftLora:
    """A peft LoRA adapter (``get_peft_model``) on a ``TransformersMuNetwork``, with μ_ref as a
    second, frozen adapter on the same base (ARCO's ``ref_adapter_view``)."""

    def __init__(self, network: TransformersMuNetwork, settings: dict, seed: int) -> None:
        peft = optional_import("peft", "mu.init with lora on model.kind 'transformers'")
        self.settings = settings
        self.network = network
        self.config = peft.LoraConfig(task_type="CAUSAL_LM", r=settings["r"], lora_alpha=settings["lora_alpha"], lora_dropout=settings["lora_dropout"], target_modules=list(settings["target_modules"]))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            network.inner = peft.get_peft_model(network.inner, self.config)  # freezes the base
        self.has_reference = False

    def named(self, adapter: str) -> dict[str, nn.Parameter]:
        return {name: p for name, p in self.network.inner.named_parameters() if "lora_" in name and f".{adapter}." in name}

    def parameters(self) -> list[nn.Parameter]:
        return list(self.named(ADAPTER).values())

    def state(self) -> dict:
        return {name: p.detach() for name, p in self.named(ADAPTER).items()}

    def freeze_reference(self) -> None:
        inner = self.network.inner
        if not self.has_reference:
            # A config of its own (peft keeps one per adapter and edits it when saving), and the
            # new adapter's random A drawn aside: setting μ_ref leaves the global generator alone.
            with torch.random.fork_rng(devices=[]):
                inner.add_adapter(REFERENCE, copy.deepcopy(self.config))
            inner.set_adapter(ADAPTER)  # add_adapter leaves the active adapter; this marks it trainable again
        reference = self.named(REFERENCE)
        with torch.no_grad():
            for name, p in self.named(ADAPTER).items():
                reference[name.replace(f".{ADAPTER}.", f".{REFERENCE}.")].copy_(p)
        for p in reference.values():
            p.requires_grad_(False)
        self.has_reference = True

    @contextlib.contextmanager
    def reference(self) -> Iterator[None]:
        inner = self.network.inner
        inner.set_adapter(REFERENCE)
        try:
            yield
        finally:
            inner.set_adapter(ADAPTER)  # peft marks the active adapter trainable: the reference stays frozen
            for p in self.named(REFERENCE).values():
                p.requires_grad_(False)

    @contextlib.contextmanager
    def training(self) -> Iterator[None]:
        dropouts = [m for name, m in self.network.inner.named_modules() if name.endswith(f"lora_dropout.{ADAPTER}")]
        for module in dropouts:
            module.train()
        try:
            yield
        finally:
            for module in dropouts:
                module.eval()

    def files(self) -> list[str]:
        return [ADAPTER_DIR, REFERENCE_DIR]

    def write(self, directory: Path) -> None:
        """The adapters as peft directories (``save_pretrained``: adapter_config.json and the weights;
        peft puts a non-default adapter in a subdirectory named after it)."""
        self.network.inner.save_pretrained(str(directory / ADAPTER_DIR), selected_adapters=[ADAPTER])
        if self.has_reference:
            self.network.inner.save_pretrained(str(directory / REFERENCE_DIR), selected_adapters=[REFERENCE])

    def read(self, directory: Path) -> dict:
        """Loads the adapters into the model itself; nothing is left for the caller's state-dict load."""
        peft = optional_import("peft", "mu.load of a μ with lora on model.kind 'transformers'")
        # Onto the model's own device: load_peft_weights otherwise reads onto CUDA whenever torch sees it.
        device = str(next(iter(self.named(ADAPTER).values())).device)
        peft.set_peft_model_state_dict(self.network.inner, peft.load_peft_weights(str(directory / ADAPTER_DIR), device=device), adapter_name=ADAPTER)
        reference = directory / REFERENCE_DIR / REFERENCE
        if reference.exists():
            self.freeze_reference()
            peft.set_peft_model_state_dict(self.network.inner, peft.load_peft_weights(str(reference), device=device), adapter_name=REFERENCE)
        return {}

    def merged(self) -> nn.Module:
        raise InvalidParams("mu.export writes the ONNX graphs of a μ with model.kind 'tiny' only", {"path": "params.model.kind"})
