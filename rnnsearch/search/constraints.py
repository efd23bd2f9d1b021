"""Per-sentence search inputs: what each row of a search may take next, sentence by
sentence (a forced prefix, `Prefixes`; terms that must appear, terms.py's `Terms`;
words never written, avoided.py's `Avoided`).

The search tells a constraint where each row stands (`Places`: its sentence and output
position, which the search keeps anyway, and the step's attention, which it computes
anyway). A constraint that needs more, such as which
pieces a row has taken, keeps a state for every row in flight, a tensor whose first
dimension is the rows, and the search keeps it in step with the decoder state's rows
(`RowConstraints`): rows that join start it, beams reorder it, finished rows leave it.
A constraint says

    on_device                    whether its state lives on the search's device and its
                                 mask reads nothing back to the host; False: on the host
    least_lengths                the output steps each sentence needs at least, </s> included
    start(sentences)             the state of one row of each sentence that joins; a state
                                 of no columns keeps nothing, and is never carried
    mask(log_probs, state, at)   the rows' log-probabilities with what they may not take
                                 next forbidden (-inf); what is allowed keeps its value
    advance(state, tokens)       the state once the rows have taken these pieces
    within(limits)               the constraint bound to the search's length limits

Search masks every step after the rules of rules.py (`constrained_step`), so a
constraint narrows what the length limit and the reserved pieces leave. The fixed-shape
searches take none: a call with constraints searches eagerly (choice.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass(frozen=True)
class Places:
    """Where each row of a step stands, on the host: its sentence (an index into the
    search's sources) and its output position; and, where the model attends, the step's
    α over the row's source pieces (`attention`, (R, S), on the search's device)."""

    sentences: torch.Tensor
    positions: torch.Tensor
    attention: torch.Tensor | None = None

    def __getitem__(self, rows: torch.Tensor) -> Places:
        attention = None if self.attention is None else self.attention[rows.to(self.attention.device)]
        return Places(self.sentences[rows], self.positions[rows], attention)


class Constraint(Protocol):
    """A per-sentence search input, as search runs it (above)."""

    @property
    def on_device(self) -> bool:
        """Whether the state is kept on the search's device and masking reads nothing back."""
        ...

    @property
    def least_lengths(self) -> torch.Tensor:
        """(N,) the output steps each sentence of the search needs, </s> included."""
        ...

    def start(self, sentences: torch.Tensor) -> torch.Tensor:
        """The state of one row of each of these sentences, which join the search."""
        ...

    def mask(self, log_probs: torch.Tensor, state: torch.Tensor, at: Places) -> torch.Tensor:
        """`log_probs` (R, V) of the rows whose state is `state` and which stand `at`,
        with what they may not take forbidden."""
        ...

    def advance(self, state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """The rows' state once each has taken its piece of `tokens` (R,)."""
        ...

    def within(self, limits: torch.Tensor) -> Constraint:
        """The constraint bound to the search's output length limits (N,), </s> included,
        which decoding sets once each constraint's `least_lengths` is made room for."""
        ...


NOT_FORCED = -1
"""Padding of a prefix tensor: from here on the search chooses."""


class Prefixes:
    """Target pieces each output must start with: inside its prefix a row may take only
    the prefix's next piece, which keeps its log-probability (so a prefixed output scores
    what teacher forcing gives it). Where a row stands is all it reads: it keeps no state."""

    on_device = False

    def __init__(self, table: torch.Tensor):
        """`table` (N, P): each sentence's prefix pieces, padded with NOT_FORCED (`of`)."""
        self.prefixes = table

    @classmethod
    def of(cls, pieces: Sequence[Sequence[int]]) -> Prefixes | None:
        """The constraint of each sentence's prefix `pieces` (empty: none); None when no
        sentence has one."""
        longest = max((len(prefix) for prefix in pieces), default=0)
        if longest == 0:
            return None
        tensor = torch.full((len(pieces), longest), NOT_FORCED, dtype=torch.long)
        for row, prefix in enumerate(pieces):
            tensor[row, : len(prefix)] = torch.tensor(prefix, dtype=torch.long)
        return cls(tensor)

    @property
    def least_lengths(self) -> torch.Tensor:
        """Each prefix and </s>."""
        return (self.prefixes != NOT_FORCED).sum(1) + 1

    @staticmethod
    def start(sentences: torch.Tensor) -> torch.Tensor:
        """No state: (R, 0)."""
        return sentences.new_empty(len(sentences), 0)

    def mask(self, log_probs: torch.Tensor, state: torch.Tensor, at: Places) -> torch.Tensor:
        """Anything but the prefix's next piece forbidden on rows still inside their prefix."""
        forced = self.forced(at)
        if forced is None:
            return log_probs
        rows = (forced != NOT_FORCED).nonzero().squeeze(1)
        keep_only(log_probs, rows, forced[rows])
        return log_probs

    def forced(self, at: Places) -> torch.Tensor | None:
        """The piece each row's prefix sets at its position, or NOT_FORCED past its prefix;
        None when no row is inside its prefix."""
        inside = at.positions < self.prefixes.size(1)
        if not bool(inside.any()):
            return None
        tokens = torch.full_like(at.positions, NOT_FORCED)
        tokens[inside] = self.prefixes[at.sentences[inside], at.positions[inside]]
        return tokens if bool((tokens != NOT_FORCED).any()) else None

    @staticmethod
    def advance(state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """No state to change."""
        return state

    def within(self, limits: torch.Tensor) -> Prefixes:
        """A prefix reads no limit: itself."""
        return self


class RowConstraints:
    """A search's constraints and the states of those that keep one, one row per row in
    flight, in the decoder state's order: the search calls `join`, `select` and `advance`
    where it changes its own rows, and `mask` at every step (through `constrained_step`).
    A state of no columns is not carried: there is nothing to reorder or advance."""

    def __init__(self, constraints: Sequence[Constraint], device: torch.device):
        self.constraints = list(constraints)
        self.states: list[torch.Tensor | None] = [None] * len(self.constraints)
        self.device = device

    def join(self, sentences: torch.Tensor, *, rows_each: int = 1) -> None:
        """Rows for sentences that join, `rows_each` per sentence (a beam's K), after those in flight."""
        for n, constraint in enumerate(self.constraints):
            new = constraint.start(sentences.to(self._device_of(constraint))).repeat_interleave(rows_each, 0)
            old = self.states[n]
            self.states[n] = new if old is None else torch.cat([old, new])

    def select(self, rows: torch.Tensor) -> None:
        """Keep these rows, in this order (retired rows gone, beams reordered)."""
        for n, constraint, state in self._carried():
            self.states[n] = state[rows.to(self._device_of(constraint))]

    def advance(self, tokens: torch.Tensor) -> None:
        """Every row has taken its piece of `tokens`."""
        for n, constraint, state in self._carried():
            self.states[n] = constraint.advance(state, tokens.to(self._device_of(constraint)))

    def mask(
        self,
        log_probs: torch.Tensor,
        at: Places,
        scored: torch.Tensor | None = None,
        attention: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """`log_probs` of the rows standing `at` (or of the `scored` rows among them alone)
        with every constraint's mask; `attention`, the step's α of every row standing
        `at` (a model's step gives it for all its rows), if the model attends."""
        on_host = None if scored is None else scored.cpu()
        if attention is not None:
            at = Places(at.sentences, at.positions, attention)
        if scored is not None and on_host is not None:
            at = at[on_host]
        for constraint, state in zip(self.constraints, self.states, strict=True):
            if state is None:
                raise ValueError("rows are masked before any has joined")
            if scored is not None and on_host is not None:
                state = state[scored if constraint.on_device else on_host]
            log_probs = constraint.mask(log_probs, state, at)
        return log_probs

    def _carried(self) -> list[tuple[int, Constraint, torch.Tensor]]:
        """The constraints whose state has columns, with their place and state."""
        return [
            (n, constraint, state)
            for n, (constraint, state) in enumerate(zip(self.constraints, self.states, strict=True))
            if state is not None and state.size(1) > 0
        ]

    def _device_of(self, constraint: Constraint) -> torch.device:
        return self.device if constraint.on_device else torch.device("cpu")


def forbid(log_probs: torch.Tensor, rows: torch.Tensor, tokens: torch.Tensor, *, others: bool = False) -> None:
    """Every one of `tokens` forbidden on every one of `rows` (as `forbid_pairs` does);
    `others`: the caller knows every row keeps another piece, and nothing is read."""
    if len(rows) and len(tokens):
        device = log_probs.device
        rows, tokens = rows.to(device), tokens.to(device)
        _forbidden(log_probs, rows.unsqueeze(1), tokens.unsqueeze(0), rows, others=others)


def forbid_pairs(log_probs: torch.Tensor, rows: torch.Tensor, tokens: torch.Tensor) -> None:
    """Each piece of `tokens` forbidden on its row of `rows` (P,) in `log_probs`, except
    on a row they would leave nothing to take: what another constraint forces a row to
    take is not undone. Reads each row once (its best after forbidding) and writes only
    the forbidden places."""
    if len(rows):
        rows, tokens = rows.to(log_probs.device), tokens.to(log_probs.device)
        _forbidden(log_probs, rows, tokens, torch.unique(rows), others=False)


def _forbidden(
    log_probs: torch.Tensor, rows: torch.Tensor, tokens: torch.Tensor, touched: torch.Tensor, *, others: bool
) -> None:
    """`forbid_pairs` of index tensors that broadcast together; `touched`: their rows, once each."""
    kept = log_probs[rows, tokens]
    log_probs[rows, tokens] = -math.inf
    if others:
        return
    emptied = touched[~torch.isfinite(log_probs[touched].amax(1))]
    if len(emptied):
        rows, tokens = rows.expand_as(kept), tokens.expand_as(kept)
        back = torch.isin(rows, emptied)
        log_probs[rows[back], tokens[back]] = kept[back]


def keep_only(log_probs: torch.Tensor, rows: torch.Tensor, tokens: torch.Tensor) -> None:
    """Each of `rows` of `log_probs` left its piece of `tokens` alone, with its
    log-probability, where that piece is allowed; a row whose piece another rule
    forbids is left as it is."""
    rows, tokens = rows.to(log_probs.device), tokens.to(log_probs.device)
    kept = log_probs[rows, tokens]
    allowed = torch.isfinite(kept)
    rows, tokens, kept = rows[allowed], tokens[allowed], kept[allowed]
    log_probs[rows] = -math.inf
    log_probs[rows, tokens] = kept
