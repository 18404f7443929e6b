"""The policy's methods: ``policy.*``, its checkpoint (``checkpoint.save``/``load``) and ONNX file
(``export.onnx``), and ``gspo.loss``, the objective the policy trains on, answered without a policy.
Each handler checks what the schema cannot (ids against the vocabulary, lengths against the model)
before the policy runs, so that a bad request is an ``invalid_params`` reply naming its field.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Callable

import torch

from .faults import InvalidParams, NonFinite
from .objectives import clipped_objective, pad_rows, unpad_rows
from .policy import Group, Policy, Rollout

if TYPE_CHECKING:  # the server imports this module for its method table
    from .server import Call


def gspo_loss(call: Call, params: dict) -> dict:
    """The clipped objective of one group in float64, with ∂loss/∂logp_new by autograd: the torch
    twin of @rubric/core's gspoObjective / grpoObjective / drGrpoObjective."""
    started = time.perf_counter()
    lengths = [len(row) for row in params["logp_new"]]
    logp_new = pad_rows(params["logp_new"]).requires_grad_(params["gradient"])
    mask_rows = params["mask"] if params["mask"] is not None else [[True] * n for n in lengths]
    result = clipped_objective(
        params["objective"],
        logp_new,
        pad_rows(params["logp_old"]),
        pad_rows([[1.0 if m else 0.0 for m in row] for row in mask_rows]).bool(),
        torch.tensor(params["advantages"], dtype=torch.float64),
        eps_low=params["eps_low"],
        eps_high=params["eps_high"],
        beta=params["beta"],
        logp_ref=pad_rows(params["logp_ref"]) if params["logp_ref"] is not None else None,
        max_tokens=params["max_tokens"],
    )
    loss = result.loss.item()
    if not math.isfinite(loss):
        raise NonFinite(f"the loss is {loss}", {"loss": str(loss)})
    reply: dict = {
        "loss": loss,
        "ratios": result.ratios.tolist() if params["objective"] == "gspo" else unpad_rows(result.ratios, lengths),
        "clipped_fraction": result.clipped_fraction,
    }
    if params["gradient"]:
        result.loss.backward()
        reply["grad_logp_new"] = unpad_rows(logp_new.grad, lengths)
    if result.kl is not None:
        reply["kl"] = result.kl.item()
    reply["compute_ms"] = (time.perf_counter() - started) * 1000
    return reply


def policy_init(call: Call, params: dict) -> dict:
    # Built beside the old policy, which stays in place if this fails (out of memory, say).
    policy = Policy(params, call.session.dist)
    call.session.policy = policy
    return policy.describe()


