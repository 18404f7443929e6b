"""μ on a transformers causal LM trained through a peft LoRA adapter (``mu_transformers``), the
assertions of test_mu_lora.py for ``model.kind 'transformers'``: the adapter sits on q_proj and
v_proj, a fresh adapter is the base model exactly, scores are K numbers in [−1, 1] per step,
``mu.step`` and ``mu.sft`` move the adapter and the score head only (the base bit-identical), μ_ref
is a second, frozen peft adapter (KL 0 right after ``mu.set_reference``, > 0 a step later), and
``mu.save``/``mu.load`` round-trip through peft adapter directories.

The model is a small random Llama that tests/hf_model.py writes (LlamaAttention has q_proj and
v_proj): nothing is downloaded. Skipped unless transformers, tokenizers and peft are all installed
(Debian has none of them; the GPU machine has all three).

``mu.generate`` runs through the model's own key/value cache with the adapter active: greedy, it
writes what an argmax loop over the model's full forward writes, a left-padded batch what each
prompt writes alone, and a trained adapter changes what is written. ``dtype`` loads the backbone
in half precision while the score head and its input stay float32; ``device: "cuda"`` is run
where torch sees CUDA (the GPU machine) and refused by name where it does not.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from conftest import session_call
from rubric_trainer.checkpoint import read_checkpoint
from rubric_trainer.distributed import DistContext
from rubric_trainer.mu import MU_CHECKPOINT_FORMAT, MU_HEAD_FILE
from rubric_trainer.mu_lora import ReferenceView
from rubric_trainer.mu_steps import batch, steps_of
from rubric_trainer.mu_transformers import ADAPTER_DIR, REFERENCE_DIR
from rubric_trainer.peft_lora import ADAPTER, REFERENCE
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




@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hf_model import write_model

    return write_model(tmp_path_factory.mktemp("hf") / "mu-base", CORPUS, vocab_size=300, d_model=D_MODEL, layers=LAYERS, heads=4, max_positions=64)


def init(model_dir: Path, lora: dict | None = None, **overrides) -> tuple[Session, dict]:
    session = Session(DistContext(0, 1, 0), None)
    params = {"model": {"kind": "transformers", "name": str(model_dir)}, "k": K, "seed": 1, **overrides}
    if lora is not None:
        params["lora"] = lora
    return session, session_call(session, "mu.init", params)


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
    assert session_call(adapted, "mu.scores", {"steps": STEPS}) == session_call(plain, "mu.scores", {"steps": STEPS})
    ids = {"ids": [[10, 20, 30, 40], [50, 60, 70, 80]]}
    assert session_call(adapted, "mu.logits", ids) == session_call(plain, "mu.logits", ids)


def test_scores_are_k_numbers_in_the_unit_interval_per_step_whatever_the_batch(model_dir: Path) -> None:
    session, _ = init(model_dir, {})
    scores = session_call(session, "mu.scores", {"steps": STEPS})
    assert len(scores["d"]) == len(STEPS) and all(len(row) == K for row in scores["d"])
    assert all(-1.0 <= v <= 1.0 for row in scores["d"] for v in row)
    assert scores["s"] == pytest.approx([sum(row) / K for row in scores["d"]])
    # Right padding and the attention mask: a step scored in a batch scores as it does alone.
    for step, row in zip(STEPS, scores["d"]):
        assert session_call(session, "mu.scores", {"steps": [step]})["d"][0] == pytest.approx(row, abs=1e-5)


def test_logits_are_the_models_own(model_dir: Path) -> None:
    """μ's LM head over the last hidden state (``hidden_states[-1]``, after the final norm) is the model's forward."""
    session, _ = init(model_dir, {})
    session_call(session, "mu.step", STEP)  # a non-zero adapter
    ids = [[10, 20, 30, 40, 50], [60, 70, 80, 90, 100]]
    logits = torch.tensor(session_call(session, "mu.logits", {"ids": ids})["logits"], dtype=torch.float64)
    with torch.no_grad():
        own = session.mu.network.inner(input_ids=torch.tensor(ids)).logits.double()
    assert logits.shape == own.shape and torch.allclose(logits, own, atol=1e-5)


@pytest.mark.parametrize("method", ["step", "sft"])
def test_only_the_adapter_and_the_score_head_change(model_dir: Path, method: str) -> None:
    session, _ = init(model_dir, {})
    base, lora, score_head = snapshot(base_weights(session)), adapter(session), head(session)
    assert all(not p.requires_grad for p in base_weights(session).values())
    before = session_call(session, "mu.fingerprint", {})
    for _ in range(2):  # the first step moves B alone (A's gradient is 0 while B is 0); the second A too
        session_call(session, f"mu.{method}", STEP if method == "step" else SFT)
    assert equal(base, snapshot(base_weights(session)))
    after = adapter(session)
    assert all(not torch.equal(t, after[name]) for name, t in lora.items())  # every A and B moved
    assert any(not torch.equal(t, head(session)[name]) for name, t in score_head.items())
    fingerprint = session_call(session, "mu.fingerprint", {})
    assert fingerprint["base"] == before["base"] and fingerprint["fingerprint"] != before["fingerprint"] and fingerprint["steps"] == 2
    # Without LoRA the same step moves the base: the test above can fail.
    plain, _ = init(model_dir)
    untouched = snapshot(base_weights(plain))
    session_call(plain, f"mu.{method}", STEP if method == "step" else SFT)
    assert not equal(untouched, snapshot(base_weights(plain)))


def test_the_reference_is_a_second_frozen_peft_adapter_on_the_shared_base(model_dir: Path) -> None:
    session, _ = init(model_dir, {"lora_dropout": 0.0})
    mu = session.mu
    for _ in range(2):  # a non-zero adapter to freeze
        session_call(session, "mu.step", STEP)
    session_call(session, "mu.set_reference", {})
    assert isinstance(mu.reference, ReferenceView) and not list(mu.reference.parameters())
    assert session_call(session, "health", {})["mu"]["reference"] is True
    frozen_adapter = adapter(session, REFERENCE)
    assert equal(frozen_adapter, {name.replace(f".{ADAPTER}.", f".{REFERENCE}."): t for name, t in adapter(session).items()})
    inputs = batch(steps_of(STEPS), mu.pooling)
    frozen, _ = mu.forward(mu.reference, inputs)
    first = session_call(session, "mu.step", STEP)
    assert first["kl"] == pytest.approx(0.0, abs=1e-9)  # μ = μ_ref right after set_reference
    second = session_call(session, "mu.step", STEP)
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
        session_call(session, "mu.step", STEP)
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
        session_call(session, "mu.step", STEP)
    session_call(session, "mu.set_reference", {})
    session_call(session, "mu.step", STEP)
    saved = session_call(session, "mu.save", {"dir": str(tmp_path)})
    assert saved["steps"] == 3
    assert {p.name for p in tmp_path.iterdir()} >= {"mu.pt", MU_HEAD_FILE, ADAPTER_DIR, REFERENCE_DIR}
    # peft's save_pretrained: the default adapter at the directory's root, another in a subdirectory named after it.
    assert (tmp_path / ADAPTER_DIR / "adapter_config.json").exists()
    assert (tmp_path / REFERENCE_DIR / REFERENCE / "adapter_config.json").exists()
    assert read_checkpoint(tmp_path / "mu.pt", MU_CHECKPOINT_FORMAT)["network"] == {}  # no base weights copied
    loaded = Session(DistContext(0, 1, 0), None)
    summary = session_call(loaded, "mu.load", {"dir": str(tmp_path)})
    assert summary["steps"] == 3 and summary["reference"] is True and summary["lora"]["lora_dropout"] == 0.0
    assert session_call(loaded, "mu.scores", {"steps": STEPS}) == session_call(session, "mu.scores", {"steps": STEPS})
    assert equal(adapter(loaded), adapter(session)) and equal(adapter(loaded, REFERENCE), adapter(session, REFERENCE))
    assert equal(head(loaded), head(session)) and equal(snapshot(base_weights(loaded)), snapshot(base_weights(session)))
    assert session_call(loaded, "mu.fingerprint", {})["fingerprint"] == session_call(session, "mu.fingerprint", {})["fingerprint"]
    assert all(not p.requires_grad for p in loaded.mu.adapter.named(REFERENCE).values())
    assert all(not p.requires_grad for p in base_weights(loaded).values())
    # The optimiser's moments and μ_ref came back: the next step is the same step.
    a, b = session_call(session, "mu.step", STEP), session_call(loaded, "mu.step", STEP)
    assert a["loss"] == b["loss"] and a["kl"] == b["kl"] > 0
    assert session_call(loaded, "mu.fingerprint", {})["fingerprint"] == session_call(session, "mu.fingerprint", {})["fingerprint"]


def test_a_bfloat16_checkpoint_is_trained_in_float32(model_dir: Path, tmp_path: Path) -> None:
    """Pretrained LMs ship in bfloat16, and transformers 5 loads a checkpoint in its own dtype by
    default: μ asks for float32, which its score head, float64 losses and fingerprints read."""
    import transformers

    from rubric_trainer.model import dtype_argument

    bf16 = tmp_path / "bf16"
    transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), **dtype_argument(transformers, torch.bfloat16)).save_pretrained(str(bf16))
    transformers.AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(str(bf16))  # a model directory ships its tokenizer
    if int(transformers.__version__.split(".")[0]) >= 5:  # seen with 5.17: a load without a dtype keeps bfloat16
        assert transformers.AutoModelForCausalLM.from_pretrained(str(bf16)).dtype == torch.bfloat16
    session, _ = init(bf16, {})
    assert all(p.dtype == torch.float32 for p in session.mu.network.parameters())
    metrics = session_call(session, "mu.step", STEP)
    assert metrics["grad_norm"] > 0
    assert all(-1.0 <= v <= 1.0 for row in session_call(session, "mu.scores", {"steps": STEPS})["d"] for v in row)
    assert len(session_call(session, "mu.fingerprint", {})["fingerprint"]) == 64


def test_a_module_the_model_lacks_is_an_error_reply_naming_it(model_dir: Path) -> None:
    """The tiny μ checks target_modules against q_proj/v_proj; a transformers μ passes any name to
    peft, whose refusal becomes the reply (and the sidecar goes on serving)."""
    session = Session(DistContext(0, 1, 0), None)
    reply = session.handle(Request(2, "mu.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "lora": {"target_modules": ["nonexistent_proj"]}}))
    assert "error" in reply and "nonexistent_proj" in reply["error"]["message"], reply
    assert session_call(session, "health", {})["ok"] is True


PROMPTS = [[10, 20, 30], [40], [50, 60, 70, 80, 90, 100], [110, 120]]


def argmax_loop(session: Session, prompt: list[int], max_new_tokens: int, eos_id: int) -> tuple[list[int], bool]:
    """Greedy decoding written out: a full forward of the model (with its active adapter) over
    prompt + written per token, no cache, no padding, the first maximum of the last logits."""
    written: list[int] = []
    while len(written) < max_new_tokens:
        with torch.no_grad():
            logits = session.mu.network.inner(input_ids=torch.tensor([prompt + written], device=session.mu.device)).logits[0, -1]
        token = int(logits.double().argmax())
        if token == eos_id:
            return written, True
        written.append(token)
    return written, False


def trained(model_dir: Path, **overrides) -> Session:
    """μ with a non-zero adapter (two SFT steps; dropout off, so the steps replay exactly)."""
    session, _ = init(model_dir, {"lora_dropout": 0.0}, **overrides)
    for _ in range(2):
        session_call(session, "mu.sft", SFT)
    return session


def test_greedy_generation_is_the_argmax_loop_over_the_models_logits(model_dir: Path) -> None:
    session = trained(model_dir)
    never = 299  # an id below the vocabulary the random model does not write within 6 tokens (checked below)
    expected = [argmax_loop(session, prompt, 6, never) for prompt in PROMPTS]
    assert all(not finished for _, finished in expected)
    result = session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 6, "eos_id": never})
    assert result == {"ids": [ids for ids, _ in expected], "finished": [False] * len(PROMPTS)}
    assert session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 6, "eos_id": never}) == result  # deterministic
    # EOS: the token the loop writes third for prompt 0 ends that row there, left out of its ids.
    eos = expected[0][0][2]
    stop = expected[0][0].index(eos)
    stopped = session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 6, "eos_id": eos})
    assert stopped["ids"][0] == expected[0][0][:stop] and stopped["finished"][0] is True
    for b, prompt in enumerate(PROMPTS):
        assert (stopped["ids"][b], stopped["finished"][b]) == argmax_loop(session, prompt, 6, eos)


def test_a_left_padded_batch_writes_what_each_prompt_writes_alone(model_dir: Path) -> None:
    session = trained(model_dir)
    batched = session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 8, "eos_id": 299})
    for b, prompt in enumerate(PROMPTS):
        alone = session_call(session, "mu.generate", {"prompts": [prompt], "max_new_tokens": 8, "eos_id": 299})
        assert alone == {"ids": [batched["ids"][b]], "finished": [batched["finished"][b]]}
    # A row stops at max_seq_len (64 positions): 62 prompt tokens leave room for 2.
    long = session_call(session, "mu.generate", {"prompts": [[10] * 62, [20]], "max_new_tokens": 5, "eos_id": 299})
    assert [len(ids) for ids in long["ids"]] == [2, 5] and long["finished"] == [False, False]


def test_sampled_generation_follows_the_streams_alone_or_batched(model_dir: Path) -> None:
    """Sampling is the tiny μ's rule (``mu_generate.next_tokens``) over this model's logits: one
    stream per row, so a row writes the same tokens alone or in a left-padded batch."""
    from rubric_trainer.xoshiro import ALGORITHM

    session = trained(model_dir)
    rng = [{"algorithm": ALGORITHM, "words": [b + 1, 7, 11, 13], "key": f"{b:016x}"} for b in range(len(PROMPTS))]
    params = {"prompts": PROMPTS, "max_new_tokens": 5, "eos_id": 299, "temperature": 1.5, "rng": rng}
    batched = session_call(session, "mu.generate", params)
    for b, prompt in enumerate(PROMPTS):
        alone = session_call(session, "mu.generate", {**params, "prompts": [prompt], "rng": [rng[b]]})
        assert alone["ids"] == [batched["ids"][b]]
    greedy = session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 5, "eos_id": 299})
    assert batched["ids"] != greedy["ids"]


def test_max_new_tokens_defaults_to_arcos_128(model_dir: Path) -> None:
    session = trained(model_dir)
    result = session_call(session, "mu.generate", {"prompts": [[10, 20]], "eos_id": 299})
    # The random model may write EOS-free text to its limit: 62 new tokens here (64 positions), below 128.
    assert result["finished"] == [False] and len(result["ids"][0]) == 62


def test_a_trained_adapter_changes_what_is_written(model_dir: Path) -> None:
    """The adapter is active while generating: after SFT on the steps' criteria the trained μ
    writes other tokens than the base model (a fresh adapter, B = 0) on these prompts (seen:
    every row differs after 10 steps; the criteria themselves come after about 40)."""
    base, _ = init(model_dir, {"lora_dropout": 0.0})
    taught, _ = init(model_dir, {"lora_dropout": 0.0})
    for _ in range(10):
        session_call(taught, "mu.sft", {**SFT, "learning_rate": 5e-2})
    prompts = [s["prompt"] for s in STEPS]
    params = {"prompts": prompts, "max_new_tokens": 3, "eos_id": 299}
    before, after = session_call(base, "mu.generate", params), session_call(taught, "mu.generate", params)
    assert after["ids"] != before["ids"]
    # And what it writes is the argmax of its own logits (mu.logits: the adapter's forward).
    for prompt, ids in zip(prompts, after["ids"]):
        logits = session_call(taught, "mu.logits", {"ids": [prompt]})["logits"][0][-1]
        assert ids[0] == logits.index(max(logits))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_half_precision_backbone_keeps_the_score_head_in_float32(model_dir: Path, dtype: str) -> None:
    reference, _ = init(model_dir, {})
    session, summary = init(model_dir, {}, dtype=dtype)
    mu = session.mu
    assert summary["dtype"] == dtype
    assert all(p.dtype == getattr(torch, dtype) for p in base_weights(session).values())
    assert all(p.dtype == torch.float32 for p in mu.network.score_head.parameters())
    assert all(p.dtype == torch.float32 for p in mu.adapter.parameters())  # peft upcasts the adapter
    inputs = mu.batch(steps_of(STEPS))
    with torch.no_grad():
        logp, d = mu.forward(mu.network, inputs)
    assert d.dtype == torch.float32 and logp is not None and logp.dtype == torch.float32
    # The same seed, the same head and adapter: the scores of the float32 μ within half precision's error.
    half, full = session_call(session, "mu.scores", {"steps": STEPS}), session_call(reference, "mu.scores", {"steps": STEPS})
    assert torch.allclose(torch.tensor(half["d"]), torch.tensor(full["d"]), atol=5e-2)
    metrics = session_call(session, "mu.step", STEP)
    assert metrics["grad_norm"] > 0 and all(p.dtype == getattr(torch, dtype) for p in base_weights(session).values())
    assert len(session_call(session, "mu.fingerprint", {})["fingerprint"]) == 64  # numpy has no bfloat16: read as its bytes
    assert len(session_call(session, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 3, "eos_id": 299})["ids"]) == len(PROMPTS)


def test_a_cuda_device_torch_lacks_is_refused_by_name(model_dir: Path) -> None:
    session = Session(DistContext(0, 1, 0), None)
    devices = ["cuda:99"] if torch.cuda.is_available() else ["cuda", "cuda:99"]
    for device in devices:
        reply = session.handle(Request(3, "mu.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "lora": {}, "device": device}))
        assert reply["error"]["code"] == "unavailable" and reply["error"]["data"]["path"] == "params.device", reply
        assert repr(device) in reply["error"]["message"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mu_runs_on_cuda(model_dir: Path, tmp_path: Path, dtype: str) -> None:
    cpu = trained(model_dir)
    cuda = trained(model_dir, device="cuda", dtype=dtype)
    mu = cuda.mu
    assert session_call(cuda, "health", {})["mu"]["device"] == "cuda"
    assert all(p.is_cuda for p in mu.network.parameters()) and all(p.dtype == torch.float32 for p in mu.network.score_head.parameters())
    session_call(cuda, "mu.set_reference", {})
    metrics = session_call(cuda, "mu.step", STEP)
    session_call(cpu, "mu.set_reference", {})
    session_call(cpu, "mu.step", STEP)
    tolerance = 1e-4 if dtype == "float32" else 5e-2
    assert torch.allclose(torch.tensor(session_call(cuda, "mu.scores", {"steps": STEPS})["d"]), torch.tensor(session_call(cpu, "mu.scores", {"steps": STEPS})["d"]), atol=tolerance)
    assert metrics["grad_norm"] > 0
    generated = session_call(cuda, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 6, "eos_id": 299})
    if dtype == "float32":
        assert generated == session_call(cpu, "mu.generate", {"prompts": PROMPTS, "max_new_tokens": 6, "eos_id": 299})
    for b, prompt in enumerate(PROMPTS):
        assert (generated["ids"][b], generated["finished"][b]) == argmax_loop(cuda, prompt, 6, 299)
    session_call(cuda, "mu.save", {"dir": str(tmp_path)})
    loaded = Session(DistContext(0, 1, 0), None)
    assert session_call(loaded, "mu.load", {"dir": str(tmp_path)})["device"] == "cuda"
    assert all(p.is_cuda for p in loaded.mu.network.parameters())
    assert session_call(loaded, "mu.scores", {"steps": STEPS}) == session_call(cuda, "mu.scores", {"steps": STEPS})
    assert equal(adapter(loaded), adapter(cuda)) and equal(adapter(loaded, REFERENCE), adapter(cuda, REFERENCE))


def test_mu_reads_text_with_the_models_own_tokenizer_and_chat_template(tmp_path: Path) -> None:
    """``mu.tokenize``/``detokenize``/``chat`` are the policy's methods on μ's tokenizer: a step
    prompt through the template with the assistant's turn opened, criteria text without special
    tokens, and the summary says which end token closes μ's criteria."""
    import transformers
    from hf_model import CHATML, write_model

    directory = write_model(tmp_path / "chat", CORPUS, vocab_size=300, d_model=D_MODEL, layers=LAYERS, heads=4, max_positions=128, chat_template=CHATML)
    session, summary = init(directory, lora={"r": 4})
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(directory))
    assert summary["tokenizer"] == {"size": len(tokenizer), "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id, "chat_template": True}
    conversation = [{"role": "system", "content": "Write 3 criteria."}, {"role": "user", "content": "Question: who?"}]
    ids = session_call(session, "mu.chat", {"conversations": [conversation]})["ids"][0]
    assert tokenizer.decode(ids) == f"<|system|>\nWrite 3 criteria.{tokenizer.eos_token}\n<|user|>\nQuestion: who?{tokenizer.eos_token}\n<|assistant|>\n"
    text = '{"criteria": ["a", "b", "c"]}'
    criteria = session_call(session, "mu.tokenize", {"texts": [text]})["ids"][0]
    assert criteria == tokenizer(text, add_special_tokens=False)["input_ids"]
    assert session_call(session, "mu.detokenize", {"ids": [criteria + [tokenizer.eos_token_id]]})["texts"] == [text]
    # μ scores and trains on these very ids.
    assert len(session_call(session, "mu.scores", {"steps": [{"prompt": ids, "criteria": criteria}]})["d"][0]) == K
    reply = session.handle(Request(7, "mu.detokenize", {"ids": [[len(tokenizer) + 10_000]]}))
    assert reply["error"]["code"] == "invalid_params" and "params.ids[0]" in reply["error"]["message"]


def test_a_mu_whose_tokenizer_has_no_chat_template_refuses_mu_chat(model_dir: Path) -> None:
    session, summary = init(model_dir)
    assert summary["tokenizer"]["chat_template"] is False
    reply = session.handle(Request(3, "mu.chat", {"conversations": [[{"role": "user", "content": "hi"}]]}))
    assert reply["error"]["code"] == "unavailable" and "use mu.tokenize" in reply["error"]["message"]


def test_a_lora_mus_fingerprint_is_its_adapters_and_heads_not_the_bases(model_dir: Path) -> None:
    """What the checkpoint holds is what the fingerprint hashes: a step moves it, the frozen base
    (``from_pretrained(name)`` again at load) does not enter it, so a saved version of a 4B μ is not
    a pass over its billions of weights."""
    session, _ = init(model_dir, {"r": 4})
    before = session_call(session, "mu.fingerprint", {})["fingerprint"]
    base = next(p for name, p in session.mu.network.named_parameters() if "embed_tokens" in name)
    with torch.no_grad():
        base.add_(1.0)
    assert session_call(session, "mu.fingerprint", {})["fingerprint"] == before
    session_call(session, "mu.step", STEP)
    assert session_call(session, "mu.fingerprint", {})["fingerprint"] != before
