"""μ trained through LoRA (ARCO's r 8, α 32, dropout 0.05 on q_proj/v_proj): the base weights
stay bit-identical while the adapter and the score head learn, in two optimiser groups; a fresh
adapter is the base model exactly; μ_ref is the frozen adapter on the shared base; checkpoints keep
the adapter and the head in files of their own; the export merges the adapter into the weights;
and the refusals name their field."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.faults import Unavailable
from rubric_trainer.mu import MU_CHECKPOINT_FORMAT, MU_HEAD_FILE, Mu
from rubric_trainer.mu_export import export_version
from rubric_trainer.mu_lora import ADAPTER_FILE, ReferenceView
from rubric_trainer.mu_model import ScoreGraph
from rubric_trainer.mu_steps import Step, batch
from rubric_trainer.protocol import PARAMS
from rubric_trainer.schema import ParamError

MODEL = {"kind": "tiny", "vocab_size": 12, "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 24}
STEPS = [Step([1, 2, 3], [4, 5]), Step([1, 2], [6, 7, 8]), Step([3, 3, 9, 10], [11])]
TEACHER = [[0.5, -0.5, 0.1], [0.0, 0.2, 0.9], [-0.8, -0.6, -0.7]]
TRAJECTORIES = [[STEPS[0], STEPS[1]], [STEPS[2]]]
TOKENIZER = {"kind": "byte-bpe", "files": {"tokenizer.json": "{}\n"}}


def make_mu(lora: dict | None = None, **overrides) -> Mu:
    params = {"model": MODEL, "seed": 1, **overrides}
    if lora is not None:
        params["lora"] = lora
    return Mu(PARAMS["mu.init"].parse(params, "params"))


def snapshot(named: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.detach().clone() for name, t in named.items()}


def head_state(mu: Mu) -> dict[str, torch.Tensor]:
    return snapshot(mu.network.score_head.state_dict())


def adapter_state(mu: Mu) -> dict[str, torch.Tensor]:
    assert mu.adapter is not None
    return snapshot(mu.adapter.state())


def train(mu: Mu, times: int = 3) -> None:
    for _ in range(times):
        mu.step(TRAJECTORIES, [1.0, 0.0], learning_rate=5e-2, head_learning_rate=5e-2, beta=0.05)


def test_the_defaults_are_arcos() -> None:
    lora = PARAMS["mu.init"].parse({"model": MODEL, "lora": {}}, "params")["lora"]
    assert lora == {"r": 8, "lora_alpha": 32.0, "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj"]}
    assert PARAMS["mu.init"].parse({"model": MODEL}, "params")["lora"] is None
    mu = make_mu({})
    deltas = list(mu.adapter.deltas())
    assert len(deltas) == 2 * MODEL["n_layers"] and all(d.scale == 4.0 and d.lora_A.shape == (8, 16) for d in deltas)


def test_a_fresh_adapter_gives_exactly_the_base_models_scores_and_logits() -> None:
    plain, adapted = make_mu(), make_mu({})
    assert all(not d.lora_B.any() for d in adapted.adapter.deltas())  # B starts at zero
    assert all(d.lora_A.abs().sum() > 0 for d in adapted.adapter.deltas())  # A is drawn
    assert adapted.base_fingerprint() == plain.base_fingerprint()  # the adapter is drawn after the base
    assert adapted.scores(STEPS) == plain.scores(STEPS)
    assert adapted.logits([[1, 2, 3, 4]]) == plain.logits([[1, 2, 3, 4]])


@pytest.mark.parametrize("method", ["step", "sft"])
def test_only_the_adapter_and_the_score_head_change(method: str) -> None:
    mu = make_mu({})
    base, adapter, head = snapshot(mu.network.base_state()), adapter_state(mu), head_state(mu)
    assert all(not p.requires_grad for p in mu.network.base_state().values())
    for _ in range(2):  # the first step moves B alone (A's gradient is 0 while B is 0); the second A too
        if method == "step":
            mu.step(TRAJECTORIES, [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
        else:
            mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    after = mu.network.base_state()
    assert after.keys() == base.keys() and all(torch.equal(base[name], after[name]) for name in base)
    assert all(not torch.equal(t, mu.adapter.state()[name]) for name, t in adapter.items())  # every A and B moved
    assert any(not torch.equal(t, head_state(mu)[name]) for name, t in head.items())
    # Without LoRA the same step moves the base: the test above can fail.
    plain = make_mu()
    before = snapshot(plain.network.base_state())
    plain.step(TRAJECTORIES, [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert any(not torch.equal(t, plain.network.base_state()[name]) for name, t in before.items())


def test_two_adamw_groups_the_adapter_at_learning_rate_the_head_at_head_learning_rate() -> None:
    mu = make_mu({})
    adapter_group, head_group = mu.optimizer.param_groups
    assert {id(p) for p in adapter_group["params"]} == {id(p) for p in mu.adapter.parameters()}
    assert {id(p) for p in head_group["params"]} == {id(p) for p in mu.network.score_head.parameters()}
    assert adapter_group["weight_decay"] == head_group["weight_decay"] == 0.01
    adapter, head = adapter_state(mu), head_state(mu)
    # A vanishing LoRA rate leaves the adapter where it was (to float precision); the head moves.
    metrics = mu.step(TRAJECTORIES, [20.0, -20.0], learning_rate=1e-30, head_learning_rate=1e-2, beta=0.05)
    assert (adapter_group["lr"], head_group["lr"]) == (1e-30, 1e-2)
    assert metrics["grad_norm"] > 1.0  # and the clip at 1.0 acted on the adapter and head together
    clipped = sum(float(p.grad.pow(2).sum()) for p in mu.network.parameters() if p.grad is not None) ** 0.5
    assert clipped == pytest.approx(1.0, rel=1e-4)
    assert all(torch.allclose(t, mu.adapter.state()[name], atol=1e-20, rtol=0) for name, t in adapter.items())
    assert any(not torch.equal(t, head_state(mu)[name]) for name, t in head.items())


def test_the_reference_is_the_frozen_adapter_on_the_shared_base() -> None:
    mu = make_mu({"lora_dropout": 0.0})
    train(mu, 2)  # a non-zero adapter to freeze
    mu.set_reference()
    assert isinstance(mu.reference, ReferenceView) and not list(mu.reference.parameters())
    inputs = batch(STEPS, mu.pooling)
    frozen, _ = mu.forward(mu.reference, inputs)
    first = mu.step(TRAJECTORIES, [1.0, 0.0], learning_rate=5e-2, head_learning_rate=5e-2, beta=0.05)
    assert first["kl"] == 0.0  # μ = μ_ref right after set_reference
    second = mu.step(TRAJECTORIES, [1.0, 0.0], learning_rate=5e-2, head_learning_rate=5e-2, beta=0.05)
    assert second["kl"] > 0
    # μ_ref did not follow the steps, and it is not the base without adapter either.
    still, _ = mu.forward(mu.reference, inputs)
    current, _ = mu.forward(mu.network, inputs)
    assert torch.equal(frozen, still) and not torch.equal(still, current)
    base, _ = mu.forward(make_mu().network, inputs)
    assert not torch.allclose(still, base)


def test_dropout_acts_in_training_forwards_only_and_replays_from_the_seed() -> None:
    mu = make_mu({"lora_dropout": 0.5})
    train(mu, 2)
    inputs = batch(STEPS, mu.pooling)
    with torch.no_grad():
        _, eval_a = mu.forward(mu.network, inputs)
        _, eval_b = mu.forward(mu.network, inputs)
        _, trained = mu.forward(mu.network, inputs, train=True)
    assert torch.equal(eval_a, eval_b) and not torch.equal(eval_a, trained)
    assert all(not d.training for d in mu.adapter.deltas())
    again = make_mu({"lora_dropout": 0.5})
    train(again, 2)
    assert again.fingerprint() == mu.fingerprint()


def test_save_and_load_keep_the_adapter_and_the_head_in_files_of_their_own(tmp_path: Path) -> None:
    mu = make_mu({})
    train(mu, 2)
    mu.set_reference()
    train(mu, 1)
    mu.save(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["mu.pt", MU_HEAD_FILE, ADAPTER_FILE])
    main = read_checkpoint(tmp_path / "mu.pt", MU_CHECKPOINT_FORMAT)
    assert main["network"].keys() == mu.network.base_state().keys()  # the base alone
    loaded = Mu.load(str(tmp_path))
    assert loaded.fingerprint() == mu.fingerprint() and loaded.base_fingerprint() == mu.base_fingerprint()
    assert loaded.scores(STEPS) == mu.scores(STEPS)
    assert all(torch.equal(t, loaded.adapter.state()[name]) for name, t in mu.adapter.state().items())
    assert loaded.adapter.reference_state().keys() == mu.adapter.reference_state().keys()
    assert all(torch.equal(t, loaded.adapter.reference_state()[name]) for name, t in mu.adapter.reference_state().items())
    assert all(not p.requires_grad for p in loaded.network.base_state().values())
    # The optimiser's moments, μ_ref and the dropout generator came back: the next step is the same step.
    a = mu.step(TRAJECTORIES, [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    b = loaded.step(TRAJECTORIES, [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert a["loss"] == b["loss"] and a["kl"] == b["kl"] > 0 and loaded.fingerprint() == mu.fingerprint()


def test_the_export_merges_a_trained_adapter_into_the_weights(tmp_path: Path) -> None:
    mu = make_mu({})
    train(mu, 3)
    merged = mu.export_network()
    assert not any(".lora." in name for name in merged.state_dict())
    assert merged.state_dict().keys() == make_mu().network.state_dict().keys()  # the plain network's graph
    assert not torch.equal(merged.blocks[0].attention.qkv.weight, mu.network.blocks[0].attention.qkv.weight)
    # k's slice has no adapter: merging leaves it bit-identical.
    assert torch.equal(merged.blocks[0].attention.qkv.weight[16:32], mu.network.blocks[0].attention.qkv.weight[16:32])
    inputs = batch(STEPS, mu.pooling)
    with torch.no_grad():
        graph = ScoreGraph(merged)(inputs["input_ids"], inputs["attention_mask"], inputs["pool_mask"])
    adapted = torch.tensor(mu.scores(STEPS)["d"], dtype=torch.float32)
    plain = torch.tensor(make_mu().scores(STEPS)["d"], dtype=torch.float32)
    assert torch.allclose(graph, adapted, atol=1e-6) and not torch.allclose(graph, plain, atol=1e-3)
    exported = export_version(mu, str(tmp_path), 17, TOKENIZER, max_criteria_tokens=8)
    files = exported["manifest"]["files"]
    assert {"mu.pt", MU_HEAD_FILE, ADAPTER_FILE, "score.onnx"} <= files.keys()
    assert exported["manifest"]["model"]["parameters"] == sum(p.numel() for p in make_mu().network.parameters())
    assert Mu.load(exported["dir"]).scores(STEPS) == mu.scores(STEPS)


@pytest.mark.parametrize(
    ("lora", "path"),
    [
        ({"target_modules": ["q_proj", "k_proj"]}, "params.lora.target_modules[1]"),
        ({"target_modules": ["qkv"]}, "params.lora.target_modules[0]"),
        ({"target_modules": ["v_proj", "v_proj"]}, "params.lora.target_modules"),
        ({"target_modules": []}, "params.lora.target_modules"),
        ({"lora_dropout": 1.0}, "params.lora.lora_dropout"),
        ({"r": 0}, "params.lora.r"),
        ({"rank": 8}, "params.lora.rank"),
    ],
)
def test_bad_lora_settings_are_refused_naming_the_field(lora: dict, path: str) -> None:
    with pytest.raises(ParamError) as raised:
        PARAMS["mu.init"].parse({"model": MODEL, "lora": lora}, "params")
    assert raised.value.path == path
    if "k_proj" in str(lora):
        assert "'q_proj' or 'v_proj'" in str(raised.value) and "'k_proj'" in str(raised.value)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is not None, reason="transformers is installed here")
def test_a_transformers_mu_with_lora_names_the_missing_package() -> None:
    params = PARAMS["mu.init"].parse({"model": {"kind": "transformers", "name": "Qwen/Qwen3-4B-Instruct-2507"}, "lora": {}}, "params")
    assert params["lora"]["target_modules"] == ["q_proj", "v_proj"]  # any module names go to peft unchecked
    with pytest.raises(Unavailable, match=r"^transformers is not installed .*mu\.init with model\.kind 'transformers'"):
        Mu(params)


def test_lora_over_the_wire(sidecar) -> None:
    summary = sidecar.call("mu.init", {"model": MODEL, "seed": 2, "lora": {"r": 4}})
    assert summary["lora"] == {"r": 4, "lora_alpha": 32.0, "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj"]}
    assert summary["trainable_parameters"] == summary["head_parameters"] + MODEL["n_layers"] * 2 * (4 * 16 + 16 * 4)
    before = sidecar.call("mu.fingerprint")
    sidecar.call("mu.step", {"trajectories": [{"steps": [{"prompt": [1], "criteria": [2]}], "reward": 1}, {"steps": [{"prompt": [3], "criteria": [4]}], "reward": 0}], "learning_rate": 1e-3})
    after = sidecar.call("mu.fingerprint")
    assert after["base"] == before["base"] and after["fingerprint"] != before["fingerprint"]
    refused = sidecar.error("mu.init", {"model": MODEL, "lora": {"target_modules": ["o_proj"]}})
    assert refused["code"] == "invalid_params" and refused["data"]["path"] == "params.lora.target_modules[0]"
