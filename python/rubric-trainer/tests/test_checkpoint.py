"""Checkpoint files are data, never code (issue 29 item 1): a ``mu.pt`` or ``policy.pt`` whose pickle
names anything but tensors, their storages and plain containers is a CheckpointFault naming the file,
and whatever it would have run does not run, on every torch version the sidecar supports."""

from __future__ import annotations

import builtins
import os
import shlex
from pathlib import Path
from typing import Callable

import pytest
import torch

from conftest import TINY_MODEL
from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.distributed import DistContext
from rubric_trainer.faults import CheckpointFault
from rubric_trainer.mu import MU_CHECKPOINT_FILE, MU_CHECKPOINT_FORMAT, Mu
from rubric_trainer.mu_steps import Step
from rubric_trainer.policy import CHECKPOINT_FILE, CHECKPOINT_FORMAT, Policy
from rubric_trainer.protocol import PARAMS

SINGLE = DistContext(0, 1, 0)
MU_MODEL = {"kind": "tiny", "vocab_size": 12, "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 24}


class ShellCommand:
    """Unpickling it runs ``touch marker`` through ``os.system``: the issue's attack."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(str(self.marker))}",))


class OpenFile:
    """Unpickling it creates ``marker`` with ``builtins.open``: no shell, no ``os`` import."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (builtins.open, (str(self.marker), "w"))


PAYLOADS: dict[str, Callable[[Path], object]] = {"os.system": ShellCommand, "builtins.open": OpenFile}


def load_mu(directory: Path) -> object:
    return Mu.load(str(directory))


def load_policy(directory: Path) -> object:
    return Policy.load(str(directory), SINGLE, None)


LOADERS = {"mu": (MU_CHECKPOINT_FILE, MU_CHECKPOINT_FORMAT, load_mu), "policy": (CHECKPOINT_FILE, CHECKPOINT_FORMAT, load_policy)}


@pytest.mark.parametrize("owner", sorted(LOADERS))
@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("where", ["whole file", "inside a well-formed checkpoint"])
def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path: Path, owner: str, payload: str, where: str) -> None:
    file, format_, load = LOADERS[owner]
    marker = tmp_path / "ran"
    evil = PAYLOADS[payload](marker)
    # Inside a dict that says the right format, so that only the unpickler can stand in the way.
    state = evil if where == "whole file" else {"format": format_, "init": evil, "steps": 0}
    torch.save(state, tmp_path / file)
    with pytest.raises(CheckpointFault, match=rf"{file}: .*refuses") as fault:
        load(tmp_path)
    assert str(tmp_path / file) in str(fault.value)
    assert not marker.exists(), "the checkpoint's pickle ran code"


@pytest.mark.parametrize("owner", sorted(LOADERS))
def test_a_pickle_in_torchs_legacy_format_is_refused_and_runs_nothing(tmp_path: Path, owner: str) -> None:
    # torch.load reads the pre-1.6 format with pickle_module.load, outside the Unpickler subclass.
    file, format_, load = LOADERS[owner]
    marker = tmp_path / "ran"
    torch.save({"format": format_, "init": ShellCommand(marker)}, tmp_path / file, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointFault, match=rf"{file}: "):
        load(tmp_path)
    assert not marker.exists(), "the checkpoint's pickle ran code"


def test_a_torchscript_archive_is_not_a_checkpoint(tmp_path: Path) -> None:
    # torch.load hands an archive holding constants.pkl to torch.jit.load, which runs its code.
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(tmp_path / MU_CHECKPOINT_FILE))
    with pytest.raises(CheckpointFault, match=r"mu\.pt: .*TorchScript"):
        Mu.load(str(tmp_path))


def test_the_checkpoints_the_sidecar_writes_still_load(tmp_path: Path) -> None:
    # What Mu.save and Policy.save write (Adam's state and a reference included, bfloat16 storages
    # for a bfloat16 policy) passes the allowlist; test_mu and test_policy check the values.
    mu = Mu(PARAMS["mu.init"].parse({"model": MU_MODEL, "seed": 1}, "params"))
    mu.sft([Step([1, 2, 3], [4, 5])], [[0.5, -0.5, 0.1]], learning_rate=1e-2, head_learning_rate=1e-2)
    mu.set_reference()
    mu.save(str(tmp_path / "mu"))
    assert Mu.load(str(tmp_path / "mu")).fingerprint() == mu.fingerprint()
    for dtype in ("float32", "bfloat16"):
        init = PARAMS["policy.init"].parse({"model": TINY_MODEL, "seed": 1, "eos_token_id": 1, "dtype": dtype}, "params")
        policy = Policy(init, SINGLE)
        policy.sft_step([([0], [5, 6, 1])], learning_rate=0.01, max_grad_norm=1.0)
        policy.set_reference()
        policy.save(str(tmp_path / dtype))
        restored = load_policy(tmp_path / dtype)
        # Compared tensor by tensor: parameter_fingerprint goes through numpy, which has no bfloat16.
        for name, value in policy.model.state_dict().items():
            assert torch.equal(restored.model.state_dict()[name], value), name
        assert restored.reference is not None and restored.steps == policy.steps


def test_plain_values_pass_and_other_classes_are_named(tmp_path: Path) -> None:
    path = tmp_path / "x.pt"
    torch.save({"format": "f", "t": torch.arange(3), "nested": [1.5, None, True, "s", (1, 2)]}, path)
    assert read_checkpoint(path, "f")["nested"] == [1.5, None, True, "s", (1, 2)]
    torch.save({"format": "f", "module": torch.nn.Linear(2, 2)}, path)
    # Named by our unpickler on torch 1.13, inside torch's own weights-only message on torch ≥ 2.
    with pytest.raises(CheckpointFault, match=r"(?s)refuses.*torch\.nn\.modules\.linear\.Linear"):
        read_checkpoint(path, "f")


def test_a_truncated_checkpoint_cannot_be_read(tmp_path: Path) -> None:
    # A damaged file is not "refused": that word is kept for a pickle that names what it may not.
    mu = Mu(PARAMS["mu.init"].parse({"model": MU_MODEL, "seed": 1}, "params"))
    mu.save(str(tmp_path))
    path = tmp_path / MU_CHECKPOINT_FILE
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CheckpointFault, match=r"mu\.pt: cannot read it"):
        Mu.load(str(tmp_path))
