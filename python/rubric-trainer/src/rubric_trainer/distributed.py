"""Running the sidecar under torchrun: every rank holds a replica of the policy (and of μ), rank 0 speaks the
protocol and broadcasts each request, and policy steps split the rollout groups across ranks with
DistributedDataParallel averaging the gradients. A single process is world size 1, where every
operation here is the identity.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

import torch
import torch.distributed as dist
from torch import nn

from .faults import Fault

T = TypeVar("T")


@dataclass
class DistContext:
    rank: int
    world_size: int
    local_rank: int

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @classmethod
    def from_environment(cls) -> "DistContext":
        """World size 1, or the process group torchrun describes in RANK / WORLD_SIZE / LOCAL_RANK
        (NCCL on GPUs, gloo on CPUs)."""
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        if world_size == 1:
            return cls(0, 1, 0)
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.set_device(local_rank)
        # The other ranks wait in a broadcast for rank 0's next request, which may be hours away
        # while the TypeScript side runs rollouts; the default 30-minute collective timeout would
        # kill an idle trainer. RUBRIC_TRAINER_DIST_TIMEOUT_S bounds it.
        timeout = datetime.timedelta(seconds=float(os.environ.get("RUBRIC_TRAINER_DIST_TIMEOUT_S", str(7 * 24 * 3600))))
        dist.init_process_group(backend="nccl" if cuda else "gloo", timeout=timeout)
        return cls(dist.get_rank(), dist.get_world_size(), local_rank)

    def default_device(self) -> torch.device:
        return torch.device(f"cuda:{self.local_rank}" if torch.cuda.is_available() else "cpu")

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's share of ``items``: every world_size-th item from position ``rank``."""
        return list(items[self.rank :: self.world_size])

    def sum(self, values: Sequence[float], device: torch.device) -> list[float]:
        """Each value summed over all ranks (in float64, so metrics do not lose precision)."""
        if not self.distributed:
            return [float(v) for v in values]
        tensor = torch.tensor(list(values), dtype=torch.float64, device=device)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor.tolist()

    def broadcast(self, message: Any) -> Any:
        """Rank 0's ``message`` on every rank (the others pass None)."""
        if not self.distributed:
            return message
        box = [message]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, value: Any) -> list:
        """Every rank's ``value``, in rank order, on every rank."""
        if not self.distributed:
            return [value]
        values: list = [None] * self.world_size
        dist.all_gather_object(values, value)
        return values

    def on_main(self, action: Callable[[], T]) -> T:
        """``action``'s result, run on rank 0 only (the one that writes files) and broadcast: the
        broadcast is the barrier after which every rank may read what rank 0 wrote. A failure on
        rank 0 is broadcast too, so that no rank waits for a result that never comes; rank 0
        raises its own error (the reply), the others a Fault that names it (logged)."""
        outcome: Any = None
        failure: Optional[BaseException] = None
        if self.is_main:
            try:
                outcome = ("ok", action())
            except Exception as error:  # noqa: BLE001 — re-raised below, after the other ranks are told
                failure = error
                outcome = ("error", f"{type(error).__name__}: {error}")
        outcome = self.broadcast(outcome)
        if failure is not None:
            raise failure
        if outcome[0] == "error":
            raise Fault(f"rank 0 failed: {outcome[1]}", {"rank": 0})
        return outcome[1]

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def wrap(self, model: nn.Module, find_unused_parameters: bool = False) -> nn.Module:
        """The module that takes gradient steps: DDP over ``model`` when there are several ranks.

        Buffers are not broadcast on every forward: ours are constants derived from the config,
        and a broadcast would make every forward a collective that all ranks must join.
        ``find_unused_parameters`` is for a model whose steps leave some parameters out (μ's step
        without a KL term never reaches its LM head); it costs a graph walk per step.
        """
        if not self.distributed:
            return model
        device_ids = [self.local_rank] if next(model.parameters()).is_cuda else None
        return nn.parallel.DistributedDataParallel(model, device_ids=device_ids, broadcast_buffers=False, find_unused_parameters=find_unused_parameters)

    def close(self) -> None:
        if self.distributed and dist.is_initialized():
            dist.destroy_process_group()
