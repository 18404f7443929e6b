"""Checkpoint files: the one place where the policy's and μ's checkpoints are written with
``torch.save`` and read back as tensors and plain values only. What a checkpoint holds is its owner's (``Policy.save``,
``Mu.save``); how it reaches the disk and comes back, and which failures are the file's, is here.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import types
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator

import torch

from .faults import CheckpointFault

TORCH_MAJOR = int(torch.__version__.split(".")[0])

# What Policy.save and Mu.save pickle, found by reading their files' opcodes: dicts, lists, numbers
# and strings (no global needed), OrderedDict (state dicts) and tensors (rebuilt by
# _rebuild_tensor_v2 from storages, which torch.load resolves itself before asking the unpickler).
ALLOWED_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): torch._utils._rebuild_tensor_v2,
}


class RefusedGlobal(pickle.UnpicklingError):
    """A checkpoint's pickle names something other than tensors and plain containers."""


class TensorsOnlyUnpickler(pickle.Unpickler):
    """An unpickler that can build nothing but the allowlist: a checkpoint is data, never code, and
    a pickle can otherwise call any function it names (``os.system`` through ``__reduce__``)."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = ALLOWED_GLOBALS.get((module, name))
        if allowed is None and module == "torch" and name.endswith("Storage"):
            storage = getattr(torch, name, None)
            if isinstance(storage, type) and issubclass(storage, (torch.storage.TypedStorage, torch.UntypedStorage)):
                allowed = storage
        if allowed is None:
            raise RefusedGlobal(f"{module}.{name}")
        return allowed


def tensors_only_load(file: Any, **kwargs: Any) -> Any:
    return TensorsOnlyUnpickler(file, **kwargs).load()


# torch's zip loader takes a pickle *module* and subclasses its Unpickler (keeping its own storage
# lookups); ``load`` is there for completeness, should a torch read anything with it.
TENSORS_ONLY_PICKLE = types.SimpleNamespace(__name__="tensors_only_pickle", Unpickler=TensorsOnlyUnpickler, load=tensors_only_load)


def load_tensors_only(path: Path) -> Any:
    """``torch.load`` of a zip checkpoint, refusing anything but tensors and plain values.

    The file is opened once and read through torch's own zip reader, so the archive checked is the
    archive loaded. A TorchScript archive is refused first: torch.load hands those to
    ``torch.jit.load``, code and all, even with ``weights_only`` before torch 2.6. The pre-1.6 format
    is not a zip and is refused by the reader (``write_checkpoint`` never writes it).
    """
    with open(path, "rb") as file:
        with torch.serialization._open_zipfile_reader(file) as archive:
            if torch.serialization._is_torchscript_zip(archive):
                raise CheckpointFault(f"{path}: is a TorchScript archive, not a checkpoint", {"path": str(path)})
            if TORCH_MAJOR < 2:
                # 1.13's torch.load silently replaces any pickle_module with pickle unless weights_only
                # is set, and its weights-only unpickler cannot read floats (Adam's hyperparameters):
                # so its zip loader is called directly, with the tensors-only unpickler.
                return torch.serialization._load(archive, "cpu", TENSORS_ONLY_PICKLE, encoding="utf-8")
        file.seek(0)
        # torch ≥ 2 has a tensors-only unpickler of its own (and refuses an explicit pickle module with it).
        return torch.load(file, map_location="cpu", weights_only=True)


def read_checkpoint(path: Path, expected_format: str) -> dict:
    """The state dict saved at ``path``, or a CheckpointFault naming the file: missing, unreadable,
    of another format, or naming anything but tensors and plain containers in its pickle (refused
    before it is built, so that a hostile file runs nothing)."""
    if not path.is_file():
        raise CheckpointFault(f"{path}: no checkpoint there", {"path": str(path)})
    try:
        state = load_tensors_only(path)
    except CheckpointFault:
        raise
    except RefusedGlobal as error:
        raise CheckpointFault(f"{path}: the loader refuses {error}: a checkpoint holds tensors and plain values only", {"path": str(path)}) from error
    except pickle.UnpicklingError as error:
        if "Weights only load failed" not in str(error):
            raise CheckpointFault(f"{path}: cannot read it: {error}", {"path": str(path)}) from error
        # torch ≥ 2's weights-only unpickler refused a global; its message names it.
        raise CheckpointFault(f"{path}: the loader refuses it: {error}", {"path": str(path)}) from error
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
