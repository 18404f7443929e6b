"""The policy the sidecar trains: a causal LM with its Adam optimiser and an optional frozen KL
reference. Sequences are completions of a prompt (token ids); their per-token log-probabilities are
log π(token_t | prompt, tokens_<t), so sampling, scoring and training agree on what a token's
probability means. Under torchrun each rank holds a replica and steps split groups across ranks.
"""

from __future__ import annotations

import copy
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch
from torch import nn

from .checkpoint import read_checkpoint, restoring, write_checkpoint
from .distributed import DistContext
from . import model_text
from .faults import InvalidParams, NonFinite, Unavailable
from .model import build_model, check_token_ids, onnx_export_arguments, optional_import, parameter_fingerprint, tensors_fingerprint
from .mu_lora import ReferenceView
from .objectives import Objective, clipped_objective, pad_rows
from .peft_lora import REFERENCE, PeftLora

CHECKPOINT_FORMAT = "rubric-trainer/1"
CHECKPOINT_FILE = "policy.pt"
POLICY_REFERENCE_DIR = "pi-reference-adapter"
"""π_ref's peft adapter directory beside ``policy.pt`` under LoRA (the policy's own adapter is the directory itself)."""
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class Rollout:
    tokens: list[int]
    logp_old: list[float]
    advantage: float


@dataclass
class Group:
    prompt: list[int]
    sequences: list[Rollout]


def resolve_device(name: str, dist: DistContext, path: str = "params.device") -> torch.device:
    """The device ``name`` stands for ("auto": this rank's CUDA device when torch sees one, else the
    CPU), refused at ``path`` when torch cannot read the name or has no such device. Shared by
    ``policy.init`` and ``mu.init``."""
    if name == "auto":
        return dist.default_device()
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise InvalidParams(f"{path}: expected 'auto', 'cpu', 'cuda' or 'cuda:<index>', got {name!r}", {"path": path}) from error
    if device.type == "cuda" and not torch.cuda.is_available():
        raise Unavailable(f"{path}: device {name!r} was asked for, but this torch sees no CUDA device (torch {torch.__version__})", {"path": path})
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise Unavailable(f"{path}: device {name!r} was asked for, but this torch sees {torch.cuda.device_count()} CUDA device(s)", {"path": path})
    return device


