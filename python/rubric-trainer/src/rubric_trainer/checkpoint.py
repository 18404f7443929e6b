"""Checkpoint files: the one place where the policy's and μ's checkpoints are written with
``torch.save`` and read with ``torch.load``. What a checkpoint holds is its owner's (``Policy.save``,
``Mu.save``); how it reaches the disk and comes back, and which failures are the file's, is here.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import torch

from .faults import CheckpointFault

# torch ≥ 2 can refuse anything but tensors and plain containers when loading; 1.13's restricted
# unpickler cannot read floats yet, so there checkpoints load the classic way (they are our own files).
SAFE_LOAD = {"weights_only": True} if int(torch.__version__.split(".")[0]) >= 2 else {}


def read_checkpoint(path: Path, expected_format: str) -> dict:
    """The state dict saved at ``path``, or a CheckpointFault naming the file: missing, unreadable, or of another format."""
    if not path.is_file():
        raise CheckpointFault(f"{path}: no checkpoint there", {"path": str(path)})
    try:
        state = torch.load(path, map_location="cpu", **SAFE_LOAD)
    except Exception as error:  # a truncated or foreign file: whatever torch raises, the fault is the file's
        raise CheckpointFault(f"{path}: cannot read it: {error}", {"path": str(path)}) from error
    if not isinstance(state, dict) or state.get("format") != expected_format:
        raise CheckpointFault(f"{path}: not a {expected_format} checkpoint", {"path": str(path)})
    return state


def write_checkpoint(path: Path, state: dict) -> str:
    """Writes ``state`` to ``path`` atomically (a temporary file, then a rename): a crash mid-write
    leaves the previous checkpoint. ``read_checkpoint`` reads it back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".pt.tmp")
    torch.save(state, temporary)
    os.replace(temporary, path)
    return str(path)


@contextlib.contextmanager
def restoring(path: Path) -> Iterator[None]:
    """Around ``load_state_dict`` calls: a state that does not fit the model (other shapes, missing
    keys) is the checkpoint's fault, reported as such, not an internal error."""
    try:
        yield
    except (RuntimeError, ValueError, KeyError) as error:
        raise CheckpointFault(f"{path}: does not fit the model: {error}", {"path": str(path)}) from error
