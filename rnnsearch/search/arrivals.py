"""Sentences joining a batch in flight as places in it become free."""

from __future__ import annotations

import torch

from rnnsearch.search.contract import SearchModel, SearchState


class Arrivals:
    """The sentences of a search, encoded `batch` at a time in the order given and handed
    out as places in the batch in flight become free.

    Encoding full batches ahead keeps the encoder as efficient as with fixed batches,
    however few sentences join at a time.
    """

    def __init__(self, model: SearchModel, src: torch.Tensor, src_lengths: torch.Tensor, batch: int):
        self.model, self.src, self.src_lengths, self.batch = model, src, src_lengths, batch
        self.encoded = 0
        self.waiting = torch.zeros(0, dtype=torch.long)  # encoded sentences not yet handed out
        self.state: SearchState | None = None  # their decoder states

    @property
    def remaining(self) -> int:
        """Sentences not yet handed out."""
        return self.src.size(0) - self.encoded + self.waiting.numel()

    def due(self, busy: int) -> int:
        """How many sentences join now that `busy` of the `batch` places are taken: none
        until a quarter of the places are free (or all, when nothing is in flight), so
        that joining, which copies the state in flight, stays rare."""
        free = self.batch - busy
        if self.remaining == 0 or (busy > 0 and free < max(1, self.batch // 4)):
            return 0
        return free

    def take(self, count: int) -> tuple[torch.Tensor, SearchState]:
        """The next `count` sentences (fewer at the end) and their initial decoder states."""
        while self.waiting.numel() < count and self.encoded < self.src.size(0):
            self._encode_next()
        assert self.state is not None, "sentences are taken only while some remain"
        taken, self.waiting = self.waiting[:count], self.waiting[count:]
        rows = torch.arange(self.state.padding.size(0), device=self.src.device)
        state, self.state = self.state.select(rows[:count]), self.state.select(rows[count:])
        return taken, state

    def _encode_next(self) -> None:
        sentences = torch.arange(self.encoded, min(self.src.size(0), self.encoded + self.batch))
        index = sentences.to(self.src.device)
        lengths = self.src_lengths[index]
        state = self.model.encode(self.src[index, : int(lengths.max())], lengths)
        self.state = state if self.state is None else self.state.extend(state)
        self.waiting = torch.cat([self.waiting, sentences])
        self.encoded += len(sentences)