class Policy:
    def __init__(self, init: dict, dist: DistContext) -> None:
        """``init`` is policy.init's validated params; it is kept whole in checkpoints, so that a
        checkpoint alone can rebuild the policy (a restarted sidecar needs nothing else)."""
        self.init = init
        self.dist = dist
        self.device = resolve_device(init["device"], dist)
        self.model: nn.Module = build_model(init["model"], DTYPES[init["dtype"]], init["seed"])
        self.adapter: Optional[PeftLora] = None
        """ARCO's π: a LoRA adapter on the frozen base, π_ref a second frozen adapter on the same base."""
        lora = init["model"].get("lora")
        if lora is not None:
            self.adapter = PeftLora(self.model, lora, init["seed"], needed_for="a LoRA adapter on the policy (model.lora)", adapter_dir=".", reference_dir=POLICY_REFERENCE_DIR)
        self.model.to(self.device)
        self.model.eval()  # no dropout anywhere: log-probs must not depend on the call
        self.trainable = dist.wrap(self.model)
        self.optimizer = self.new_optimizer(init["learning_rate"])
        self.reference: Optional[nn.Module] = None
        self.steps = 0

    @property
    def vocab_size(self) -> int:
        return int(self.model.vocab_size)

    @property
    def max_seq_len(self) -> int:
        return int(self.model.max_seq_len)

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    # --- text -----------------------------------------------------------------------------------

    @property
    def tokenizer(self):  # a transformers tokenizer, or None (the small transformer reads its client's ids)
        return getattr(self.model, "tokenizer", None)

    @property
    def eos_token_id(self) -> Optional[int]:
        """Where a completion ends: policy.init's ``eos_token_id``, else the tokenizer's end token."""
        if self.init["eos_token_id"] is not None:
            return int(self.init["eos_token_id"])
        token = getattr(self.tokenizer, "eos_token_id", None)
        return None if token is None else int(token)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return model_text.tokenize(self.tokenizer, texts, "policy.tokenize")

    def detokenize(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return model_text.detokenize(self.tokenizer, ids, "policy.detokenize", self.check_tokens)

    def chat(self, conversations: Sequence[Sequence[dict]]) -> list[list[int]]:
        return model_text.chat(self.tokenizer, conversations, "policy.chat", "policy.tokenize")

    def describe_tokenizer(self) -> Optional[dict]:
        return model_text.describe_tokenizer(self.tokenizer, self.eos_token_id)

    # --- token checks ---------------------------------------------------------------------------

    def check_tokens(self, tokens: Sequence[int], path: str) -> None:
        check_token_ids(tokens, self.vocab_size, path)

    def check_sequence(self, prompt: Sequence[int], tokens: Sequence[int], path: str) -> None:
        """A completion the model can score: ids in the vocabulary and prompt + tokens − 1 ≤ max_seq_len
        (the last token is predicted, never fed in)."""
        self.check_tokens(tokens, path)
        if len(prompt) + len(tokens) - 1 > self.max_seq_len:
            raise InvalidParams(
                f"{path}: a prompt of {len(prompt)} and {len(tokens)} tokens need {len(prompt) + len(tokens) - 1} positions; the model has {self.max_seq_len}",
                {"path": path},
            )

    # --- log-probabilities ----------------------------------------------------------------------

    def token_logprobs(self, module: nn.Module, items: Sequence[tuple[Sequence[int], Sequence[int]]]) -> tuple[torch.Tensor, torch.Tensor]:
        """log π(token_t | prompt, tokens_<t) of each (prompt, tokens), padded to [N, longest] with its mask.

        One forward over the right-padded batch of prompt + tokens[:-1]: with a causal model the
        padding after a sequence never changes its logits.
        """
        inputs = [list(prompt) + list(tokens[:-1]) for prompt, tokens in items]
        width = max(len(x) for x in inputs)
        longest = max(len(tokens) for _, tokens in items)
        input_ids = torch.zeros(len(items), width, dtype=torch.long)
        next_ids = torch.zeros(len(items), width, dtype=torch.long)  # the token each position predicts
        positions = torch.zeros(len(items), longest, dtype=torch.long)
        mask = torch.zeros(len(items), longest, dtype=torch.bool)
        for i, ((prompt, tokens), x) in enumerate(zip(items, inputs)):
            input_ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
            next_ids[i, : len(x)] = torch.tensor((list(prompt) + list(tokens))[1:], dtype=torch.long)
            positions[i, : len(tokens)] = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(tokens))
            mask[i, : len(tokens)] = True
        input_ids, next_ids, positions, mask = (t.to(self.device) for t in (input_ids, next_ids, positions, mask))
        logits = module(input_ids)
        if logits.dtype in (torch.float16, torch.bfloat16):
            logits = logits.float()  # a log-softmax over a large vocabulary needs more than 8 bits of mantissa
        # log-softmax at the predicted token only (logit − logsumexp), never a [N, L, V] log-prob copy.
        per_position = logits.gather(2, next_ids.unsqueeze(2)).squeeze(2) - torch.logsumexp(logits, dim=2)
        logp = per_position.gather(1, positions)
        return logp.masked_fill(~mask, 0.0), mask

    def logprobs(self, prompt: list[int], sequences: list[list[int]]) -> list[list[float]]:
        with torch.no_grad():
            logp, _ = self.token_logprobs(self.model, [(prompt, s) for s in sequences])
        return [row[: len(s)] for row, s in zip(logp.double().cpu().tolist(), sequences)]

    def sample(self, prompt: list[int], n: int, *, seed: int, temperature: float, max_new_tokens: int, eos_token_id: Optional[int], check_cancelled: Callable[[], None]) -> list[dict]:
        """``n`` completions drawn from softmax(logits / temperature) with a generator seeded by
        ``seed``; each stops after ``eos_token_id`` (kept) or ``max_new_tokens``. The log-probs are
        the policy's own (temperature 1), the π_old that GSPO's ratios need."""
        generator = torch.Generator(device=self.device).manual_seed(seed)
        ids = torch.tensor(prompt, dtype=torch.long, device=self.device).repeat(n, 1)
        finished = torch.zeros(n, dtype=torch.bool, device=self.device)
        lengths = torch.zeros(n, dtype=torch.long, device=self.device)
        chosen: list[torch.Tensor] = []
        logps: list[torch.Tensor] = []
        # A model with a key/value cache (the small transformer) feeds each new token alone.
        decode = getattr(self.model, "decode", None)
        past = None
        fresh = ids
        with torch.no_grad():
            for _ in range(max_new_tokens):
                check_cancelled()
                if decode is not None:
                    last, past = decode(fresh, past)
                    logits = last.double()
                else:
                    logits = self.model(ids)[:, -1, :].double()
                token = torch.multinomial(torch.softmax(logits / temperature, dim=1), 1, generator=generator).squeeze(1)
                chosen.append(token)
                logps.append(torch.log_softmax(logits, dim=1).gather(1, token.unsqueeze(1)).squeeze(1))
                lengths += (~finished).long()
                if eos_token_id is not None:
                    finished |= token == eos_token_id
                if bool(finished.all()):
                    break
                ids = torch.cat([ids, token.unsqueeze(1)], dim=1)
                fresh = token.unsqueeze(1)
        tokens = torch.stack(chosen, dim=1).cpu().tolist()
        values = torch.stack(logps, dim=1).cpu().tolist()
        return [{"tokens": tokens[i][: int(lengths[i])], "logprobs": values[i][: int(lengths[i])]} for i in range(n)]

    # --- training -------------------------------------------------------------------------------

    def step(
        self,
        groups: list[Group],
        *,
        objective: Objective,
        eps_low: float,
        eps_high: float,
        learning_rate: float,
        kl_coef: float,
        max_tokens: Optional[float],
        max_grad_norm: Optional[float],
    ) -> dict:
        """One Adam step on the mean over groups of the clipped objective (+ β·k3 KL to the reference
        when one is set). Under DDP each rank takes every world_size-th group and scales its share so
        that DDP's gradient average equals the single-process gradient of the whole batch."""
        started = time.perf_counter()
        self.require_shards(len(groups), "groups")
        mine = self.dist.shard(groups)
        items = [(g.prompt, s.tokens) for g in mine for s in g.sequences]
        logp_new, mask = self.token_logprobs(self.trainable, items)
        logp_new = logp_new.double()
        logp_ref = None
        if self.reference is not None:
            with torch.no_grad():
                logp_ref = self.token_logprobs(self.reference, items)[0].double()
        surrogate = torch.zeros((), dtype=torch.float64, device=self.device)
        totals = [0.0, 0.0, 0.0, float(mask.sum())]  # loss, clipped fraction, kl (summed over groups), tokens
        row = 0
        for group in mine:
            rows = slice(row, row + len(group.sequences))
            row += len(group.sequences)
            width = max(len(s.tokens) for s in group.sequences)
            result = clipped_objective(
                objective,
                logp_new[rows, :width],
                pad_rows([s.logp_old for s in group.sequences]).to(self.device),
                mask[rows, :width],
                torch.tensor([s.advantage for s in group.sequences], dtype=torch.float64, device=self.device),
                eps_low=eps_low,
                eps_high=eps_high,
                beta=kl_coef if logp_ref is not None else 0.0,
                logp_ref=logp_ref[rows, :width] if logp_ref is not None else None,
                max_tokens=max_tokens,
            )
            surrogate = surrogate + result.loss
            totals[0] += float(result.loss)
            totals[1] += result.clipped_fraction
            totals[2] += float(result.kl) if result.kl is not None else 0.0
        loss, clipped, kl, tokens = self.dist.sum(totals, self.device)
        G = len(groups)
        metrics = {"loss": loss / G, "clipped_fraction": clipped / G, "kl": kl / G, "tokens": int(tokens)}
        grad_norm = self.descend(surrogate * (self.dist.world_size / G), metrics["loss"], learning_rate, max_grad_norm)
        return {**metrics, "grad_norm": grad_norm, "step": self.steps, "compute_ms": (time.perf_counter() - started) * 1000}

    def sft_step(self, examples: list[tuple[list[int], list[int]]], *, learning_rate: float, max_grad_norm: Optional[float]) -> dict:
        """One Adam step on the mean negative log-likelihood per token of reference completions."""
        started = time.perf_counter()
        self.require_shards(len(examples), "examples")
        logp, mask = self.token_logprobs(self.trainable, self.dist.shard(examples))
        nll = -(logp.double() * mask).sum()
        total_nll, total_tokens = self.dist.sum([float(nll), float(mask.sum())], self.device)
        mean_nll = total_nll / total_tokens
        grad_norm = self.descend(nll * (self.dist.world_size / total_tokens), mean_nll, learning_rate, max_grad_norm)
        return {"nll": mean_nll, "tokens": int(total_tokens), "grad_norm": grad_norm, "step": self.steps, "compute_ms": (time.perf_counter() - started) * 1000}

    def require_shards(self, count: int, name: str) -> None:
        # Every rank must run a forward and backward for DDP's gradient all-reduce to complete.
        if count < self.dist.world_size:
            raise InvalidParams(f"params.{name}: {self.dist.world_size} ranks need at least {self.dist.world_size} {name}, got {count}", {"path": f"params.{name}"})

    def descend(self, loss: torch.Tensor, reported_loss: float, learning_rate: float, max_grad_norm: Optional[float]) -> float:
        """Backward and one Adam step, unless the loss or the gradient is not finite; then no
        parameter changes. Both checks read values that are identical on every rank (all-reduced),
        so all ranks take the same branch."""
        if not math.isfinite(reported_loss):
            raise NonFinite(f"the loss is {reported_loss}; no step was taken", {"loss": str(reported_loss)})
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        parameters = [p for p in self.model.parameters() if p.grad is not None]
        norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm if max_grad_norm is not None else float("inf")))
        if not math.isfinite(norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise NonFinite(f"the gradient norm is {norm}; no step was taken", {"grad_norm": str(norm)})
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        self.optimizer.step()
        self.steps += 1
        return norm

    def new_optimizer(self, learning_rate: float) -> torch.optim.Optimizer:
        """Adam over the trained parameters: every one, or the adapter's alone under LoRA (the frozen
        base and π_ref's adapter never are, so a checkpoint's optimiser state fits any policy of its init)."""
        return torch.optim.Adam([p for p in self.model.parameters() if p.requires_grad], lr=learning_rate)

    def reset_optimizer(self) -> None:
        """A fresh Adam (no moments, step count 0), e.g. between Stage I (SFT) and Stage II (GSPO)."""
        self.optimizer = self.new_optimizer(self.optimizer.param_groups[0]["lr"])

    def set_reference(self) -> None:
        """Freezes the current parameters as π_ref for the KL penalty: a copy of the model, or under
        LoRA a copy of the adapter on the same base (the base is held once)."""
        if self.adapter is not None:
            self.adapter.freeze_reference()
            self.reference = ReferenceView(self.model, self.adapter)
        else:
            self.reference = copy.deepcopy(self.model).requires_grad_(False)

    def fingerprint(self) -> str:
        """SHA-256 of the parameters' bytes: equal on two replicas exactly when they hold the same values."""
        if self.adapter is None:
            return parameter_fingerprint(self.model)
        # π's own parameters: π_ref's adapter, added by set_reference, is not the policy.
        return tensors_fingerprint((name, p) for name, p in self.model.named_parameters() if f".{REFERENCE}." not in name)

    # --- checkpoints and export -----------------------------------------------------------------

    def save(self, directory: str) -> str:
        """Writes ``policy.pt`` (init params, parameters, optimiser, reference, step count) atomically:
        a crash mid-write leaves the previous checkpoint. Rank 0 writes; the others wait for it.
        Under LoRA the parameters are the adapter's, written as a peft adapter directory in
        ``directory`` itself (``adapter_config.json``, ``adapter_model.safetensors``: what vLLM's
        runtime LoRA endpoint loads) and π_ref's in ``pi-reference-adapter/``; ``policy.pt`` then
        holds no weights, the base being ``from_pretrained(name)`` again."""
        path = Path(directory) / CHECKPOINT_FILE
        if self.dist.is_main:
            if self.adapter is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.adapter.write(path.parent)
            whole = self.adapter is None
            write_checkpoint(
                path,
                {
                    "format": CHECKPOINT_FORMAT,
                    "init": self.init,
                    "model": self.model.state_dict() if whole else {},
                    "optimizer": self.optimizer.state_dict(),
                    "reference": self.reference.state_dict() if whole and self.reference is not None else None,
                    "has_reference": self.reference is not None,
                    "steps": self.steps,
                },
            )
        self.dist.barrier()
        return str(path)

    @staticmethod
    def load(directory: str, dist: DistContext, current: Optional["Policy"]) -> "Policy":
        """The policy of a checkpoint, reusing ``current`` when it was built from the same init params."""
        path = Path(directory) / CHECKPOINT_FILE
        state = read_checkpoint(path, CHECKPOINT_FORMAT)
        policy = current if current is not None and current.init == state["init"] else Policy(state["init"], dist)
        with restoring(path):
            if policy.adapter is not None:
                policy.adapter.read(path.parent)
            else:
                policy.model.load_state_dict(state["model"])
            policy.optimizer = policy.new_optimizer(policy.optimizer.param_groups[0]["lr"])
            policy.optimizer.load_state_dict(state["optimizer"])
        # A checkpoint written before has_reference was recorded says it by its reference's weights.
        if not state.get("has_reference", state["reference"] is not None):
            policy.reference = None
        elif policy.adapter is not None:
            # read() restored π_ref's adapter beside the policy's.
            policy.reference = ReferenceView(policy.model, policy.adapter)
        else:
            policy.set_reference()
            policy.reference.load_state_dict(state["reference"])
        policy.steps = int(state["steps"])
        return policy

    def export_onnx(self, path: str, opset: int, probe: Optional[list[list[int]]] = None) -> dict:
        """The model as ONNX: ``input_ids`` int64 [batch, sequence] → ``logits`` [batch, sequence, vocab],
        both axes dynamic. Rank 0 writes; the file is checked with onnx.checker when onnx is installed.
        With ``probe`` (token ids, [batch][sequence]) the result also holds torch's logits for it, so
        that whoever loads the file can check their runtime against the model it came from."""
        target = Path(path)
        if self.dist.is_main:
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(target.name + ".tmp")
            example = torch.zeros(1, min(8, self.max_seq_len), dtype=torch.long, device=self.device)
            with torch.no_grad():
                torch.onnx.export(
                    self.model,
                    (example,),
                    str(temporary),
                    opset_version=opset,
                    input_names=["input_ids"],
                    output_names=["logits"],
                    dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}},
                    **onnx_export_arguments(),
                )
            os.replace(temporary, target)
            try:
                onnx = optional_import("onnx", "checking the exported file")
            except Unavailable:
                onnx = None
            if onnx is not None:
                onnx.checker.check_model(str(target))
        self.dist.barrier()
        exported = {"path": str(target), "opset": opset, "inputs": ["input_ids"], "outputs": ["logits"], "bytes": target.stat().st_size}
        if probe is not None:
            with torch.no_grad():
                exported["probe_logits"] = self.model(torch.tensor(probe, dtype=torch.long, device=self.device)).double().cpu().tolist()
        return exported

    def describe(self) -> dict:
        return {
            "parameters": self.parameter_count(),
            "vocab_size": self.vocab_size,
            "max_seq_len": self.max_seq_len,
            "device": str(self.device),
            "dtype": self.init["dtype"],
            "steps": self.steps,
            "reference": self.reference is not None,
            "tokenizer": self.describe_tokenizer(),
        }

