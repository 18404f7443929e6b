"""μ's methods (``mu.*``). Each handler checks what the schema cannot (ids against the vocabulary,
lengths against the model, K scores per example) before μ runs, so that a bad request is an
``invalid_params`` reply naming its field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .faults import InvalidParams
from .gguf import read_gguf
from .mu import Mu
from .mu_llama import gguf_vocabulary, llama_architecture
from .mu_export import check_max_criteria_tokens, check_tokenizer, export_version
from .mu_generate import generate
from .mu_steps import Step, steps_of

if TYPE_CHECKING:  # the server imports this module for its method table
    from .server import Call


def mu_init(call: Call, params: dict) -> dict:
    spec = params["model"]
    if spec["kind"] != "llama":
        call.session.mu = Mu(params, call.session.dist)
        return call.session.mu.describe()
    # A llama μ: its shape and weights from the GGUF file, and its vocabulary back to the client,
    # which tokenizes μ's text with it (the tiny μ's client trains its own tokenizer instead).
    gguf = read_gguf(spec["gguf"])
    vocabulary = gguf_vocabulary(gguf)
    params = {**params, "model": {**spec, **llama_architecture(gguf, spec["max_seq_len"])}}
    call.session.mu = Mu(params, call.session.dist, gguf)
    return {**call.session.mu.describe(), "vocabulary": vocabulary}


def checked_steps(mu: Mu, rows: list[dict], path: str) -> list[Step]:
    steps = steps_of(rows)
    for i, step in enumerate(steps):
        mu.check_step(step, f"{path}[{i}]")
    return steps


def mu_sft(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    steps = checked_steps(mu, params["examples"], "params.examples")
    for i, example in enumerate(params["examples"]):
        if len(example["scores"]) != mu.k:
            raise InvalidParams(f"params.examples[{i}].scores: expected {mu.k} scores (K of this μ), got {len(example['scores'])}", {"path": f"params.examples[{i}].scores"})
    call.check_cancelled()
    lr = params["learning_rate"]
    metrics = mu.sft(steps, [e["scores"] for e in params["examples"]], learning_rate=lr, head_learning_rate=params["head_learning_rate"] or lr)
    call.notify("metrics", {"method": "mu.sft", **metrics})
    return metrics


def mu_pretrain(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    for i, text in enumerate(params["texts"]):
        path = f"params.texts[{i}]"
        mu.check_tokens(text, path)
        if not 2 <= len(text) <= mu.max_seq_len:
            raise InvalidParams(f"{path}: expected 2 to {mu.max_seq_len} tokens (the model's positions), got {len(text)}", {"path": path})
    mu.require_shards(len(params["texts"]), "texts")
    call.check_cancelled()
    metrics = mu.pretrain(params["texts"], learning_rate=params["learning_rate"])
    call.notify("metrics", {"method": "mu.pretrain", **metrics})
    return metrics


def mu_step(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    trajectories = [checked_steps(mu, t["steps"], f"params.trajectories[{i}].steps") for i, t in enumerate(params["trajectories"])]
    call.check_cancelled()
    lr = params["learning_rate"]
    metrics = mu.step(trajectories, [t["reward"] for t in params["trajectories"]], learning_rate=lr, head_learning_rate=params["head_learning_rate"] or lr, beta=params["beta"], objective=params["objective"])
    call.notify("metrics", {"method": "mu.step", **metrics})
    return metrics


def mu_scores(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    return mu.scores(checked_steps(mu, params["steps"], "params.steps"))


def mu_logits(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    ids = params["ids"]
    for b, row in enumerate(ids):
        mu.check_tokens(row, f"params.ids[{b}]")
        if len(row) != len(ids[0]) or len(row) > mu.max_seq_len:
            raise InvalidParams(f"params.ids[{b}]: expected {len(ids[0])} tokens (as ids[0], at most {mu.max_seq_len}), got {len(row)}", {"path": f"params.ids[{b}]"})
    return {"logits": mu.logits(ids)}


def mu_generate(call: Call, params: dict) -> dict:
    """New tokens after each prompt; the loop and its stopping rules are ``mu_generate.generate``'s."""
    mu = call.session.require_mu()
    for b, prompt in enumerate(params["prompts"]):
        mu.check_tokens(prompt, f"params.prompts[{b}]")
        if len(prompt) > mu.max_seq_len - 1:
            raise InvalidParams(f"params.prompts[{b}]: {len(prompt)} tokens leave no room to write one; this μ holds {mu.max_seq_len} positions, so a prompt has at most {mu.max_seq_len - 1}", {"path": f"params.prompts[{b}]"})
    if params["eos_id"] >= mu.vocab_size:
        raise InvalidParams(f"params.eos_id: expected an id below the vocabulary size {mu.vocab_size}, got {params['eos_id']}", {"path": "params.eos_id"})
    return generate(mu, params["prompts"], max_new_tokens=params["max_new_tokens"], eos_id=params["eos_id"], temperature=params["temperature"], rngs=params["rng"], check_cancelled=call.check_cancelled)


