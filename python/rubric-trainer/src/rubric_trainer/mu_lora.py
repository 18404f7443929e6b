"""LoRA for μ's own small backbone: ARCO trains μ's backbone only through LoRA adapters (r 8,
α 32, dropout 0.05 on q_proj and v_proj), its base weights frozen, and freezes the warm-up adapter
as μ_ref. Written by hand because the small backbone's attention has one fused ``qkv`` Linear,
where peft would find no ``q_proj``/``v_proj`` module: here those names stand for the q and v
slices of ``qkv``.

A delta is scale · B · A with A drawn from the seed and B zero, so a fresh adapter adds exactly
nothing (the base model's scores, bit for bit) and its first step moves B alone. Dropout acts on
the delta's input in training forwards only, drawn from a generator seeded at init, so a run
replays exactly; scoring, generation and the ONNX graphs never drop anything.
"""

from __future__ import annotations

import contextlib
import copy
import math
from pathlib import Path
from typing import Iterator, Optional

import torch
from torch import nn

from .checkpoint import read_checkpoint, restoring, write_checkpoint

ADAPTER_FILE = "mu-adapter.pt"
"""A tiny μ's adapter beside ``mu.pt``: its deltas, the reference's and the dropout generator."""
ADAPTER_FORMAT = "rubric-trainer/mu-adapter/1"
TINY_TARGETS = {"q_proj": 0, "v_proj": 2}
"""The names a tiny μ's LoRA may target, and the slice of the fused ``qkv`` (q, k, v) each stands for."""
DEFAULT_TARGETS = ("q_proj", "v_proj")
MAX_DROPOUT = 1.0
"""A dropout rate must be below 1: at 1 every input is dropped and the rescaling divides by zero."""


class LoraDelta(nn.Module):
    """scale · B · A applied to the input of one projection slice: [.., d_in] → [.., d_out]."""

    def __init__(self, d_in: int, d_out: int, r: int, alpha: float, dropout: float, generator: torch.Generator) -> None:
        super().__init__()
        self.lora_A = nn.Parameter(torch.empty(r, d_in))
        self.lora_B = nn.Parameter(torch.zeros(d_out, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))  # peft's initialisation of A
        self.scale = alpha / r
        self.dropout = dropout
        self.generator = generator
        self.reference: Optional[tuple[torch.Tensor, torch.Tensor]] = None
        self.use_reference = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_reference:
            assert self.reference is not None
            a, b = self.reference
        else:
            a, b = self.lora_A, self.lora_B
        if self.training and self.dropout > 0:
            keep = torch.rand(x.shape, generator=self.generator, dtype=x.dtype).to(x.device) >= self.dropout
            x = x * keep / (1.0 - self.dropout)
        return (x @ a.t() @ b.t()) * self.scale

    def delta(self) -> torch.Tensor:
        """The weight this delta adds, [d_out, d_in]: what merging folds into the base weight."""
        return (self.lora_B @ self.lora_A) * self.scale

    def freeze_reference(self) -> None:
        self.reference = (self.lora_A.detach().clone(), self.lora_B.detach().clone())

    def __deepcopy__(self, memo: dict) -> "LoraDelta":
        # A torch.Generator cannot be deep-copied; a copy (a merged export network, say) shares it.
        clone = LoraDelta.__new__(LoraDelta)
        memo[id(self)] = clone
        for key, value in self.__dict__.items():
            clone.__dict__[key] = value if key == "generator" else copy.deepcopy(value, memo)
        return clone


