"""The one rule for running a model in eval mode: dropout off for the block, and the mode
it was in restored after, however the block ends (searching, scoring given pairs,
reading attention step by step, validating in the middle of training)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, Self, TypeVar


class Modal(Protocol):
    """What has a train and an eval mode: a torch module, or what stands for one."""

    training: bool

    def eval(self) -> Self: ...

    def train(self, mode: bool = True) -> Self: ...


ModalT = TypeVar("ModalT", bound=Modal)


@contextmanager
def evaluating(model: ModalT) -> Iterator[ModalT]:
    """`model` in eval mode for the block; its train or eval mode before it, after it."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
