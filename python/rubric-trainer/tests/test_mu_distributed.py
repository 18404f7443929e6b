"""μ under torchrun: two CPU ranks (gloo) with DistributedDataParallel. The replicas must stay equal,
and their steps must equal one process taking the same steps on the whole batch (within float32's
rounding: the only difference is the order in which the gradients are summed)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import torch

from conftest import SidecarProcess, session_call
from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.distributed import DistContext
from rubric_trainer.mu import MU_CHECKPOINT_FORMAT
from rubric_trainer.mu_steps import steps_of
from rubric_trainer.server import Session

MODEL = {"kind": "tiny", "vocab_size": 16, "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 32}
INIT = {"model": MODEL, "k": 3, "seed": 7}


def trajectory(steps: list[tuple[list[int], list[int]]], reward: float) -> dict:
    return {"steps": [{"prompt": p, "criteria": c} for p, c in steps], "reward": reward}


# Five trajectories (odd: rank 0 takes 3, rank 1 takes 2) of different lengths, both classes. The
# ranks' shards hold different class mixes (rank 0: R = 1, 0, 0.2; rank 1: 0, 0.8), so weights taken
# from a shard instead of the whole batch would give a different step.
TRAJECTORIES = [
    trajectory([([1, 2, 3], [4, 5]), ([1, 2, 3, 4, 5], [6])], 1.0),
    trajectory([([2, 7], [8, 9, 10])], 0.0),
    trajectory([([3], [11, 12]), ([3, 11, 12], [13]), ([3, 11, 12, 13], [14, 15])], 0.0),
    trajectory([([5, 5, 6], [7, 8])], 0.8),
    trajectory([([9, 1], [2]), ([9, 1, 2], [3, 4, 5, 6])], 0.2),
]

STEPS = [
    (
        "mu.sft",
        {
            # Three examples (rank 0 takes 2, rank 1 takes 1) with different criteria lengths, one
            # empty: the CE is per token of the whole batch, not the mean of the ranks' means.
            "examples": [
                {"prompt": [1, 2, 3], "criteria": [4, 5, 6, 7], "scores": [0.5, -0.5, 0.1]},
                {"prompt": [2, 2], "criteria": [8], "scores": [0.0, 0.2, 0.9]},
                {"prompt": [3, 9, 10], "criteria": [], "scores": [-0.8, -0.6, -0.7]},
            ],
            "learning_rate": 0.01,
            "head_learning_rate": 0.003,
        },
    ),
    ("mu.set_reference", {}),
    # With the KL term (the LM head takes part), then without it (the LM head gets no gradient).
    ("mu.step", {"trajectories": TRAJECTORIES, "learning_rate": 0.01, "beta": 0.1}),
    ("mu.step", {"trajectories": TRAJECTORIES[::-1], "learning_rate": 0.01, "beta": 0.0}),
]

TOKENIZER = {"kind": "test", "files": {"vocab.txt": "a\nb\n"}}


def single_process_run() -> tuple[Session, list[dict]]:
    """The same requests through the same handlers, in this process (world size 1)."""
    session = Session(DistContext(0, 1, 0), None)

    def call(method: str, params: dict) -> dict:
        return session_call(session, method, params)

    call("mu.init", INIT)
    return session, [call(method, params) for method, params in STEPS]


def test_two_ranks_stay_identical_and_match_one_process(tmp_path: Path) -> None:
    ranks = SidecarProcess([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--redirects", "2", "--tee", "2", "-m", "rubric_trainer", "serve", "--threads", "1"])
    try:
        assert ranks.ready["params"]["world_size"] == 2
        ranks.call("mu.init", INIT)
        distributed, fingerprints = [], []
        for method, params in STEPS:
            distributed.append(ranks.call(method, params))
            fingerprints.append(ranks.call("mu.fingerprint"))
        saved = ranks.call("mu.save", {"dir": str(tmp_path / "ckpt")})
        too_few_examples = ranks.error("mu.sft", {"examples": [{"prompt": [1], "criteria": [2], "scores": [0, 0, 0]}], "learning_rate": 0.01})
        too_few_trajectories = ranks.error("mu.step", {"trajectories": TRAJECTORIES[:1], "learning_rate": 0.01})
        after_refusals = ranks.call("mu.fingerprint")
        scores = ranks.call("mu.scores", {"steps": TRAJECTORIES[0]["steps"]})
        exported = [ranks.call("mu.export", {"dir": str(tmp_path / "models"), "tokenizer": TOKENIZER, "max_criteria_tokens": 8}) for _ in range(2)]
        loaded = ranks.call("mu.load", {"dir": exported[1]["dir"]})
        after_load = ranks.call("mu.fingerprint")
    finally:
        exit_code = ranks.close()
    assert exit_code == 0, ranks.stderr_text()

    # The replicas are equal after every step, and every step counted once.
    for n, fingerprint in enumerate(fingerprints):
        assert fingerprint["world_size"] == 2
        assert fingerprint["fingerprints"][0] == fingerprint["fingerprints"][1], f"after {STEPS[n][0]}"
        assert fingerprint["fingerprint"] == fingerprint["fingerprints"][0]
    assert [f["steps"] for f in fingerprints] == [1, 1, 2, 3]

    # Too few items for the ranks is refused before any collective, and changes nothing.
    assert too_few_examples["code"] == too_few_trajectories["code"] and too_few_examples["data"] == {"path": "params.examples"}
    assert too_few_examples["message"] == "params.examples: 2 ranks need at least 2 examples, got 1"
    assert too_few_trajectories["message"] == "params.trajectories: 2 ranks need at least 2 trajectories, got 1"
    assert after_refusals["fingerprints"] == fingerprints[-1]["fingerprints"] and after_refusals["steps"] == 3

    session, single = single_process_run()
    mu = session.mu
    assert mu is not None
    for (method, _), d, s in zip(STEPS, distributed, single):
        assert d.keys() == s.keys(), method
        for key, value in s.items():
            if key == "compute_ms":
                continue
            assert d[key] == pytest.approx(value, rel=1e-5, abs=1e-6), f"{method}: {key}"
    # The whole batch's weights and sums, in the request's order (not rank 0's share, not by rank).
    assert len(distributed[2]["sums"]) == len(distributed[2]["weights"]) == len(TRAJECTORIES)

    state = read_checkpoint(Path(saved["path"]), MU_CHECKPOINT_FORMAT)
    width = MODEL["d_model"]
    for name, parameter in mu.network.state_dict().items():
        mine = state["network"][name]
        if name.endswith("attention.qkv.bias"):
            # The key bias adds the same amount to every logit of a query's softmax, so its true
            # gradient is 0 and what autograd returns is float32 round-off, which differs with the
            # order of summation; Adam normalises that noise into steps of the learning rate's size.
            # It changes no output (the scores below agree), so only the query and value biases count.
            mine, parameter = torch.cat([mine[:width], mine[2 * width :]]), torch.cat([parameter[:width], parameter[2 * width :]])
        torch.testing.assert_close(mine, parameter, rtol=0, atol=1e-6, msg=f"{name} differs")
    # mu.scores under torchrun: rank 0's answer, from the replica that took the distributed steps.
    torch.testing.assert_close(torch.tensor(scores["d"]), torch.tensor(mu.scores(steps_of(TRAJECTORIES[0]["steps"]))["d"]), rtol=0, atol=1e-5)

    # Two exports: rank 0 chose each version (one directory each, no duplicate from rank 1, no staging left).
    assert [e["version"] for e in exported] == [1, 2]
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["v0001", "v0002"]
    manifest = exported[1]["manifest"]
    version = Path(exported[1]["dir"])
    assert json.loads((version / "manifest.json").read_text(encoding="utf-8")) == manifest
    assert manifest["exportVersion"] == 2 and manifest["training"] == {"fingerprint": fingerprints[-1]["fingerprint"], "steps": 3}
    assert sorted(manifest["files"]) == sorted(p.name for p in version.iterdir() if p.name != "manifest.json")
    assert {"score.onnx", "prefill.onnx", "decode.onnx", "mu.pt", "vocab.txt"} <= set(manifest["files"])
    for name, entry in manifest["files"].items():
        data = (version / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}, name

    # mu.load on every rank: both replicas hold the exported weights.
    assert loaded["steps"] == 3
    assert after_load["fingerprints"] == [manifest["training"]["fingerprint"]] * 2
