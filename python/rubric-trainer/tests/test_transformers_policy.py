"""The sidecar's transformers path: a Hugging Face causal LM and its own tokenizer, loaded from a
directory (tests/hf_model.py writes a small random one: nothing is downloaded), sampled through its
key/value cache, trained by SFT and GSPO, on the GPU where there is one. Skipped where transformers
or tokenizers is not installed (Debian has neither); the GPU machine has both."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from conftest import TINY_MODEL, session_call
from rubric_trainer.distributed import DistContext
from rubric_trainer.protocol import Request
from rubric_trainer.server import Session

HAS_TRANSFORMERS = all(importlib.util.find_spec(m) is not None for m in ("transformers", "tokenizers"))
needs_transformers = pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers and tokenizers are not installed here")

CORPUS = [
    '{"questions": ["Which sections matter most to you?", "How long should it be?"]}',
    '{"criteria": [{"text": "Includes a summary table", "weight": 3}, {"text": "Mentions \\"budget\\" from the brief", "weight": 2}]}',
    "Task: Draft a quarterly budget memo for the finance team.\nKey terms: budget, quarterly, memo",
    "Q1: Which sections matter most to you?\nA1: The budget table and a short risk list.",
] * 8




@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hf_model import write_model

    return write_model(tmp_path_factory.mktemp("hf") / "manager", CORPUS, vocab_size=400, d_model=32, layers=2, heads=4, max_positions=128)


@pytest.fixture()
def session(model_dir: Path) -> Session:
    session = Session(DistContext(0, 1, 0), None)
    session_call(session, "policy.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "seed": 3, "learning_rate": 3e-3})
    return session


@needs_transformers
def test_the_policy_reports_its_tokenizer_and_its_device(session: Session, model_dir: Path) -> None:
    import transformers

    health = session_call(session, "health", {})["policy"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_dir))
    assert health["tokenizer"] == {"size": len(tokenizer), "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id, "chat_template": False}
    assert health["tokenizer"]["eos_token_id"] is not None
    assert health["device"].startswith("cuda" if torch.cuda.is_available() else "cpu")


@needs_transformers
def test_tokenize_and_detokenize_round_trip_without_special_tokens(session: Session) -> None:
    texts = ['{"criteria": [{"text": "Mentions \\"budget\\"", "weight": 2}]}', "Task: a memo — in €, with ünïcode", ""]
    ids = session_call(session, "policy.tokenize", {"texts": texts})["ids"]
    eos = session_call(session, "health", {})["policy"]["tokenizer"]["eos_token_id"]
    assert ids[2] == [] and all(eos not in row for row in ids)
    # The merges learnt from the corpus make its phrases shorter than their bytes.
    assert len(ids[0]) < len(texts[0].encode())
    assert session_call(session, "policy.detokenize", {"ids": ids[:2]})["texts"] == texts[:2]
    # An end token the model wrote is left out of the text.
    assert session_call(session, "policy.detokenize", {"ids": [ids[0] + [eos]]})["texts"] == [texts[0]]


@needs_transformers
def test_sampling_through_the_cache_reports_the_models_own_logprobs_and_stops_at_its_eos(session: Session) -> None:
    prompt = session_call(session, "policy.tokenize", {"texts": ["Task: Draft a quarterly budget memo.\nQuestions: "]})["ids"][0]
    eos = session_call(session, "health", {})["policy"]["tokenizer"]["eos_token_id"]
    # No eos_token_id in policy.init or here: the tokenizer's end token ends a completion.
    sequences = session_call(session, "policy.sample", {"prompt": prompt, "n": 6, "seed": 5, "max_new_tokens": 40})["sequences"]
    again = session_call(session, "policy.sample", {"prompt": prompt, "n": 6, "seed": 5, "max_new_tokens": 40})["sequences"]
    assert [s["tokens"] for s in sequences] == [s["tokens"] for s in again]
    recomputed = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [s["tokens"] for s in sequences]})["logprobs"]
    for sequence, logprobs in zip(sequences, recomputed):
        tokens = sequence["tokens"]
        assert eos not in tokens[:-1] and (len(tokens) == 40 or tokens[-1] == eos)
        # The cached draw's log-probs are a full forward's: the cache neither shifts positions nor drops the prefix.
        assert sequence["logprobs"] == pytest.approx(logprobs, abs=2e-4)


def model_session(kind: str, model_dir: Path | None) -> Session:
    session = Session(DistContext(0, 1, 0), None)
    model = {"kind": "transformers", "name": str(model_dir)} if kind == "transformers" else {**TINY_MODEL, "vocab_size": 400, "max_seq_len": 96}
    session_call(session, "policy.init", {"model": model, "seed": 3, "learning_rate": 3e-3, **({"eos_token_id": 1} if kind == "tiny" else {})})
    return session


def completion(session: Session, kind: str) -> tuple[list[int], list[int]]:
    """A prompt and a completion ending with the model's end token: the corpus's rubric turn, or ids for the small transformer."""
    if kind == "tiny":
        return [0, 5], [7 + (3 * t) % 390 for t in range(40)] + [1]
    prompt, target = session_call(session, "policy.tokenize", {"texts": ["Rubric: ", CORPUS[1]]})["ids"]
    return prompt, target + [session_call(session, "health", {})["policy"]["tokenizer"]["eos_token_id"]]


# The small transformer runs the same assertions everywhere, so that they are known to hold for a
# model that trains, wherever the transformers case is skipped.
KINDS = [pytest.param("transformers", marks=needs_transformers), "tiny"]


@pytest.mark.parametrize("kind", KINDS)
def test_sft_steps_teach_the_model_a_completion(kind: str, request: pytest.FixtureRequest) -> None:
    session = model_session(kind, request.getfixturevalue("model_dir") if kind == "transformers" else None)
    prompt, target = completion(session, kind)
    first = session_call(session, "policy.sft_step", {"examples": [{"prompt": prompt, "tokens": target}], "learning_rate": 3e-3})
    for _ in range(80):
        last = session_call(session, "policy.sft_step", {"examples": [{"prompt": prompt, "tokens": target}], "learning_rate": 3e-3})
    assert last["nll"] < 0.5 * first["nll"]
    greedy = session_call(session, "policy.sample", {"prompt": prompt, "n": 1, "seed": 1, "temperature": 1e-4, "max_new_tokens": 4})["sequences"][0]["tokens"]
    assert greedy == target[:4]


@pytest.mark.parametrize("kind", KINDS)
def test_a_gspo_step_widens_the_margin_of_the_better_completion(kind: str, request: pytest.FixtureRequest) -> None:
    session = model_session(kind, request.getfixturevalue("model_dir") if kind == "transformers" else None)
    prompt, _ = completion(session, kind)
    session_call(session, "policy.set_reference", {})
    good, bad = (s["tokens"] for s in session_call(session, "policy.sample", {"prompt": prompt, "n": 2, "seed": 9, "max_new_tokens": 6})["sequences"])
    before = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [good, bad]})["logprobs"]
    groups = [{"prompt": prompt, "sequences": [{"tokens": good, "logp_old": before[0], "advantage": 1.0}, {"tokens": bad, "logp_old": before[1], "advantage": -1.0}]}]
    metrics = session_call(session, "policy.step", {"groups": groups, "learning_rate": 1e-4, "eps_low": 0.2, "eps_high": 0.28, "kl_coef": 0.01})
    # At the reference, the KL is zero; the first step moves the parameters.
    assert metrics["kl"] == pytest.approx(0.0, abs=1e-6)
    after = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [good, bad]})["logprobs"]
    mean = lambda row: sum(row) / len(row)  # noqa: E731  GSPO's ratio is per token (length-normalised)
    # GSPO ascends A·s_good − s_bad: to first order the gap between the two sequences' mean log-probs
    # widens. (Each one alone need not move its own way: Adam's first step follows the gradient's signs.)
    assert mean(after[0]) - mean(after[1]) > mean(before[0]) - mean(before[1])


def test_the_small_transformer_has_no_tokenizer_to_lend() -> None:
    session = Session(DistContext(0, 1, 0), None)
    session_call(session, "policy.init", {"model": TINY_MODEL})
    assert session_call(session, "health", {})["policy"]["tokenizer"] is None
    reply = session.handle(Request(2, "policy.tokenize", {"texts": ["hello"]}))
    assert reply["error"]["code"] == "unavailable"
    assert "policy.tokenize needs a model with a tokenizer" in reply["error"]["message"]


@needs_transformers
def test_a_chat_template_renders_conversations_with_the_assistants_turn_open(tmp_path: Path) -> None:
    import transformers
    from hf_model import CHATML, write_model

    directory = write_model(tmp_path / "chat", CORPUS, vocab_size=400, d_model=32, layers=2, heads=4, max_positions=128, chat_template=CHATML)
    session = Session(DistContext(0, 1, 0), None)
    session_call(session, "policy.init", {"model": {"kind": "transformers", "name": str(directory)}, "seed": 3})
    assert session_call(session, "health", {})["policy"]["tokenizer"]["chat_template"] is True
    conversations = [
        [{"role": "system", "content": "Answer with Finish[...]"}, {"role": "user", "content": "Question: who?"}],
        [{"role": "user", "content": "Question: where?"}],
    ]
    ids = session_call(session, "policy.chat", {"conversations": conversations})["ids"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(directory))
    eos = tokenizer.eos_token
    assert [tokenizer.decode(row) for row in ids] == [
        f"<|system|>\nAnswer with Finish[...]{eos}\n<|user|>\nQuestion: who?{eos}\n<|assistant|>\n",
        f"<|user|>\nQuestion: where?{eos}\n<|assistant|>\n",
    ]
    # The turns' ends are the tokenizer's end token itself, not its characters spelled out.
    assert ids[1].count(tokenizer.eos_token_id) == 1
    # A role the template does not know is refused at the wire, naming its path.
    reply = session.handle(Request(9, "policy.chat", {"conversations": [[{"role": "tool", "content": "x"}]]}))
    assert reply["error"]["code"] == "invalid_params"
    assert "params.conversations[0][0].role" in reply["error"]["message"]


@needs_transformers
def test_a_model_without_a_chat_template_refuses_policy_chat(session: Session) -> None:
    reply = session.handle(Request(2, "policy.chat", {"conversations": [[{"role": "user", "content": "hi"}]]}))
    assert reply["error"]["code"] == "unavailable"
    assert "needs a tokenizer with a chat template" in reply["error"]["message"]


LORA = {"r": 4, "lora_alpha": 16, "lora_dropout": 0.0}


def lora_session(model_dir: Path) -> Session:
    session = Session(DistContext(0, 1, 0), None)
    session_call(session, "policy.init", {"model": {"kind": "transformers", "name": str(model_dir), "lora": LORA}, "seed": 3, "learning_rate": 1e-2})
    return session


def reinforce(session: Session, prompt: list[int], tokens: list[int], kl_coef: float) -> dict:
    logp = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [tokens]})["logprobs"][0]
    groups = [{"prompt": prompt, "sequences": [{"tokens": tokens, "logp_old": logp, "advantage": 1.0}]}]
    return session_call(session, "policy.step", {"groups": groups, "objective": "dr-grpo", "max_tokens": 1, "learning_rate": 1e-2, "kl_coef": kl_coef})


@needs_transformers
def test_a_lora_policy_trains_its_adapter_alone_and_holds_its_reference_as_a_second_adapter(model_dir: Path) -> None:
    session = lora_session(model_dir)
    policy = session.policy
    base = {name: p.detach().clone() for name, p in policy.model.named_parameters() if "lora_" not in name}
    trained = {id(p) for group in policy.optimizer.param_groups for p in group["params"]}
    assert trained == {id(p) for name, p in policy.model.named_parameters() if "lora_" in name}
    prompt, target = completion(session, "transformers")
    session_call(session, "policy.set_reference", {})
    # π_ref shares the base: no second copy of the model, one more adapter.
    assert not any(isinstance(m, type(policy.model)) for m in policy.reference.modules() if m is not policy.reference)
    assert sum(".reference." in name for name, _ in policy.model.named_parameters()) > 0
    first = reinforce(session, prompt, target, 0.05)
    assert first["kl"] == pytest.approx(0.0, abs=1e-9)
    second = reinforce(session, prompt, target, 0.05)
    assert second["kl"] > 0
    # The base never moved; the adapter did.
    assert all(torch.equal(p, base[name]) for name, p in policy.model.named_parameters() if "lora_" not in name)


@needs_transformers
def test_a_lora_checkpoint_is_a_peft_adapter_directory_and_restores_the_policy_exactly(model_dir: Path, tmp_path: Path) -> None:
    import peft
    import transformers

    session = lora_session(model_dir)
    prompt, target = completion(session, "transformers")
    session_call(session, "policy.sft_step", {"examples": [{"prompt": prompt, "tokens": target}], "learning_rate": 1e-2})
    session_call(session, "policy.set_reference", {})
    reinforce(session, prompt, target, 0.05)
    session_call(session, "checkpoint.save", {"dir": str(tmp_path)})
    assert (tmp_path / "adapter_config.json").exists() and (tmp_path / "adapter_model.safetensors").exists()
    assert (tmp_path / "pi-reference-adapter" / "reference" / "adapter_model.safetensors").exists()
    # policy.pt holds no weights of the base: the base is from_pretrained(name) again.
    state = torch.load(tmp_path / "policy.pt", weights_only=True)
    assert state["model"] == {} and state["reference"] is None and state["has_reference"] is True
    logp = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [target]})["logprobs"][0]
    # The next step from here, to compare against the restored policy's.
    after = reinforce(session, prompt, target, 0.05)
    next_logp = session_call(session, "policy.logprobs", {"prompt": prompt, "sequences": [target]})["logprobs"][0]

    restored = Session(DistContext(0, 1, 0), None)
    session_call(restored, "checkpoint.load", {"dir": str(tmp_path)})
    assert session_call(restored, "policy.logprobs", {"prompt": prompt, "sequences": [target]})["logprobs"][0] == pytest.approx(logp, abs=1e-6)
    again = reinforce(restored, prompt, target, 0.05)
    # Same optimiser moments and the same π_ref: the same KL, and the same step.
    assert again["kl"] == pytest.approx(after["kl"], rel=1e-5)
    assert session_call(restored, "policy.logprobs", {"prompt": prompt, "sequences": [target]})["logprobs"][0] == pytest.approx(next_logp, abs=1e-5)

    # What a server loads: the base with the directory as a peft adapter gives the policy's log-probs.
    base = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    served = peft.PeftModel.from_pretrained(base, str(tmp_path)).eval()
    ids = torch.tensor([prompt + target])
    with torch.no_grad():
        logits = served(input_ids=ids).logits[0].double().log_softmax(-1)
    served_logp = [float(logits[len(prompt) - 1 + t, token]) for t, token in enumerate(target)]
    assert served_logp == pytest.approx(logp, abs=1e-4)
