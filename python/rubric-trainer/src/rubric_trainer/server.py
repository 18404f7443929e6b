"""The serve loop: read requests from stdin, run them one at a time, answer every one on stdout.

A reader thread parses stdin so that ``$/cancel`` is seen while a request runs (torch releases the
GIL in its kernels). Any failure of a request becomes an error reply and the loop goes on. The
loop ends on ``shutdown`` or when stdin closes (the client died), so no sidecar outlives its client.
Under torchrun, rank 0 runs this loop and broadcasts each request; the other ranks run it blind.
"""

from __future__ import annotations

import gc
import importlib.util
import logging
import math
import os
import queue
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import BinaryIO, Callable, NoReturn, Optional

import torch

from . import __version__
from .distributed import DistContext
from .faults import Cancelled, Fault, InvalidParams, NonFinite, NoPolicy, OutOfMemory, ParseError, UnknownMethod, is_out_of_memory
from .objectives import clipped_objective, pad_rows, unpad_rows
from .mu import Mu
from .mu_export import check_max_criteria_tokens, check_tokenizer, export_version
from .mu_generate import generate
from .mu_steps import Step, steps_of
from .policy import Group, Policy, Rollout
from .protocol import PARAMS, Channel, Request, parse_message
from .schema import ParamError

log = logging.getLogger("rubric_trainer")

END = object()
"""Queued by the reader when stdin closes."""

MAX_LINE_BYTES = int(os.environ.get("RUBRIC_SIDECAR_MAX_LINE_BYTES", str(256 * 1024 * 1024)))
"""The longest request line read; a longer one is skipped and answered with a parse error."""


@dataclass
class Call:
    """What a handler may use besides its params."""

    session: "Session"
    request: Request

    def check_cancelled(self) -> None:
        # Only a single process can stop mid-request: under torchrun the other ranks would be
        # left waiting in a collective. There, cancellation takes effect before a request starts.
        if not self.session.dist.distributed and self.request.id in self.session.cancelled:
            raise Cancelled(f"request {self.request.id} was cancelled while it ran")

    def notify(self, method: str, params: dict) -> None:
        if self.session.channel is not None:
            self.session.channel.notify(method, params)


