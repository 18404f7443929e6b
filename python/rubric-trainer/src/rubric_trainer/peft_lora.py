"""A peft LoRA adapter on a transformers model, with its reference as a second frozen adapter on the
same base: what μ (``mu_transformers``) and the policy (``policy``) train when ``lora`` is set. peft
is imported only when one is built, so a sidecar without it serves everything else."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Iterator

import torch
from torch import nn

from .faults import InvalidParams
from .model import optional_import

ADAPTER = "default"
REFERENCE = "reference"


class PeftLora:
    """A peft LoRA adapter (``get_peft_model``) on a module holding a transformers model as
    ``inner`` (μ's ``TransformersMuNetwork``, the policy's ``TransformersCausalLM``), with the
    reference (μ_ref, π_ref) as a second, frozen adapter on the same base (ARCO's
    ``ref_adapter_view``): the base is held once. ``adapter_dir`` and ``reference_dir`` name where
    ``write`` puts the two peft directories, relative to a checkpoint's directory ("." for the
    directory itself, which is then an adapter directory a server such as vLLM loads)."""

    def __init__(self, network: nn.Module, settings: dict, seed: int, *, needed_for: str, adapter_dir: str, reference_dir: str) -> None:
        peft = optional_import("peft", needed_for)
        self.settings = settings
        self.network = network
        self.adapter_dir = adapter_dir
        self.reference_dir = reference_dir
        targets = settings.get("target_modules")
        # None: peft's default targets for the architecture (q_proj and v_proj for Llama and Qwen).
        self.config = peft.LoraConfig(task_type="CAUSAL_LM", r=settings["r"], lora_alpha=settings["lora_alpha"], lora_dropout=settings["lora_dropout"], target_modules=None if targets is None else list(targets))
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
        return [self.adapter_dir, self.reference_dir]

    def write(self, directory: Path) -> None:
        """The adapters as peft directories (``save_pretrained``: adapter_config.json and the weights;
        peft puts a non-default adapter in a subdirectory named after it)."""
        self.network.inner.save_pretrained(str(directory / self.adapter_dir), selected_adapters=[ADAPTER])
        if self.has_reference:
            self.network.inner.save_pretrained(str(directory / self.reference_dir), selected_adapters=[REFERENCE])

    def read(self, directory: Path) -> dict:
        """Loads the adapters into the model itself; nothing is left for the caller's state-dict load.
        A directory without a reference adapter leaves ``has_reference`` as it was: the caller decides."""
        peft = optional_import("peft", "loading a checkpoint with a LoRA adapter on a transformers model")
        # Onto the model's own device: load_peft_weights otherwise reads onto CUDA whenever torch sees it.
        device = str(next(iter(self.named(ADAPTER).values())).device)
        peft.set_peft_model_state_dict(self.network.inner, peft.load_peft_weights(str(directory / self.adapter_dir), device=device), adapter_name=ADAPTER)
        reference = directory / self.reference_dir / REFERENCE
        if reference.exists():
            self.freeze_reference()
            peft.set_peft_model_state_dict(self.network.inner, peft.load_peft_weights(str(reference), device=device), adapter_name=REFERENCE)
        return {}

    def merged(self) -> nn.Module:
        raise InvalidParams("the ONNX exports are written for the small transformer (model.kind 'tiny') only", {"path": "params.model.kind"})