class TinyLora:
    """The LoRA adapter of a tiny μ's network: its deltas (one per layer and target), the reference
    copy μ_ref reads, and the adapter's own state for checkpoints."""

    def __init__(self, network: nn.Module, settings: dict, seed: int) -> None:
        self.settings = settings
        self.generator = torch.Generator().manual_seed(seed)
        self.network = network
        for block in network.blocks:
            attention = block.attention
            for name in settings["target_modules"]:
                attention.lora[name] = LoraDelta(attention.width, attention.width, settings["r"], settings["lora_alpha"], settings["lora_dropout"], self.generator)
        self.has_reference = False

    def deltas(self) -> Iterator[LoraDelta]:
        for block in self.network.blocks:
            yield from block.attention.lora.values()

    def parameters(self) -> list[nn.Parameter]:
        return [p for delta in self.deltas() for p in delta.parameters()]

    def state(self) -> dict:
        """The adapter's tensors by their names in the network's state dict (``blocks.0.attention.lora.q_proj.lora_A``)."""
        return {name: tensor for name, tensor in self.network.state_dict().items() if ".lora." in name}

    def reference_state(self) -> Optional[dict]:
        if not self.has_reference:
            return None
        state = {}
        for i, block in enumerate(self.network.blocks):
            for target, delta in block.attention.lora.items():
                assert delta.reference is not None
                prefix = f"blocks.{i}.attention.lora.{target}"
                state[f"{prefix}.lora_A"], state[f"{prefix}.lora_B"] = delta.reference
        return state

    def load_reference_state(self, state: dict) -> None:
        for i, block in enumerate(self.network.blocks):
            for target, delta in block.attention.lora.items():
                prefix = f"blocks.{i}.attention.lora.{target}"
                # Read onto the CPU (read_checkpoint); the reference lives where its adapter does.
                delta.reference = (state[f"{prefix}.lora_A"].to(delta.lora_A.device, copy=True), state[f"{prefix}.lora_B"].to(delta.lora_B.device, copy=True))
        self.has_reference = True

    def freeze_reference(self) -> None:
        for delta in self.deltas():
            delta.freeze_reference()
        self.has_reference = True

    @contextlib.contextmanager
    def reference(self) -> Iterator[None]:
        """Forwards inside read the reference adapter (the backbone is shared)."""
        for delta in self.deltas():
            delta.use_reference = True
        try:
            yield
        finally:
            for delta in self.deltas():
                delta.use_reference = False

    @contextlib.contextmanager
    def training(self) -> Iterator[None]:
        """Forwards inside apply the adapter's dropout; the rest of μ stays in eval mode."""
        for delta in self.deltas():
            delta.train()
        try:
            yield
        finally:
            for delta in self.deltas():
                delta.eval()

    def files(self) -> list[str]:
        return [ADAPTER_FILE]

    def write(self, directory: Path) -> None:
        write_checkpoint(directory / ADAPTER_FILE, {"format": ADAPTER_FORMAT, "settings": self.settings, "adapter": self.state(), "reference": self.reference_state(), "generator": self.generator.get_state()})

    def read(self, directory: Path) -> dict:
        """Restores the reference and the dropout generator; returns the adapter's tensors, which the
        caller loads with the rest of the network's state (one strict load checks every name)."""
        path = directory / ADAPTER_FILE
        state = read_checkpoint(path, ADAPTER_FORMAT)
        with restoring(path):
            if state["reference"] is not None:
                self.load_reference_state(state["reference"])
            self.generator.set_state(state["generator"])
        return dict(state["adapter"])

    def merged(self) -> nn.Module:
        """A copy of the network with every delta folded into its slice of ``qkv`` (W + scale·B·A)
        and no adapter left: the plain network the ONNX graphs trace."""
        network = copy.deepcopy(self.network)
        with torch.no_grad():
            for block in network.blocks:
                attention = block.attention
                width = attention.width
                for target, delta in attention.lora.items():
                    at = TINY_TARGETS[target] * width
                    attention.qkv.weight[at : at + width] += delta.delta()
                attention.lora = nn.ModuleDict()
        return network


class ReferenceView(nn.Module):
    """μ_ref when μ trains through an adapter: the shared network read with the reference adapter.
    Called as the network is (``Mu.forward``), always without a gradient."""

    def __init__(self, network: nn.Module, adapter: "TinyLora") -> None:
        super().__init__()
        self.view = [network]  # a list: not a submodule, so μ_ref adds no parameters of its own
        self.adapter = adapter

    def forward(self, *args: object) -> object:
        with torch.no_grad(), self.adapter.reference():
            return self.view[0](*args)
