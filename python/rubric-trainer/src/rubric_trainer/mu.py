"""ARCO's rubric model μ as the sidecar holds and trains it: the network with its optimisers and
μ_ref, scores and logits, the SFT and decomposition steps, and its checkpoint. The losses' formulas
live in ``mu_losses``, a step's tensors in ``mu_steps``, generation in ``mu_generate`` and the
versioned ONNX export in ``mu_export``.

A step is ``(prompt, criteria)`` token ids: μ reads prompt + criteria in one forward; the LM head's
logits at the positions before each criteria token give the criteria's log-likelihood (SFT's
cross-entropy, the step's KL to μ_ref), and the score head reads the pooled hidden states.

Under torchrun every rank holds a replica, as for the policy: ``sft`` and ``step`` take every
world_size-th example or trajectory, each rank's loss is its share of the whole batch's loss times
world_size (DDP averages the gradients, so the step is the single-process step on the whole batch),
and the reported metrics are the whole batch's. Files are written by rank 0 only.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch

from . import model_text
from .checkpoint import read_checkpoint, restoring, write_checkpoint
from .distributed import DistContext
from .faults import InvalidParams, NonFinite
from .model import check_token_ids, parameter_fingerprint, tensors_fingerprint
from .mu_losses import class_weights, criteria_kl, value_square_errors, weighted_square_errors
from .gguf import GgufFile
from .mu_llama import LlamaMuNetwork
from .mu_lora import ReferenceView, TinyLora
from .mu_model import MuNetwork
from .mu_steps import MICRO_BATCH_TOKENS, Step, batch, micro_batches
from .policy import DTYPES, resolve_device

MU_CHECKPOINT_FORMAT = "rubric-trainer/mu/1"
MU_HEAD_FORMAT = "rubric-trainer/mu-head/1"
MU_CHECKPOINT_FILE = "mu.pt"
MU_HEAD_FILE = "mu-head.pt"
"""With LoRA, the score head beside ``mu.pt`` (which then holds the frozen base weights) and the adapter's file."""
SFT_SCORE_COEF = 10.0
"""ARCO's ``sft_mu.py``: CE(criteria) + 10 × MSE(d, teacher scores)."""
MAX_GRAD_NORM = 1.0
WEIGHT_DECAY = 0.01


