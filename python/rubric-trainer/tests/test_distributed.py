"""The sidecar under torchrun: two CPU ranks (gloo) with DistributedDataParallel. Their replicas must
stay bit-identical, and their steps must equal one process taking the same steps on the whole batch."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

from conftest import TINY_MODEL, SidecarProcess
from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.distributed import DistContext
from rubric_trainer.objectives import group_advantages
from rubric_trainer.policy import CHECKPOINT_FORMAT, Group, Policy, Rollout
from rubric_trainer.protocol import PARAMS

# float64 so that the only difference between the two runs, the order in which gradients are
# summed (per rank, then all-reduced), stays far below the tolerance.
INIT = {"model": TINY_MODEL, "seed": 4, "dtype": "float64", "eos_token_id": 1, "device": "cpu"}


def rollout_batch(seed: int) -> list[dict]:
    """Five groups (an odd number, so the ranks get 3 and 2) of sampled sequences with seeded rewards."""
    policy = Policy(PARAMS["policy.init"].parse(INIT, "params"), DistContext(0, 1, 0))
    rng = random.Random(seed)
    groups = []
    for g in range(5):
        prompt = [0] + [rng.randrange(2, 12) for _ in range(g % 3)]
        sampled = policy.sample(prompt, 3 + g % 2, seed=seed * 100 + g, temperature=1.0, max_new_tokens=6, eos_token_id=1, check_cancelled=lambda: None)
        advantages = group_advantages([rng.random() for _ in sampled])
        groups.append({"prompt": prompt, "sequences": [{"tokens": s["tokens"], "logp_old": s["logprobs"], "advantage": a} for s, a in zip(sampled, advantages)]})
    return groups


STEPS = [
    ("policy.step", {"objective": "gspo", "eps_low": 0.2, "eps_high": 0.2, "learning_rate": 0.01, "groups": rollout_batch(1)}),
    ("policy.set_reference", {}),
    ("policy.step", {"objective": "grpo", "learning_rate": 0.01, "kl_coef": 0.1, "groups": rollout_batch(2)}),
    ("policy.sft_step", {"examples": [{"prompt": [0], "tokens": [5, 6, 1]}, {"prompt": [0, 3], "tokens": [7, 1]}, {"prompt": [0], "tokens": [9, 9, 9, 1]}], "learning_rate": 0.01}),
    ("policy.step", {"objective": "dr-grpo", "learning_rate": 0.01, "max_grad_norm": 0.5, "groups": rollout_batch(3)}),
]


def single_process_run() -> tuple[Policy, list[dict]]:
    policy = Policy(PARAMS["policy.init"].parse(INIT, "params"), DistContext(0, 1, 0))
    results = []
    for method, params in STEPS:
        parsed = PARAMS[method].parse(params, "params")
        if method == "policy.set_reference":
            policy.set_reference()
            results.append({"ok": True})
        elif method == "policy.sft_step":
            results.append(policy.sft_step([(e["prompt"], e["tokens"]) for e in parsed["examples"]], learning_rate=parsed["learning_rate"], max_grad_norm=parsed["max_grad_norm"]))
        else:
            groups = [Group(g["prompt"], [Rollout(s["tokens"], s["logp_old"], s["advantage"]) for s in g["sequences"]]) for g in parsed["groups"]]
            options = {key: parsed[key] for key in ("objective", "eps_low", "eps_high", "learning_rate", "kl_coef", "max_tokens", "max_grad_norm")}
            results.append(policy.step(groups, **options))
    return policy, results


def test_two_ranks_stay_identical_and_match_one_process(tmp_path: Path) -> None:
    ranks = SidecarProcess([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--redirects", "2", "--tee", "2", "-m", "rubric_trainer", "serve", "--threads", "1"])
    try:
        assert ranks.ready["params"]["world_size"] == 2
        ranks.call("policy.init", INIT)
        distributed = [ranks.call(method, params) for method, params in STEPS]
        fingerprint = ranks.call("policy.fingerprint")
        saved = ranks.call("checkpoint.save", {"dir": str(tmp_path / "ddp")})
        too_few = ranks.error("policy.sft_step", {"examples": [{"prompt": [0], "tokens": [5]}], "learning_rate": 0.01})
    finally:
        exit_code = ranks.close()
    assert exit_code == 0, ranks.stderr_text()

    assert fingerprint["world_size"] == 2 and fingerprint["steps"] == 4
    assert fingerprint["fingerprints"][0] == fingerprint["fingerprints"][1]
    assert too_few["message"] == "params.examples: 2 ranks need at least 2 examples, got 1"

    policy, single = single_process_run()
    for method_result, (d, s) in zip(STEPS, zip(distributed, single)):
        for key, value in s.items():
            if key == "compute_ms":
                continue
            assert d[key] == pytest.approx(value, rel=1e-9, abs=1e-12), f"{method_result[0]}: {key}"
    state = read_checkpoint(Path(saved["path"]), CHECKPOINT_FORMAT)
    for name, parameter in policy.model.state_dict().items():
        torch.testing.assert_close(state["model"][name], parameter, rtol=0, atol=1e-10, msg=f"{name} differs")