def policy_sample(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    max_new_tokens = params["max_new_tokens"] or policy.init["max_new_tokens"]
    policy.check_tokens(params["prompt"], "params.prompt")
    if len(params["prompt"]) + max_new_tokens - 1 > policy.max_seq_len:
        raise InvalidParams(
            f"params.max_new_tokens: a prompt of {len(params['prompt'])} and {max_new_tokens} new tokens need {len(params['prompt']) + max_new_tokens - 1} positions; the model has {policy.max_seq_len}",
            {"path": "params.max_new_tokens"},
        )
    eos = params["eos_token_id"] if params["eos_token_id"] is not None else policy.eos_token_id
    sequences = policy.sample(params["prompt"], params["n"], seed=params["seed"], temperature=params["temperature"], max_new_tokens=max_new_tokens, eos_token_id=eos, check_cancelled=call.check_cancelled)
    return {"sequences": sequences}


def policy_logprobs(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    policy.check_tokens(params["prompt"], "params.prompt")
    for k, tokens in enumerate(params["sequences"]):
        policy.check_sequence(params["prompt"], tokens, f"params.sequences[{k}]")
    return {"logprobs": policy.logprobs(params["prompt"], params["sequences"])}


def policy_tokenize(call: Call, params: dict) -> dict:
    return {"ids": call.session.require_policy().tokenize(params["texts"])}


def policy_chat(call: Call, params: dict) -> dict:
    return {"ids": call.session.require_policy().chat(params["conversations"])}


def policy_detokenize(call: Call, params: dict) -> dict:
    return {"texts": call.session.require_policy().detokenize(params["ids"])}


def policy_step(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    groups = []
    for g, group in enumerate(params["groups"]):
        policy.check_tokens(group["prompt"], f"params.groups[{g}].prompt")
        for k, sequence in enumerate(group["sequences"]):
            policy.check_sequence(group["prompt"], sequence["tokens"], f"params.groups[{g}].sequences[{k}].tokens")
        groups.append(Group(group["prompt"], [Rollout(s["tokens"], s["logp_old"], s["advantage"]) for s in group["sequences"]]))
    call.check_cancelled()
    metrics = policy.step(
        groups,
        objective=params["objective"],
        eps_low=params["eps_low"],
        eps_high=params["eps_high"],
        learning_rate=params["learning_rate"],
        kl_coef=params["kl_coef"],
        max_tokens=params["max_tokens"],
        max_grad_norm=params["max_grad_norm"],
    )
    call.notify("metrics", {"method": "policy.step", **metrics})
    return metrics


def policy_sft_step(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    examples = []
    for i, example in enumerate(params["examples"]):
        policy.check_tokens(example["prompt"], f"params.examples[{i}].prompt")
        policy.check_sequence(example["prompt"], example["tokens"], f"params.examples[{i}].tokens")
        examples.append((example["prompt"], example["tokens"]))
    call.check_cancelled()
    metrics = policy.sft_step(examples, learning_rate=params["learning_rate"], max_grad_norm=params["max_grad_norm"])
    call.notify("metrics", {"method": "policy.sft_step", **metrics})
    return metrics


def policy_set_reference(call: Call, params: dict) -> dict:
    call.session.require_policy().set_reference()
    return {"ok": True}


def policy_reset_optimizer(call: Call, params: dict) -> dict:
    call.session.require_policy().reset_optimizer()
    return {"ok": True}


def policy_fingerprint(call: Call, params: dict) -> dict:
    """Each rank's parameter fingerprint, in rank order: replicas in sync have equal fingerprints."""
    policy = call.session.require_policy()
    return {"world_size": call.session.dist.world_size, "fingerprints": call.session.dist.gather(policy.fingerprint()), "steps": policy.steps}


def checkpoint_save(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    return {"path": policy.save(params["dir"]), "steps": policy.steps}


def checkpoint_load(call: Call, params: dict) -> dict:
    session = call.session
    session.policy = Policy.load(params["dir"], session.dist, session.policy)
    return session.policy.describe()


def export_onnx(call: Call, params: dict) -> dict:
    policy = call.session.require_policy()
    probe = params["probe"]
    if probe is not None:
        for b, row in enumerate(probe):
            policy.check_tokens(row, f"params.probe[{b}]")
            if len(row) != len(probe[0]) or len(row) > policy.max_seq_len:
                raise InvalidParams(f"params.probe[{b}]: expected {len(probe[0])} tokens (as probe[0], at most {policy.max_seq_len}), got {len(row)}", {"path": f"params.probe[{b}]"})
    return policy.export_onnx(params["path"], params["opset"], probe)


METHODS: dict[str, Callable[[Call, dict], dict]] = {
    "gspo.loss": gspo_loss,
    "policy.init": policy_init,
    "policy.sample": policy_sample,
    "policy.logprobs": policy_logprobs,
    "policy.tokenize": policy_tokenize,
    "policy.detokenize": policy_detokenize,
    "policy.chat": policy_chat,
    "policy.step": policy_step,
    "policy.sft_step": policy_sft_step,
    "policy.set_reference": policy_set_reference,
    "policy.reset_optimizer": policy_reset_optimizer,
    "policy.fingerprint": policy_fingerprint,
    "checkpoint.save": checkpoint_save,
    "checkpoint.load": checkpoint_load,
    "export.onnx": export_onnx,
}