class Mu:
    def __init__(self, init: dict, dist: Optional[DistContext] = None, gguf: Optional[GgufFile] = None) -> None:
        """``init`` is mu.init's validated params, kept whole in checkpoints and manifests; ``dist``
        the process group (a single process when None). Every rank builds μ from the same seed, so
        the replicas start equal (and DDP broadcasts rank 0's parameters besides). A llama μ's
        model carries its architecture (``llama_architecture``); ``gguf``, the file its backbone's
        weights are read from (a new μ; a checkpoint's μ has them in the checkpoint)."""
        self.init = init
        self.dist = dist if dist is not None else DistContext(0, 1, 0)
        # A checkpoint written before mu.init took a device and a dtype holds neither: the CPU, float32.
        self.device = resolve_device(init.get("device", "cpu"), self.dist)
        spec = init["model"]
        self.lora: Optional[dict] = init.get("lora")
        self.adapter: Optional[Any] = None
        """TinyLora or peft_lora.PeftLora when μ trains through LoRA; None when it trains whole."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(init["seed"])
            if spec["kind"] == "transformers":
                from .mu_transformers import TransformersMuNetwork, mu_peft_lora

                self.network = TransformersMuNetwork(spec["name"], init["k"], self.lora, DTYPES[init.get("dtype", "float32")])
                if self.lora is not None:
                    self.adapter = mu_peft_lora(self.network, self.lora, init["seed"])
            elif spec["kind"] == "llama":
                self.network = LlamaMuNetwork(spec, init["k"])
                if gguf is not None:
                    self.network.load_gguf(gguf)
            else:
                self.network = MuNetwork(spec["vocab_size"], spec["d_model"], spec["n_heads"], spec["n_layers"], spec["d_ff"] or 4 * spec["d_model"], spec["max_seq_len"], init["k"])
                if self.lora is not None:
                    # Drawn after the base weights: a μ with LoRA has the base of the μ without it.
                    self.adapter = TinyLora(self.network, self.lora, init["seed"])
        # Built on the CPU from the seed (the same weights on any device), then moved whole: the
        # backbone, the adapter and the score head (float32 whatever the backbone's dtype).
        self.network.to(self.device)
        self.network.eval()  # no dropout but the adapter's in training forwards: scores must not depend on the call
        if self.adapter is not None:
            # ARCO's μ: the base weights frozen, the adapter and the score head trained.
            adapted = {id(p) for p in self.adapter.parameters()}
            for p in self.network.backbone_parameters():
                p.requires_grad_(id(p) in adapted)
        # The module training forwards go through: DDP's hooks all-reduce the gradients. A step
        # without a KL term leaves the LM head out, hence find_unused_parameters.
        self.trainable = self.dist.wrap(self.network, find_unused_parameters=True)
        # Two AdamW groups, as ARCO's trainer has two optimisers: the backbone (with the LM head),
        # or with LoRA the adapter alone, at learning_rate; the score head at head_learning_rate.
        backbone = self.adapter.parameters() if self.adapter is not None else self.network.backbone_parameters()
        self.optimizer = torch.optim.AdamW(
            [{"params": backbone}, {"params": list(self.network.score_head.parameters())}],
            lr=1e-3,
            weight_decay=WEIGHT_DECAY,
        )
        self.reference: Optional[torch.nn.Module] = None
        self.steps = 0

    @property
    def k(self) -> int:
        return int(self.init["k"])

    @property
    def vocab_size(self) -> int:
        return int(self.network.vocab_size)

    @property
    def max_seq_len(self) -> int:
        return int(self.network.max_seq_len)

    @property
    def pooling(self) -> str:
        return str(self.init["pooling"])

    # --- text -----------------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        """A transformers μ's own tokenizer; None for the tiny μ, whose client makes its ids."""
        return getattr(self.network, "tokenizer", None)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return model_text.tokenize(self.tokenizer, texts, "mu.tokenize")

    def detokenize(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return model_text.detokenize(self.tokenizer, ids, "mu.detokenize", self.check_tokens)

    def chat(self, conversations: Sequence[Sequence[dict]]) -> list[list[int]]:
        return model_text.chat(self.tokenizer, conversations, "mu.chat", "mu.tokenize")

    # --- input checks ---------------------------------------------------------------------------

    def check_tokens(self, tokens: Sequence[int], path: str) -> None:
        check_token_ids(tokens, self.vocab_size, path)

    def check_step(self, step: Step, path: str) -> None:
        self.check_tokens(step.prompt, f"{path}.prompt")
        self.check_tokens(step.criteria, f"{path}.criteria")
        if len(step.prompt) + len(step.criteria) > self.max_seq_len:
            raise InvalidParams(f"{path}: a prompt of {len(step.prompt)} and criteria of {len(step.criteria)} tokens exceed the model's {self.max_seq_len} positions", {"path": path})
        if self.pooling == "criteria" and not step.criteria:
            raise InvalidParams(f"{path}.criteria: empty, but this μ pools over the criteria tokens only (pooling 'criteria')", {"path": f"{path}.criteria"})

    # --- forward --------------------------------------------------------------------------------

    def batch(self, steps: Sequence[Step]) -> dict[str, torch.Tensor]:
        """``mu_steps.batch`` of ``steps`` on μ's device."""
        return {name: tensor.to(self.device) for name, tensor in batch(steps, self.pooling).items()}

    def forward(
        self, network: torch.nn.Module, inputs: dict[str, torch.Tensor], logits: bool = True, train: bool = False
    ) -> tuple[Optional[torch.Tensor], torch.Tensor]:
        """(log-softmax of the LM head over the criteria window [B, C, V] — see ``mu_steps.batch`` — or None
        without ``logits``, d [B, K]) by ``network``'s own forward: ``self.trainable`` for
        training (under DDP its hooks must see the call), the bare network or the reference
        otherwise. ``train``: a training forward, the only kind that applies the adapter's dropout."""
        dropout = self.adapter.training() if train and self.adapter is not None else contextlib.nullcontext()
        with dropout:
            return network(inputs["input_ids"], inputs["attention_mask"], inputs["pool_mask"], logits, inputs["window"])

    def scores(self, steps: Sequence[Step]) -> dict:
        # Every rank computes the same scores: no collective, and rank 0's are the reply.
        d = self.step_scores(steps)
        return {"d": d.tolist(), "s": d.mean(dim=1).tolist()}

    def step_scores(self, steps: Sequence[Step], budget: int = MICRO_BATCH_TOKENS) -> torch.Tensor:
        """d [len(steps), K] in float64 by the inference network, in length-sorted micro-batches."""
        d = torch.zeros(len(steps), self.k, dtype=torch.float64)
        with torch.no_grad():
            for group in micro_batches([len(s.prompt) + len(s.criteria) for s in steps], budget):
                _, scores = self.forward(self.network, self.batch([steps[i] for i in group]), logits=False)
                d[group] = scores.double().cpu()
        return d

    def accumulate(self, groups: Sequence[Sequence[int]], backward: Callable[[int, Sequence[int]], torch.Tensor]) -> None:
        """Runs ``backward(i, group)`` — a training forward whose returned loss is this group's
        share — and its backward for each micro-batch, gradients accumulating. Under DDP only
        the last group's backward all-reduces (``no_sync`` before), the gradient-accumulation
        pattern: each rank all-reduces exactly once, whatever its number of groups."""
        for i, group in enumerate(groups):
            last = i == len(groups) - 1
            sync = self.trainable.no_sync() if self.dist.distributed and not last else contextlib.nullcontext()
            with sync:
                (backward(i, group) * self.dist.world_size).backward()

    def logits(self, ids: list[list[int]]) -> list:
        with torch.no_grad():
            tensor = torch.tensor(ids, dtype=torch.long, device=self.device)
            hidden, _ = self.network.hidden(tensor, torch.ones_like(tensor))
            return self.network.lm_head(hidden).double().tolist()

    # --- training -------------------------------------------------------------------------------

    def sft(self, steps: Sequence[Step], teacher: Sequence[Sequence[float]], *, learning_rate: float, head_learning_rate: float, budget: int = MICRO_BATCH_TOKENS) -> dict:
        """One AdamW step on CE(criteria tokens, mean per token) + 10 × MSE(d, teacher scores).
        Steps with empty criteria (ARCO's "no rubric" ablation) add nothing to the CE.

        Under DDP each rank takes every world_size-th example. The CE's denominator is the token
        count of the whole batch and the MSE's the element count of the whole batch (N × K), so
        each rank's loss is its share of the single-process loss; times world_size, DDP's
        gradient average is then the single-process gradient."""
        return self.fit(steps, teacher, SFT_SCORE_COEF, learning_rate, head_learning_rate, budget)

    def pretrain(self, texts: Sequence[Sequence[int]], *, learning_rate: float, budget: int = MICRO_BATCH_TOKENS) -> dict:
        """One AdamW step of language-model pretraining (ours, not ARCO's): next-token CE over
        whole texts, mean per token, the score head untouched (nothing reaches it, so AdamW
        skips it, weight decay included). ARCO's μ starts from a pretrained LM; a μ built from
        scratch can be given some of that reading this way, on its environment's own text.

        Each text is a step whose prompt is its first token and whose criteria are the rest, so
        the CE is μ-SFT's over every position but the first; the MSE's coefficient is 0."""
        steps = [Step(list(text[:1]), list(text[1:])) for text in texts]
        metrics = self.fit(steps, [[0.0] * self.k for _ in steps], 0.0, learning_rate, learning_rate, budget)
        return {key: metrics[key] for key in ("ce", "tokens", "grad_norm", "step", "compute_ms")}

    def fit(self, steps: Sequence[Step], teacher: Sequence[Sequence[float]], score_coef: float, learning_rate: float, head_learning_rate: float, budget: int) -> dict:
        """One AdamW step on CE(criteria tokens) + ``score_coef`` × MSE(d, teacher): ``sft``'s and
        ``pretrain``'s. With ``score_coef`` 0 the score head's loss is left out of the graph."""
        started = time.perf_counter()
        self.require_shards(len(steps), "examples")
        mine = self.dist.shard(steps)
        mine_teacher = self.dist.shard(teacher)
        # The denominators are the whole batch's, known before any forward: each micro-batch's
        # share is then exact, and the shares' gradients sum to the whole batch's.
        (tokens,) = self.dist.sum([float(sum(len(s.criteria) for s in mine))], self.device)
        elements = len(steps) * self.k
        parts = {"nll": 0.0, "squares": 0.0}

        def share(_: int, group: Sequence[int]) -> torch.Tensor:
            inputs = self.batch([mine[i] for i in group])
            logp, d = self.forward(self.trainable, inputs, train=True)
            assert logp is not None
            mask = inputs["window_mask"].double()
            token_logp = logp.gather(2, inputs["window_targets"].unsqueeze(2)).squeeze(2).double()
            nll = -(token_logp * mask).sum()
            squares = ((d.double() - torch.tensor([mine_teacher[i] for i in group], dtype=torch.float64, device=self.device)) ** 2).sum()
            parts["nll"] += float(nll)
            parts["squares"] += float(squares)
            return nll / max(tokens, 1.0) + (score_coef * squares / elements if score_coef else 0.0)

        self.optimizer.zero_grad(set_to_none=True)
        self.accumulate(micro_batches([len(s.prompt) + len(s.criteria) for s in mine], budget), share)
        total_nll, total_squares = self.dist.sum([parts["nll"], parts["squares"]], self.device)
        ce, mse = total_nll / max(tokens, 1.0), total_squares / elements
        loss = ce + score_coef * mse
        grad_norm = self.apply_gradients(loss, learning_rate, head_learning_rate)
        return {"loss": loss, "ce": ce, "mse": mse, "tokens": int(tokens), "grad_norm": grad_norm, "step": self.steps, "compute_ms": (time.perf_counter() - started) * 1000}

    def require_shards(self, count: int, name: str) -> None:
        # Every rank must run a forward and backward for DDP's gradient all-reduce to complete.
        if count < self.dist.world_size:
            raise InvalidParams(f"params.{name}: {self.dist.world_size} ranks need at least {self.dist.world_size} {name}, got {count}", {"path": f"params.{name}"})

    def step_loss(self, trajectories: Sequence[Sequence[Step]], rewards: Sequence[float], beta: float, objective: str = "decomposition") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[torch.Tensor]]:
        """This rank's share of ARCO's μ loss and its parts: (loss, decomposition loss, KL, d of
        each of this rank's trajectories), over this rank's shard of ``trajectories`` but with the
        whole batch's class weights and 1/N, so that the shares of all ranks sum to the loss of
        one process on the whole batch."""
        n = len(trajectories)
        mine = self.dist.shard(trajectories)
        flat = [s for trajectory in mine for s in trajectory]
        inputs = self.batch(flat)
        with_kl = self.reference is not None and beta > 0
        logp, d = self.forward(self.trainable, inputs, logits=with_kl, train=True)
        d = d.double()
        bounds = [0]
        for trajectory in mine:
            bounds.append(bounds[-1] + len(trajectory))
        per_trajectory = [d[bounds[i] : bounds[i + 1]] for i in range(len(mine))]
        # The weights come from all rewards (every rank holds the whole request): a shard's own
        # class counts would weigh the classes differently on each rank.
        errors = value_square_errors if objective == "value" else weighted_square_errors
        score_loss = errors(per_trajectory, self.dist.shard(rewards), self.dist.shard(class_weights(rewards))) / n
        kl = score_loss.new_zeros(())
        if with_kl:
            assert logp is not None and self.reference is not None
            with torch.no_grad():
                logp_ref, _ = self.forward(self.reference, inputs)
            assert logp_ref is not None
            kl = criteria_kl(logp.double(), logp_ref.double(), inputs["window_mask"]).sum() / n
        return score_loss + beta * kl, score_loss, kl, per_trajectory

    def step(self, trajectories: Sequence[Sequence[Step]], rewards: Sequence[float], *, learning_rate: float, head_learning_rate: float, beta: float, objective: str = "decomposition") -> dict:
        """One AdamW step on ARCO's μ loss: the decomposition loss plus β · (1/N) Σ_τ Σ_t KL_t(μ_ref ‖ μ)
        over criteria tokens once a reference is set (ARCO's kl_loss is summed over a trajectory's
        steps and, like the score loss, averaged over the batch). Under DDP each rank takes every
        world_size-th trajectory; the metrics are the whole batch's, in the request's order.

        The gradient is ``step_loss``'s, computed in length-sorted micro-batches of steps (see
        ``step_gradients``); a test holds the two equal. ``objective`` "value" (ours) replaces the
        decomposition loss by the value regression ``mu_losses.value_loss``: every step's s_t
        regressed on its trajectory's R."""
        started = time.perf_counter()
        self.require_shards(len(trajectories), "trajectories")
        self.optimizer.zero_grad(set_to_none=True)
        local_loss, local_score_loss, local_kl, sums_mine = self.step_gradients(trajectories, rewards, beta, objective=objective)
        loss, score_loss, kl = self.dist.sum([local_loss, local_score_loss, local_kl], self.device)
        grad_norm = self.apply_gradients(loss, learning_rate, head_learning_rate)
        sums = self.unshard(sums_mine, len(trajectories))
        return {
            "loss": loss,
            "score_loss": score_loss,
            "kl": kl,
            "weights": class_weights(rewards),
            "sums": sums,
            "grad_norm": grad_norm,
            "step": self.steps,
            "compute_ms": (time.perf_counter() - started) * 1000,
        }

    def step_gradients(self, trajectories: Sequence[Sequence[Step]], rewards: Sequence[float], beta: float, budget: int = MICRO_BATCH_TOKENS, objective: str = "decomposition") -> tuple[float, float, float, list[float]]:
        """Accumulates into ``.grad`` the gradient of this rank's share of ``step_loss`` (times
        world_size, for DDP's average), and returns that share's (loss, decomposition loss, KL)
        and Σ_t s_t of each of its trajectories.

        The decomposition loss couples a trajectory's steps through Σ_t s_t, so the steps cannot
        simply be split into micro-batches. Two passes instead: scores without a graph give each
        trajectory's residual r_τ = Σ_t s_t − R_τ; then ∂L/∂d_{t,k} = 2·w_τ·r_τ / (N·K) is a
        constant per step, and each length-sorted micro-batch backpropagates Σ d·(that constant)
        plus its steps' β·KL/N, which is additive over steps."""
        n = len(trajectories)
        mine = self.dist.shard(trajectories)
        my_rewards = self.dist.shard(rewards)
        my_weights = self.dist.shard(class_weights(rewards))
        flat = [s for trajectory in mine for s in trajectory]
        owner = [i for i, trajectory in enumerate(mine) for _ in trajectory]
        groups = micro_batches([len(s.prompt) + len(s.criteria) for s in flat], budget)
        d = self.step_scores(flat, budget)
        sums = [0.0] * len(mine)
        for row, i in enumerate(owner):
            sums[i] += float(d[row].mean())
        if objective == "value":
            # Each step's own residual s_t − R_τ, each trajectory's steps averaged: ∂L/∂d_{t,k} =
            # 2·w_τ·(s_t − R_τ) / (N·T_τ·K), again a constant per step once the scores are known.
            lengths = [len(trajectory) for trajectory in mine]
            step_residuals = [float(d[row].mean()) - my_rewards[i] for row, i in enumerate(owner)]
            score_loss = sum(my_weights[i] * r * r / lengths[i] for r, i in zip(step_residuals, owner)) / n
            slope = torch.tensor([2 * my_weights[i] * r / (n * lengths[i] * self.k) for r, i in zip(step_residuals, owner)], dtype=torch.float64, device=self.device)
        else:
            residuals = [sums[i] - my_rewards[i] for i in range(len(mine))]
            score_loss = sum(w * r * r for w, r in zip(my_weights, residuals)) / n
            slope = torch.tensor([2 * my_weights[i] * residuals[i] / (n * self.k) for i in owner], dtype=torch.float64, device=self.device)
        with_kl = self.reference is not None and beta > 0
        kl_parts = [0.0]

        def share(_: int, group: Sequence[int]) -> torch.Tensor:
            inputs = self.batch([flat[i] for i in group])
            logp, scores = self.forward(self.trainable, inputs, logits=with_kl, train=True)
            surrogate = (scores.double() * slope[list(group)].unsqueeze(1)).sum()
            if not with_kl:
                return surrogate
            assert logp is not None and self.reference is not None
            with torch.no_grad():
                logp_ref, _ = self.forward(self.reference, inputs)
            assert logp_ref is not None
            kl = criteria_kl(logp.double(), logp_ref.double(), inputs["window_mask"]).sum() / n
            kl_parts[0] += float(kl)
            return surrogate + beta * kl

        self.accumulate(groups, share)
        return score_loss + beta * kl_parts[0], score_loss, kl_parts[0], sums

    def unshard(self, mine: list[Any], n: int) -> list[Any]:
        """The per-item values of all ranks in the request's order, from this rank's ``mine``
        (rank r holds items r, r + world_size, …, as ``DistContext.shard`` deals them)."""
        gathered = self.dist.gather(mine)
        return [gathered[i % self.dist.world_size][i // self.dist.world_size] for i in range(n)]

    def apply_gradients(self, reported_loss: float, learning_rate: float, head_learning_rate: float) -> float:
        """Clips the accumulated gradient's global norm at 1.0 (ARCO's) and takes one AdamW step;
        no parameter changes when the loss or the gradient is not finite. ``reported_loss`` is
        the whole batch's (all-reduced) and the norm is of the all-reduced gradient, so every rank
        takes the same branch: a rank that stopped alone would leave the others in a collective."""
        value = float(reported_loss)
        if not math.isfinite(value):
            self.optimizer.zero_grad(set_to_none=True)
            raise NonFinite(f"the loss is {value}; no step was taken", {"loss": str(value)})
        parameters = [p for p in self.network.parameters() if p.grad is not None]
        norm = float(torch.nn.utils.clip_grad_norm_(parameters, MAX_GRAD_NORM))
        if not math.isfinite(norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise NonFinite(f"the gradient norm is {norm}; no step was taken", {"grad_norm": str(norm)})
        backbone, head = self.optimizer.param_groups
        backbone["lr"], head["lr"] = learning_rate, head_learning_rate
        self.optimizer.step()
        self.steps += 1
        return norm

    def embed(self, ids: Sequence[int], rows: Sequence[Sequence[float]]) -> int:
        """Sets the token embeddings of ``ids`` to ``rows`` (pretrained word vectors, say): the
        inductive bias a pretrained backbone gives ARCO's μ, which a small μ trained from scratch
        on a few hundred steps lacks. The rows replace what the seed drew; the optimiser's moments
        are untouched (μ has taken no step when this is meaningful). Returns the rows set."""
        width = self.network.tokens.weight.shape[1]
        with torch.no_grad():
            values = torch.tensor([list(row) for row in rows], dtype=self.network.tokens.weight.dtype, device=self.device)
            if values.shape[1] != width:
                raise InvalidParams(f"params.rows: expected rows of {width} values (d_model), got {values.shape[1]}", {"path": "params.rows"})
            self.network.tokens.weight[torch.tensor(list(ids), dtype=torch.long, device=self.device)] = values
        return len(ids)

    def set_reference(self) -> None:
        """Freezes a copy of the current μ as μ_ref (ARCO: the warm-up SFT adapter) for the KL term.
        With LoRA the copy is of the adapter alone: μ_ref is the shared, frozen base read through it."""
        if self.adapter is not None:
            self.adapter.freeze_reference()
            self.reference = ReferenceView(self.network, self.adapter)
        else:
            self.reference = copy.deepcopy(self.network).requires_grad_(False)

    def fingerprint(self) -> str:
        """SHA-256 of μ's parameters; for a transformers μ under LoRA, of the ones it trains and its
        checkpoint holds (the adapter and the score head): its base is ``from_pretrained(name)``
        again and never changes, and hashing billions of weights at every saved version would
        cost seconds each."""
        if self.adapter is None or isinstance(self.network, MuNetwork):
            return parameter_fingerprint(self.network)
        trained = {id(p) for p in self.adapter.parameters()} | {id(p) for p in self.network.score_head.parameters()}
        return tensors_fingerprint((name, p) for name, p in self.network.named_parameters() if id(p) in trained)

    def base_fingerprint(self) -> str:
        """SHA-256 of the backbone's own weights (no score head, no adapter): constant while μ trains through LoRA."""
        return tensors_fingerprint(self.network.base_state().items())

    def export_network(self) -> torch.nn.Module:
        """The plain network the ONNX graphs trace: with LoRA, the base with the adapter merged in
        (W + scale·B·A). On the CPU, where the export traces, whatever device μ runs on."""
        network = self.adapter.merged() if self.adapter is not None else self.network
        return network if self.device.type == "cpu" else copy.deepcopy(network).cpu()

    def checkpoint_files(self) -> list[str]:
        """The names ``mu.save`` writes in its directory."""
        return [MU_CHECKPOINT_FILE, *([MU_HEAD_FILE, *self.adapter.files()] if self.adapter is not None else [])]

    # --- checkpoints ----------------------------------------------------------------------------

    def save(self, directory: str) -> str:
        """``mu.pt`` (init params, parameters, optimiser, reference, steps), written atomically by
        rank 0 (the replicas are equal); every rank returns once it is written."""
        return self.dist.on_main(lambda: self.write_checkpoint(directory))

    def write_checkpoint(self, directory: str) -> str:
        """Without LoRA, one file. With LoRA, ``mu.pt`` holds the frozen base weights (none for a
        transformers base, which is ``from_pretrained`` again), and the score head and the adapter
        (with μ_ref's) have files of their own beside it, as a peft adapter directory would: each
        part can be replaced or shipped alone."""
        root = Path(directory)
        if self.adapter is None:
            network, reference = self.network.state_dict(), self.reference.state_dict() if self.reference is not None else None
        else:
            network, reference = self.network.base_state(), None
            root.mkdir(parents=True, exist_ok=True)
            write_checkpoint(root / MU_HEAD_FILE, {"format": MU_HEAD_FORMAT, "score_head": self.network.score_head.state_dict()})
            self.adapter.write(root)
        return write_checkpoint(
            root / MU_CHECKPOINT_FILE,
            {"format": MU_CHECKPOINT_FORMAT, "init": self.init, "network": network, "optimizer": self.optimizer.state_dict(), "reference": reference, "steps": self.steps},
        )

    @staticmethod
    def load(directory: str, dist: Optional[DistContext] = None, device: Optional[str] = None) -> "Mu":
        """The μ of a checkpoint; under torchrun every rank reads it (a file system all ranks see).
        ``device`` overrides the one the checkpoint was made on (a μ trained on a GPU, read on a
        machine without one); the μ's init then records the new one."""
        path = Path(directory) / MU_CHECKPOINT_FILE
        state = read_checkpoint(path, MU_CHECKPOINT_FORMAT)
        mu = Mu(state["init"] if device is None else {**state["init"], "device": device}, dist)
        network = dict(state["network"])
        if mu.adapter is not None:
            head = read_checkpoint(Path(directory) / MU_HEAD_FILE, MU_HEAD_FORMAT)
            network.update({f"score_head.{name}": tensor for name, tensor in head["score_head"].items()})
            network.update(mu.adapter.read(Path(directory)))
        with restoring(path):
            # Strict for the tiny and llama μ (every name checked); a transformers base comes from its name.
            mu.network.load_state_dict(network, strict=mu.init["model"]["kind"] != "transformers")
            mu.optimizer.load_state_dict(state["optimizer"])
            if state["reference"] is not None:
                mu.set_reference()
                assert mu.reference is not None
                mu.reference.load_state_dict(state["reference"])
        if mu.adapter is not None and mu.adapter.has_reference:
            mu.reference = ReferenceView(mu.network, mu.adapter)
        mu.steps = int(state["steps"])
        return mu

    def describe(self) -> dict:
        return {
            "parameters": sum(p.numel() for p in self.network.parameters()),
            "head_parameters": sum(p.numel() for p in self.network.score_head.parameters()),
            "k": self.k,
            "vocab_size": self.vocab_size,
            "max_seq_len": self.max_seq_len,
            "pooling": self.pooling,
            "steps": self.steps,
            "reference": self.reference is not None,
            "lora": self.lora,
            "trainable_parameters": sum(p.numel() for p in self.network.parameters() if p.requires_grad),
            "device": str(self.device),
            "dtype": self.init.get("dtype", "float32"),
            "tokenizer": model_text.describe_tokenizer(self.tokenizer, None if self.tokenizer is None else getattr(self.tokenizer, "eos_token_id", None)),
        }