def mu_tokenize(call: Call, params: dict) -> dict:
    return {"ids": call.session.require_mu().tokenize(params["texts"])}


def mu_detokenize(call: Call, params: dict) -> dict:
    return {"texts": call.session.require_mu().detokenize(params["ids"])}


def mu_chat(call: Call, params: dict) -> dict:
    return {"ids": call.session.require_mu().chat(params["conversations"])}


def mu_embed(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    ids, rows = params["ids"], params["rows"]
    if len(rows) != len(ids):
        raise InvalidParams(f"params.rows: expected one row per id ({len(ids)}), got {len(rows)}", {"path": "params.rows"})
    mu.check_tokens(ids, "params.ids")
    if len(set(ids)) != len(ids):
        raise InvalidParams("params.ids: lists a token twice", {"path": "params.ids"})
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise InvalidParams(f"params.rows[{i}]: expected {len(rows[0])} values (as params.rows[0]), got {len(row)}", {"path": f"params.rows[{i}]"})
    return {"rows": mu.embed(ids, rows)}


def mu_set_reference(call: Call, params: dict) -> dict:
    call.session.require_mu().set_reference()
    return {"ok": True}


def mu_fingerprint(call: Call, params: dict) -> dict:
    """Rank 0's parameter fingerprint (what the TypeScript side reads), and each rank's in rank
    order as ``policy.fingerprint`` gives them: replicas in sync have equal fingerprints. ``base``
    is rank 0's backbone alone (no score head, no adapter): constant while μ trains through LoRA."""
    mu = call.session.require_mu()
    fingerprints = call.session.dist.gather(mu.fingerprint())
    return {"fingerprint": fingerprints[0], "fingerprints": fingerprints, "world_size": call.session.dist.world_size, "steps": mu.steps, "base": mu.base_fingerprint()}


def mu_save(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    return {"path": mu.save(params["dir"]), "steps": mu.steps}


def mu_load(call: Call, params: dict) -> dict:
    call.session.mu = Mu.load(params["dir"], call.session.dist, device=params["device"])
    return call.session.mu.describe()


def mu_export(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    check_tokenizer(params["tokenizer"], "params.tokenizer")
    check_max_criteria_tokens(mu, params["max_criteria_tokens"], "params.max_criteria_tokens")
    return export_version(mu, params["dir"], params["opset"], params["tokenizer"], params["max_criteria_tokens"], params["prompt"])


METHODS: dict[str, Callable[[Call, dict], dict]] = {
    "mu.init": mu_init,
    "mu.sft": mu_sft,
    "mu.pretrain": mu_pretrain,
    "mu.step": mu_step,
    "mu.scores": mu_scores,
    "mu.logits": mu_logits,
    "mu.generate": mu_generate,
    "mu.tokenize": mu_tokenize,
    "mu.detokenize": mu_detokenize,
    "mu.chat": mu_chat,
    "mu.embed": mu_embed,
    "mu.set_reference": mu_set_reference,
    "mu.fingerprint": mu_fingerprint,
    "mu.save": mu_save,
    "mu.load": mu_load,
    "mu.export": mu_export,
}
