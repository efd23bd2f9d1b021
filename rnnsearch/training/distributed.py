"""Data-parallel training across processes with torch.distributed (DDP).

`torchrun --nproc-per-node N -m rnnsearch train CONFIG` starts N copies of the trainer;
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) tells
each which one it is. Every rank holds the whole model; a training step takes N
consecutive batches of the shared, length-bucketed order, one per rank, and the
gradients are averaged across ranks before the update, so N processes make the
update one process would make on the union of the N batches. NCCL connects GPUs and
gloo connects CPU processes. Only rank 0 writes files. Each rank draws its own dropout
masks, from generators that every rank seeds from (seed, rank, step) at each checkpoint
(see rnnsearch.training.trainer), so no rank's generator state needs to reach rank 0
for a resumed run to draw the masks an uninterrupted one would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar, cast

import torch
import torch.distributed as dist

T = TypeVar("T")


@dataclass(frozen=True)
class World:
    """This process's place among the training processes; one process is a world of 1."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    local_size: int = 1

    @property
    def is_main(self) -> bool:
        """The rank that writes checkpoints, logs, plots and the progress bar."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def device(self, device: torch.device) -> torch.device:
        """One GPU per local rank; CPU processes share the CPU."""
        if device.type == "cuda" and self.distributed:
            return torch.device("cuda", self.local_rank)
        return device

    def cpu_threads(self) -> int:
        """This process's share of the machine's cores."""
        return max(1, len(os.sched_getaffinity(0)) // self.local_size)

    def total(self, value: float) -> float:
        """The sum of `value` over all ranks (the value itself in a world of 1)."""
        if not self.distributed:
            return value
        tensor = torch.tensor([float(value)], dtype=torch.float64, device=_collective_device())
        dist.all_reduce(tensor)
        return float(tensor.item())

    def any(self, flag: bool) -> bool:
        """True on every rank when `flag` is true on any, so that all ranks leave a loop together."""
        return self.total(1.0 if flag else 0.0) > 0

    def from_main(self, compute: Callable[[], T]) -> T:
        """`compute()` run on rank 0 only, its result given to every rank (validation)."""
        if not self.distributed:
            return compute()
        result = [compute() if self.is_main else None]
        dist.broadcast_object_list(result, src=0)
        return cast(T, result[0])  # every rank now holds rank 0's result

    def barrier(self, timeout: timedelta | None = None) -> None:
        """Wait until every rank gets here. `timeout` replaces the process group's own
        (half an hour) for a wait known to be long: the other ranks waiting while rank 0
        prepares a large corpus."""
        if not self.distributed:
            return
        if timeout is None:
            dist.barrier()
            return
        group = dist.new_group(backend="gloo", timeout=timeout)
        dist.barrier(group=group)
        dist.destroy_process_group(group)


SINGLE_PROCESS = World()


def _collective_device() -> torch.device:
    """NCCL reduces tensors on this process's GPU; gloo reduces them on the CPU."""
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def join_world(device: torch.device) -> World:
    """Join the process group that torchrun describes in the environment, if there is one."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size == 1:
        return World()
    world = World(
        rank=int(os.environ["RANK"]),
        size=size,
        local_rank=int(os.environ.get("LOCAL_RANK", "0")),
        local_size=int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
    )
    if device.type == "cuda":
        torch.cuda.set_device(world.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return world


def leave_world(world: World) -> None:
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()