class Session:
    def __init__(self, dist: DistContext, channel: Optional[Channel]) -> None:
        self.dist = dist
        self.channel = channel
        self.policy: Optional[Policy] = None
        self.mu: Optional[Mu] = None
        self.cancelled: set = set()

    def require_policy(self) -> Policy:
        if self.policy is None:
            raise NoPolicy("no policy yet: call policy.init (or checkpoint.load) first")
        return self.policy

    def require_mu(self) -> Mu:
        if self.mu is None:
            raise NoPolicy("no μ yet: call mu.init (or mu.load) first")
        return self.mu

    # --- the loop -------------------------------------------------------------------------------

    def serve_main(self, stdin: BinaryIO) -> None:
        assert self.channel is not None
        inbox: "queue.Queue[object]" = queue.Queue()
        threading.Thread(target=self.read, args=(stdin, inbox), name="stdin-reader", daemon=True).start()
        self.channel.notify("ready", {"pid": os.getpid(), "version": __version__, "torch": torch.__version__, "world_size": self.dist.world_size})
        while True:
            item = inbox.get()
            if item is END:
                self.dist.broadcast(None)
                return
            if isinstance(item, Fault):
                self.channel.send(error_reply(item.data.get("id"), item))
                continue
            assert isinstance(item, Request)
            if item.id in self.cancelled:
                self.cancelled.discard(item.id)
                self.channel.send(error_reply(item.id, Cancelled(f"request {item.id} was cancelled before it started")))
                continue
            self.dist.broadcast((item.method, item.params))
            reply = self.handle(item)
            self.cancelled.discard(item.id)
            try:
                self.channel.send(reply)
            except Fault as fault:
                self.channel.send(error_reply(item.id, fault))
            if item.method == "shutdown":
                return

    def serve_follower(self) -> None:
        while True:
            message = self.dist.broadcast(None)
            if message is None:
                return
            method, params = message
            reply = self.handle(Request(None, method, params))
            if "error" in reply:
                log.warning("rank %d: %s failed: %s", self.dist.rank, method, reply["error"]["message"])
            if method == "shutdown":
                return

    def read(self, stdin: BinaryIO, inbox: "queue.Queue[object]") -> None:
        # Whatever a line holds, the reader answers it and reads on, and END is always queued:
        # a reader that died would leave the loop waiting forever, answering nothing, never exiting.
        try:
            while True:
                line = stdin.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    # Skip the rest of the line in bounded pieces; never hold it whole.
                    while line and not line.endswith(b"\n"):
                        line = stdin.readline(MAX_LINE_BYTES)
                    inbox.put(ParseError(f"a line over {MAX_LINE_BYTES} bytes was skipped"))
                    continue
                self.read_line(line, inbox)
        except Exception as error:  # noqa: BLE001 — the stream itself failed (a closed pipe, a decode fault)
            log.error("stdin reader stopped: %s", error)
        finally:
            inbox.put(END)

    def read_line(self, line: bytes, inbox: "queue.Queue[object]") -> None:
        if not line.strip():
            return
        try:
            message = parse_message(line)
        except Fault as fault:
            inbox.put(fault)
            return
        except Exception as error:  # noqa: BLE001 — any other fault in one line is that line's error reply
            inbox.put(ParseError(f"unreadable line: {type(error).__name__}: {error}"))
            return
        if message.id is not None:
            inbox.put(message)
        elif message.method == "$/cancel" and isinstance(message.params.get("id"), (int, str)):
            self.cancelled.add(message.params["id"])
        else:
            log.warning("ignoring the notification %r", message.method)

    def handle(self, request: Request) -> dict:
        call = Call(self, request)
        try:
            method = METHODS.get(request.method)
            schema = PARAMS.get(request.method)
            if method is None or schema is None:
                raise UnknownMethod(f"no method {request.method!r}; the methods are {', '.join(sorted(METHODS))}", {"method": request.method})
            try:
                params = schema.parse(request.params, "params")
            except ParamError as error:
                raise InvalidParams(str(error), {"path": error.path}) from error
            return {"id": request.id, "result": method(call, params)}
        except Fault as fault:
            return error_reply(request.id, fault)
        except Exception as error:  # the loop must survive any failure of one request
            if is_out_of_memory(error):
                release_memory(self.policy)
                return error_reply(request.id, OutOfMemory(f"out of memory in {request.method}: {first_line(error)}"))
            log.error("%s failed:\n%s", request.method, traceback.format_exc())
            return error_reply(request.id, Fault(f"{type(error).__name__}: {first_line(error)}", {"traceback": traceback.format_exc(limit=8)}))


def error_reply(request_id: object, fault: Fault) -> dict:
    return {"id": request_id, "error": {"code": fault.code, "message": fault.message, "data": fault.data}}


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def release_memory(policy: Optional[Policy]) -> None:
    """After an out-of-memory failure: drop gradients and cached blocks so the next request can run."""
    if policy is not None:
        policy.optimizer.zero_grad(set_to_none=True)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# --- methods --------------------------------------------------------------------------------


def health(call: Call, params: dict) -> dict:
    session = call.session
    return {
        "ok": True,
        "version": __version__,
        "pid": os.getpid(),
        "torch": torch.__version__,
        "cuda": torch.cuda.is_available(),
        "world_size": session.dist.world_size,
        "transformers": importlib.util.find_spec("transformers") is not None,
        "policy": session.policy.describe() if session.policy is not None else None,
        "mu": session.mu.describe() if session.mu is not None else None,
    }


def shutdown(call: Call, params: dict) -> dict:
    return {"ok": True}


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


def mu_init(call: Call, params: dict) -> dict:
    call.session.mu = Mu(params, call.session.dist)
    return call.session.mu.describe()


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


