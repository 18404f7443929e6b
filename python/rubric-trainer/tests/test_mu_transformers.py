"""μ on a transformers causal LM trained through a peft LoRA adapter (``mu_transformers``), the
assertions of test_mu_lora.py for ``model.kind 'transformers'``: the adapter sits on q_proj and
v_proj, a fresh adapter is the base model exactly, scores are K numbers in [−1, 1] per step,
``mu.step`` and ``mu.sft`` move the adapter and the score head only (the base bit-identical), μ_ref
is a second, frozen peft adapter (KL 0 right after ``mu.set_reference``, > 0 a step later), and
``mu.save``/``mu.load`` round-trip through peft adapter directories.

The model is a small random Llama that tests/hf_model.py writes (LlamaAttention has q_proj and
v_proj): nothing is downloaded. Skipped unless transformers, tokenizers and peft are all installed
(Debian has none of them; the GPU machine has all three). ``mu.init`` takes no device: μ runs on
the CPU wherever it runs, so nothing here is a CUDA check.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.distributed import DistContext
from rubric_trainer.mu import MU_CHECKPOINT_FORMAT, MU_HEAD_FILE
from rubric_trainer.mu_lora import ReferenceView
from rubric_trainer.mu_steps import batch, steps_of
from rubric_trainer.mu_transformers import ADAPTER, ADAPTER_DIR, REFERENCE, REFERENCE_DIR
from rubric_trainer.protocol import Request
from rubric_trainer.server import Session

MISSING = [m for m in ("transformers", "tokenizers", "peft") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"not installed here: {', '.join(MISSING)} (μ on a transformers model with LoRA needs transformers, tokenizers and peft)")

CORPUS = [
    '{"criteria": [{"text": "Includes a summary table", "weight": 3}]}',
    "Task: Draft a quarterly budget memo for the finance team.",
    "Q1: Which sections matter most to you?\nA1: The budget table and a short risk list.",
] * 4
D_MODEL, LAYERS, K = 32, 2, 3
# Ids below 256: the byte-level BPE's alphabet alone has 256 tokens, whatever merges it learnt.
STEPS = [{"prompt": [10, 20, 30], "criteria": [40, 50]}, {"prompt": [10, 20], "criteria": [60, 70, 80]}, {"prompt": [30, 30, 90, 100], "criteria": [110]}]
TEACHER = [[0.5, -0.5, 0.1], [0.0, 0.2, 0.9], [-0.8, -0.6, -0.7]]
TRAJECTORIES = [{"steps": STEPS[:2], "reward": 1.0}, {"steps": STEPS[2:], "reward": 0.0}]
STEP = {"trajectories": TRAJECTORIES, "learning_rate": 5e-2, "head_learning_rate": 5e-2, "beta": 0.05}
SFT = {"examples": [{**s, "scores": t} for s, t in zip(STEPS, TEACHER)], "learning_rate": 1e-2, "head_learning_rate": 1e-2}


def call(session: Session, method: str, params: dict) -> dict:
    reply = session.handle(Request(1, method, params))
    assert "error" not in reply, reply
    return reply["result"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hf_model import write_model

    return write_model(tmp_path_factory.mktemp("hf") / "mu-base", CORPUS, vocab_size=300, d_model=D_MODEL, layers=LAYERS, heads=4, max_positions=64)


def init(model_dir: Path, lora: dict | None = None, **overrides) -> tuple[Session, dict]:
    session = Session(DistContext(0, 1, 0), None)
    params = {"model": {"kind": "transformers", "name": str(model_dir)}, "k": K, "seed": 1, **overrides}
    if lora is not None:
        params["lora"] = lora
    return session, call(session, "mu.init", params)


def snapshot(named: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.detach().clone() for name, t in named.items()}


def base_weights(session: Session) -> dict[str, torch.Tensor]:
    """The backbone's own parameters (peft's ``base_layer`` weights included), without any adapter."""
    assert session.mu is not None
    return {name: p for name, p in session.mu.network.inner.named_parameters() if "lora_" not in name}


def adapter(session: Session, name: str = ADAPTER) -> dict[str, torch.Tensor]:
    assert session.mu is not None and session.mu.adapter is not None
    return snapshot(session.mu.adapter.named(name))


def head(session: Session) -> dict[str, torch.Tensor]:
    assert session.mu is not None
    return snapshot(session.mu.network.score_head.state_dict())


def equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)


def test_the_adapter_is_peft_lora_on_q_proj_and_v_proj_with_arcos_defaults(model_dir: Path) -> None:
    session, summary = init(model_dir, {})
    mu = session.mu
    assert summary["lora"] == {"r": 8, "lora_alpha": 32.0, "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj"]}
    assert summary["k"] == K and summary["max_seq_len"] == 64 and summary["reference"] is False
    lora = adapter(session)
    # One A [8, 32] and one B [32, 8] per layer and target: Llama's q_proj and v_proj are 32 → 32 here.
    assert len(lora) == LAYERS * 2 * 2 and all(".q_proj." in name or ".v_proj." in name for name in lora)
    assert all(t.shape == ((8, D_MODEL) if ".lora_A." in name else (D_MODEL, 8)) for name, t in lora.items())
    assert all(not t.any() for name, t in lora.items() if ".lora_B." in name)  # B starts at zero
    assert all(t.abs().sum() > 0 for name, t in lora.items() if ".lora_A." in name)  # A is drawn
    assert summary["trainable_parameters"] == summary["head_parameters"] + LAYERS * 2 * (8 * D_MODEL + D_MODEL * 8)
    trainable = {name for name, p in mu.network.named_parameters() if p.requires_grad}
    assert trainable == {f"inner.{name}" for name in lora} | {f"score_head.{name}" for name, _ in mu.network.score_head.named_parameters()}
    assert mu.network.base_state() == {}  # the base is from_pretrained(name) again, not copied into mu.pt
    assert all(p.dtype == torch.float32 for p in mu.network.parameters())


def test_two_adamw_groups_the_adapter_and_the_score_head(model_dir: Path) -> None:
    session, _ = init(model_dir, {})
    mu = session.mu
    adapter_group, head_group = mu.optimizer.param_groups
    assert {id(p) for p in adapter_group["params"]} == {id(p) for p in mu.adapter.parameters()}
    assert {id(p) for p in head_group["params"]} == {id(p) for p in mu.network.score_head.parameters()}
    assert adapter_group["weight_decay"] == head_group["weight_decay"] == 0.01


def test_a_fresh_adapter_gives_exactly_the_base_models_scores_and_logits(model_dir: Path) -> None:
    plain, _ = init(model_dir)
    adapted, _ = init(model_dir, {})
    # The same seed draws the same score head with or without lora; B = 0 adds exactly nothing.
    assert call(adapted, "mu.scores", {"steps": STEPS}) == call(plain, "mu.scores", {"steps": STEPS})
    ids = {"ids": [[10, 20, 30, 40], [50, 60, 70, 80]]}
    assert call(adapted, "mu.logits", ids) == call(plain, "mu.logits", ids)


def test_scores_are_k_numbers_in_the_unit_interval_per_step_whatever_the_batch(model_dir: Path) -> None:
    session, _ = init(model_dir, {})
    scores = call(session, "mu.scores", {"steps": STEPS})
    assert len(scores["d"]) == len(STEPS) and all(len(row) == K for row in scores["d"])
    assert all(-1.0 <= v <= 1.0 for row in scores["d"] for v in row)
    assert scores["s"] == pytest.approx([sum(row) / K for row in scores["d"]])
    # Right padding and the attention mask: a step scored in a batch scores as it does alone.
    for step, row in zip(STEPS, scores["d"]):
        assert call(session, "mu.scores", {"steps": [step]})["d"][0] == pytest.approx(row, abs=1e-5)


def test_logits_are_the_models_own(model_dir: Path) -> None:
    """μ's LM head over the last hidden state (``hidden_states[-1]``, after the final norm) is the model's forward."""
    session, _ = init(model_dir, {})
    call(session, "mu.step", STEP)  # a non-zero adapter
    ids = [[10, 20, 30, 40, 50], [60, 70, 80, 90, 100]]
    logits = torch.tensor(call(session, "mu.logits", {"ids": ids})["logits"], dtype=torch.float64)
    with torch.no_grad():
        own = session.mu.network.inner(input_ids=torch.tensor(ids)).logits.double()
    assert logits.shape == own.shape and torch.allclose(logits, own, atol=1e-5)


@pytest.mark.parametrize("method", ["step", "sft"])
def test_only_the_adapter_and_the_score_head_change(model_dir: Path, method: str) -> None:
    session, _ = init(model_dir, {})
    base, lora, score_head = snapshot(base_weights(session)), adapter(session), head(session)
    assert all(not p.requires_grad for p in base_weights(session).values())
    before = call(session, "mu.fingerprint", {})
    for _ in range(2):  # the first step moves B alone (A's gradient is 0 while B is 0); the second A too
        call(session, f"mu.{method}", STEP if method == "step" else SFT)
    assert equal(base, snapshot(base_weights(session)))
    after = adapter(session)
    assert all(not torch.equal(t, after[name]) for name, t in lora.items())  # every A and B moved
    assert any(not torch.equal(t, head(session)[name]) for name, t in score_head.items())
    fingerprint = call(session, "mu.fingerprint", {})
    assert fingerprint["base"] == before["base"] and fingerprint["fingerprint"] != before["fingerprint"] and fingerprint["steps"] == 2
    # Without LoRA the same step moves the base: the test above can fail.
    plain, _ = init(model_dir)
    untouched = snapshot(base_weights(plain))
    call(plain, f"mu.{method}", STEP if method == "step" else SFT)
    assert not equal(untouched, snapshot(base_weights(plain)))


def test_the_reference_is_a_second_frozen_peft_adapter_on_the_shared_base(model_dir: Path) -> None:
    session, _ = init(model_dir, {"lora_dropout": 0.0})
    mu = session.mu
    for _ in range(2):  # a non-zero adapter to freeze
        call(session, "mu.step", STEP)
    call(session, "mu.set_reference", {})
    assert isinstance(mu.reference, ReferenceView) and not list(mu.reference.parameters())
    assert call(session, "health", {})["mu"]["reference"] is True
    frozen_adapter = adapter(session, REFERENCE)
    assert equal(frozen_adapter, {name.replace(f".{ADAPTER}.", f".{REFERENCE}."): t for name, t in adapter(session).items()})
    inputs = batch(steps_of(STEPS), mu.pooling)
    frozen, _ = mu.forward(mu.reference, inputs)
    first = call(session, "mu.step", STEP)
    assert first["kl"] == pytest.approx(0.0, abs=1e-9)  # μ = μ_ref right after set_reference
    second = call(session, "mu.step", STEP)
    assert second["kl"] > 0
    # μ_ref did not follow the steps, stays frozen, and the trained adapter is the active one again.
    assert equal(frozen_adapter, adapter(session, REFERENCE))
    assert all(not p.requires_grad for p in mu.adapter.named(REFERENCE).values())
    assert all(p.requires_grad for p in mu.adapter.named(ADAPTER).values())
    assert mu.network.inner.active_adapter == ADAPTER
    still, _ = mu.forward(mu.reference, inputs)
    current, _ = mu.forward(mu.network, inputs)
    assert torch.equal(frozen, still) and not torch.equal(still, current)
    # Nor is μ_ref the base without an adapter.
    plain, _ = init(model_dir)
    base, _ = plain.mu.forward(plain.mu.network, inputs)
    assert not torch.allclose(still, base)


def test_dropout_acts_in_training_forwards_only(model_dir: Path) -> None:
    session, _ = init(model_dir, {"lora_dropout": 0.5})
    mu = session.mu
    for _ in range(2):
        call(session, "mu.step", STEP)
    inputs = batch(steps_of(STEPS), mu.pooling)
    with torch.no_grad():
        _, eval_a = mu.forward(mu.network, inputs)
        _, eval_b = mu.forward(mu.network, inputs)
        _, trained = mu.forward(mu.network, inputs, train=True)
    assert torch.equal(eval_a, eval_b) and not torch.equal(eval_a, trained)
    dropouts = [m for name, m in mu.network.inner.named_modules() if name.endswith(f"lora_dropout.{ADAPTER}")]
    assert len(dropouts) == LAYERS * 2 and all(not m.training for m in dropouts)


def test_save_and_load_round_trip_through_peft_adapter_directories(model_dir: Path, tmp_path: Path) -> None:
    session, _ = init(model_dir, {"lora_dropout": 0.0})
    for _ in range(2):
        call(session, "mu.step", STEP)
    call(session, "mu.set_reference", {})
    call(session, "mu.step", STEP)
    saved = call(session, "mu.save", {"dir": str(tmp_path)})
    assert saved["steps"] == 3
    assert {p.name for p in tmp_path.iterdir()} >= {"mu.pt", MU_HEAD_FILE, ADAPTER_DIR, REFERENCE_DIR}
    # peft's save_pretrained: the default adapter at the directory's root, another in a subdirectory named after it.
    assert (tmp_path / ADAPTER_DIR / "adapter_config.json").exists()
    assert (tmp_path / REFERENCE_DIR / REFERENCE / "adapter_config.json").exists()
    assert read_checkpoint(tmp_path / "mu.pt", MU_CHECKPOINT_FORMAT)["network"] == {}  # no base weights copied
    loaded = Session(DistContext(0, 1, 0), None)
    summary = call(loaded, "mu.load", {"dir": str(tmp_path)})
    assert summary["steps"] == 3 and summary["reference"] is True and summary["lora"]["lora_dropout"] == 0.0
    assert call(loaded, "mu.scores", {"steps": STEPS}) == call(session, "mu.scores", {"steps": STEPS})
    assert equal(adapter(loaded), adapter(session)) and equal(adapter(loaded, REFERENCE), adapter(session, REFERENCE))
    assert equal(head(loaded), head(session)) and equal(snapshot(base_weights(loaded)), snapshot(base_weights(session)))
    assert call(loaded, "mu.fingerprint", {})["fingerprint"] == call(session, "mu.fingerprint", {})["fingerprint"]
    assert all(not p.requires_grad for p in loaded.mu.adapter.named(REFERENCE).values())
    assert all(not p.requires_grad for p in base_weights(loaded).values())
    # The optimiser's moments and μ_ref came back: the next step is the same step.
    a, b = call(session, "mu.step", STEP), call(loaded, "mu.step", STEP)
    assert a["loss"] == b["loss"] and a["kl"] == b["kl"] > 0
    assert call(loaded, "mu.fingerprint", {})["fingerprint"] == call(session, "mu.fingerprint", {})["fingerprint"]


def test_a_bfloat16_checkpoint_is_trained_in_float32(model_dir: Path, tmp_path: Path) -> None:
    """Pretrained LMs ship in bfloat16, and transformers 5 loads a checkpoint in its own dtype by
    default: μ asks for float32, which its score head, float64 losses and fingerprints read."""
    import transformers

    from rubric_trainer.model import dtype_argument

    bf16 = tmp_path / "bf16"
    transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), **dtype_argument(transformers, torch.bfloat16)).save_pretrained(str(bf16))
    if int(transformers.__version__.split(".")[0]) >= 5:  # seen with 5.17: a load without a dtype keeps bfloat16
        assert transformers.AutoModelForCausalLM.from_pretrained(str(bf16)).dtype == torch.bfloat16
    session, _ = init(bf16, {})
    assert all(p.dtype == torch.float32 for p in session.mu.network.parameters())
    metrics = call(session, "mu.step", STEP)
    assert metrics["grad_norm"] > 0
    assert all(-1.0 <= v <= 1.0 for row in call(session, "mu.scores", {"steps": STEPS})["d"] for v in row)
    assert len(call(session, "mu.fingerprint", {})["fingerprint"]) == 64


def test_a_module_the_model_lacks_is_an_error_reply_naming_it(model_dir: Path) -> None:
    """The tiny μ checks target_modules against q_proj/v_proj; a transformers μ passes any name to
    peft, whose refusal becomes the reply (and the sidecar goes on serving)."""
    session = Session(DistContext(0, 1, 0), None)
    reply = session.handle(Request(2, "mu.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "lora": {"target_modules": ["nonexistent_proj"]}}))
    assert "error" in reply and "nonexistent_proj" in reply["error"]["message"], reply
    assert call(session, "health", {})["ok"] is True