def mu_step(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    trajectories = [checked_steps(mu, t["steps"], f"params.trajectories[{i}].steps") for i, t in enumerate(params["trajectories"])]
    call.check_cancelled()
    lr = params["learning_rate"]
    metrics = mu.step(trajectories, [t["reward"] for t in params["trajectories"]], learning_rate=lr, head_learning_rate=params["head_learning_rate"] or lr, beta=params["beta"])
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


def mu_set_reference(call: Call, params: dict) -> dict:
    call.session.require_mu().set_reference()
    return {"ok": True}


def mu_fingerprint(call: Call, params: dict) -> dict:
    """Rank 0's parameter fingerprint (what the TypeScript side reads), and each rank's in rank
    order as ``policy.fingerprint`` gives them: replicas in sync have equal fingerprints."""
    mu = call.session.require_mu()
    fingerprints = call.session.dist.gather(mu.fingerprint())
    return {"fingerprint": fingerprints[0], "fingerprints": fingerprints, "world_size": call.session.dist.world_size, "steps": mu.steps}


def mu_save(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    return {"path": mu.save(params["dir"]), "steps": mu.steps}


def mu_load(call: Call, params: dict) -> dict:
    call.session.mu = Mu.load(params["dir"], call.session.dist)
    return call.session.mu.describe()


def mu_export(call: Call, params: dict) -> dict:
    mu = call.session.require_mu()
    check_tokenizer(params["tokenizer"], "params.tokenizer")
    check_max_criteria_tokens(mu, params["max_criteria_tokens"], "params.max_criteria_tokens")
    return export_version(mu, params["dir"], params["opset"], params["tokenizer"], params["max_criteria_tokens"])


METHODS: dict[str, Callable[[Call, dict], dict]] = {
    "health": health,
    "shutdown": shutdown,
    "gspo.loss": gspo_loss,
    "policy.init": policy_init,
    "policy.sample": policy_sample,
    "policy.logprobs": policy_logprobs,
    "policy.tokenize": policy_tokenize,
    "policy.detokenize": policy_detokenize,
    "policy.step": policy_step,
    "policy.sft_step": policy_sft_step,
    "policy.set_reference": policy_set_reference,
    "policy.reset_optimizer": policy_reset_optimizer,
    "policy.fingerprint": policy_fingerprint,
    "checkpoint.save": checkpoint_save,
    "checkpoint.load": checkpoint_load,
    "export.onnx": export_onnx,
    "mu.init": mu_init,
    "mu.sft": mu_sft,
    "mu.step": mu_step,
    "mu.scores": mu_scores,
    "mu.logits": mu_logits,
    "mu.generate": mu_generate,
    "mu.set_reference": mu_set_reference,
    "mu.fingerprint": mu_fingerprint,
    "mu.save": mu_save,
    "mu.load": mu_load,
    "mu.export": mu_export,
}


def serve(threads: Optional[int] = None, log_level: str = "INFO") -> NoReturn:
    """Runs the sidecar on this process's stdio until shutdown or end of input, then ends the process."""
    if threads is not None:
        torch.set_num_threads(threads)
    # The protocol keeps the real stdout to itself; anything else that prints (a library, C code,
    # another rank) lands on stderr instead of corrupting the JSON lines.
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    dist = DistContext.from_environment()
    logging.basicConfig(stream=sys.stderr, level=log_level, format=f"rubric-trainer[{dist.rank}] %(levelname)s %(message)s", force=True)
    session = Session(dist, Channel(protocol) if dist.is_main else None)
    try:
        if dist.is_main:
            session.serve_main(sys.stdin.buffer)
        else:
            session.serve_follower()
    except BrokenPipeError:
        log.warning("the client closed the pipe; stopping")
    finally:
        dist.close()
    # Leave without running finalisers: the stdin reader is a daemon thread blocked in read(), and
    # a normal exit aborts while finalising stdin under its lock; and after DDP steps, tearing down
    # the reducer and the gloo group at exit can spin forever. Everything written is flushed.
    sys.stderr.flush()
    os._exit(0)
