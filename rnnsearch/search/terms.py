"""Terms each output must contain (`Terms`): a user's glossary, through the constraint
door of constraints.py.

The published algorithms keep a beam per number of constraints met (grid beam search,
Hokamp & Liu 2017) or share one beam out among those numbers (dynamic beam allocation,
Post & Vilar 2018; vectorised by Hu et al. 2019). Both widen or reshape the search for
every sentence of a batch. Here a term is instead a rule on what each row may take,
kept in step with the search's rows as any constraint is: the beam is unchanged, a
sentence without a term is searched exactly as without a glossary, in the same batch,
and the model places each term where it scores best. Three rules keep a beam from
putting a term off until the end (where a row that may not end writes on until only the
term's room is left, a tail of words no one asked for): a term's first piece is scored
TERM_BONUS higher wherever a row may begin it, so hypotheses that begin it where the
model finds it likely stay in the beam (a reward in the spirit of dynamic beam
allocation's banks, Post & Vilar 2018: measured on Multi30k, BENCHMARKS.md); a row whose
attention has passed the term's source words (`ends`: the step's α weighs a piece after
them most, `Places.attention`) begins it there at the latest, near where the model
translates them, which matters most on text the model knows poorly, where no place
scores well; and a row whose best piece is </s> begins its term there rather than write
on. A hypothesis's score holds the bonus of each term it begins.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch

from rnnsearch.reserved import EOS
from rnnsearch.search.constraints import Places, forbid, keep_only
from rnnsearch.text.glossary import word_character

STARTS, CONTINUES, ATTACHED = 0, 1, 2
"""The kinds of target piece (`piece_kinds`): one that starts a word (or is no text),
one that continues the word before it (a letter or a digit first), and punctuation
attached to the word before it."""

TERM_BONUS = 4.0
"""What a term's first piece gains in log-probability where a row may begin it: chosen
on the first 300 sentences of Multi30k test_2016_flickr (bench/terminology.py), where
2 left chrF below the free search's and 6 and more began terms too early."""

DONE = -1
"""A term slot's piece table padding: a slot with no term, met from the start."""


Place = tuple[int, int]
"""Where an output wrote a term: its first piece and the piece after its last."""


class Terms:
    """Target pieces each output must contain somewhere, whole and in order (a user's
    terms, `rnnsearch.text.glossary`): a row may not end while a term of its sentence is
    unmet; once it takes a term's first piece, it must take the rest; and where the steps
    left before its length limit are only enough for the pieces its unmet terms still
    need, or where it would end (its best piece is </s>), it starts the first of them;
    a row that may begin a term sees its first piece scored TERM_BONUS higher. Every
    term is therefore written, wherever the model places it, unless another constraint
    (a prefix) leaves the row no room.
    Search makes room for each sentence's terms and </s> (`least_lengths`), and the
    constraint is bound to the search's length limits (`within`) before it runs.

    Given the kind of each piece (`kinds`, `piece_kinds`), a row that has just written a
    term, and any punctuation attached to it since, may not take a piece that continues
    a word, so the term stays a word of its own ("hound", not "hounds" or "hound`s"),
    unless that is all the row may take; where it must (inside another term), the term
    run on is unmet again, and written later as a word of its own.

    The state of a row: its sentence, whether it stands at a term's end (its last piece
    ended a term, or was punctuation attached to one), then how many pieces of each term
    slot it has taken in a row (a term's length: met, unless the next piece runs it on;
    more: met for good)."""

    on_device = False

    def __init__(
        self,
        pieces: torch.Tensor,
        *,
        kinds: torch.Tensor | None = None,
        limits: torch.Tensor | None = None,
        ends: torch.Tensor | None = None,
    ):
        """`pieces` (N, T, P): each sentence's terms, padded with DONE (`of`); `kinds`
        (V,): each piece's kind (`piece_kinds`); `limits` (N,): each sentence's output
        steps, </s> included (`within`); `ends` (N, T): the source piece after each term's
        source words (DONE: none known)."""
        self.pieces, self.kinds, self.limits, self.ends = pieces, kinds, limits, ends
        self.lengths = (pieces != DONE).sum(2)
        self.continuing = None if kinds is None else (kinds == CONTINUES).nonzero().squeeze(1)

    @classmethod
    def of(
        cls,
        terms: Sequence[Sequence[Sequence[int]]],
        *,
        kinds: torch.Tensor | None = None,
        ends: Sequence[Sequence[int]] | None = None,
    ) -> Terms | None:
        """The constraint of these terms (each a sequence of target pieces), a list per
        sentence (empty: none), and where known the source piece after each term's source
        words (`ends`, the same shape); None where no sentence has a term."""
        slots = max((len(sentence) for sentence in terms), default=0)
        longest = max((len(term) for sentence in terms for term in sentence), default=0)
        if slots == 0 or longest == 0:
            return None
        pieces = torch.full((len(terms), slots, longest), DONE, dtype=torch.long)
        for n, sentence in enumerate(terms):
            for t, term in enumerate(sentence):
                pieces[n, t, : len(term)] = torch.tensor(list(term), dtype=torch.long)
        return cls(pieces, kinds=kinds, ends=None if ends is None else _padded(ends, slots))

    def within(self, limits: torch.Tensor) -> Terms:
        """The constraint bound to the search's length limits, one per sentence."""
        return Terms(self.pieces, kinds=self.kinds, limits=limits, ends=self.ends)

    @property
    def least_lengths(self) -> torch.Tensor:
        """Every term's pieces and </s>."""
        return self.lengths.sum(1) + 1

    def start(self, sentences: torch.Tensor) -> torch.Tensor:
        """Each row's sentence, no term just ended, and no piece of any term taken (a
        slot without one, met)."""
        taken = torch.zeros(len(sentences), 1 + self.pieces.size(1), dtype=torch.long)
        return torch.cat([sentences.unsqueeze(1).long(), taken], 1)

    def mask(self, log_probs: torch.Tensor, state: torch.Tensor, at: Places) -> torch.Tensor:
        """A row inside a term takes its next piece; one with a term unmet may not end,
        and starts one when it has no steps to spare; one that has just ended a term
        starts a new word. A row whose other constraints leave it no such piece is left
        as they leave it (a prefix wins)."""
        if self.limits is None:
            raise ValueError("Terms.within(limits) must bind the search's length limits first")
        sentences, ended, taken = state[:, 0], state[:, 1].bool(), state[:, 2:]
        lengths = self.lengths[sentences]
        unmet = taken < lengths
        inside = unmet & (taken > 0)
        slot = torch.where(inside.any(1), inside.long().argmax(1), unmet.long().argmax(1))
        rows = torch.arange(len(state))
        needed = (lengths - taken).clamp(min=0).sum(1)
        room = self.limits[sentences] - 1 - at.positions
        waiting = unmet.any(1) & ~inside.any(1)
        due = self._due(unmet, waiting, sentences, at)
        slot = torch.where(due.any(1), due.long().argmax(1), slot)
        next_piece = self.pieces[sentences, slot, taken[rows, slot].clamp(max=self.pieces.size(2) - 1)]
        forced = unmet.any(1) & (inside.any(1) | (needed >= room) | self._would_end(log_probs, waiting) | due.any(1))
        keep_only(log_probs, rows[forced], next_piece[forced])
        free = waiting & ~forced
        if bool(free.any()):
            _welcome(log_probs, rows[free], self.pieces[sentences[free], :, 0], unmet[free])
        # a row whose best piece is not </s> (every row left here) keeps another piece
        forbid(log_probs, rows[unmet.any(1) & ~forced], torch.tensor([EOS]), others=True)
        if self.continuing is not None and bool((ended & ~forced).any()):
            forbid(log_probs, rows[ended & ~forced], self.continuing)
        return log_probs

    def _due(self, unmet: torch.Tensor, waiting: torch.Tensor, sentences: torch.Tensor, at: Places) -> torch.Tensor:
        """(R, T) the unmet terms of the rows `waiting` to begin one (inside none) whose
        source words the step's attention has passed (it weighs a piece after them most)
        once the row has written at least as many pieces as come before their end (a
        first step's attention, often on the source's end, begins nothing). A term is
        begun there at the latest, near where the model translates its words, not put
        off to where the translation would end."""
        if self.ends is None or at.attention is None or not bool(waiting.any()):
            return torch.zeros_like(unmet)
        focus = at.attention.argmax(1).cpu().unsqueeze(1)
        ends = self.ends[sentences]
        passed = (ends != DONE) & (focus >= ends) & (at.positions.unsqueeze(1) >= ends)
        return unmet & waiting.unsqueeze(1) & passed

    @staticmethod
    def _would_end(log_probs: torch.Tensor, waiting: torch.Tensor) -> torch.Tensor:
        """Which of the rows `waiting` to begin a term have </s> as their best piece; no
        piece is read where no row waits."""
        if not bool(waiting.any()):
            return waiting
        return waiting & (log_probs.argmax(1).cpu() == EOS)

    def advance(self, state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Each slot's count of its term's pieces taken in a row, after `tokens`: one more
        where a token is the term's next piece, else one where it is its first (a term
        begun again), else none. A term whose last piece was just taken is met unless the
        next piece continues its word (another term the row is inside may force one: Herr
        → "man" within Chef → "manager"): that run-on word is no writing of it, and the
        term is unmet again; once a piece that does not continue it follows, it stays met
        (its count past its length). A row stands at a term's end where a slot became met,
        or where it stood at one and took attached punctuation."""
        sentences, taken = state[:, 0], state[:, 2:]
        lengths = self.lengths[sentences]
        pieces = self.pieces[sentences]
        position = taken.clamp(max=self.pieces.size(2) - 1)
        expected = pieces.gather(2, position.unsqueeze(2)).squeeze(2)
        tokens = tokens.to(state.device).unsqueeze(1)
        first = (tokens == pieces[:, :, 0]).long()
        moved = torch.where(tokens == expected, taken + 1, first)
        now = torch.where(taken > lengths, taken, moved)
        kind = None if self.kinds is None else self.kinds[tokens]  # (R, 1): each token's kind, read once
        runs_on = torch.zeros_like(tokens, dtype=torch.bool) if kind is None else kind == CONTINUES
        now = torch.where(taken == lengths, torch.where(runs_on, first, lengths + 1), now)
        ended = ((now == lengths) & (taken < lengths)).any(1)
        if kind is not None:
            ended |= state[:, 1].bool() & (kind.squeeze(1) == ATTACHED)
        return torch.cat([sentences.unsqueeze(1), ended.long().unsqueeze(1), now], 1)

    def written(self, sentences: torch.Tensor, outputs: Sequence[Sequence[int]]) -> list[list[Place | None]]:
        """Where each output (the pieces `outputs[r]`, a row of sentence `sentences[r]`)
        wrote each term of its sentence, as the search's state of that row counted it: the
        pieces (start, end) of the place the term was last met and stayed met, None where
        the output does not write it. The outputs' pieces go through `advance` again, a
        step at a time as the search took them, so a term is where the search wrote it,
        whatever else the text holds (the same words written otherwise, or run on)."""
        longest = max((len(pieces) for pieces in outputs), default=0)
        table = torch.full((len(outputs), longest), EOS, dtype=torch.long)  # </s>: no term's piece, a word start
        for r, pieces in enumerate(outputs):
            table[r, : len(pieces)] = torch.tensor(list(pieces), dtype=torch.long)
        state, lengths = self.start(sentences), self.lengths[sentences]
        ends = torch.full_like(lengths, DONE)
        for step in range(longest):
            before = state[:, 2:]
            state = self.advance(state, table[:, step])
            now = state[:, 2:]
            ends = torch.where((now == lengths) & (before < lengths), step + 1, ends)
            ends = torch.where(now < lengths, DONE, ends)
        return [
            [None if end == DONE else (end - length, end) for end, length in zip(row_ends, row_lengths) if length > 0]
            for row_ends, row_lengths in zip(ends.tolist(), lengths.tolist(), strict=True)
        ]


@functools.lru_cache(maxsize=4)
def piece_kinds(texts: tuple[str, ...]) -> torch.Tensor:
    """(V,) the kind of each piece of a vocabulary whose pieces write `texts` (a word
    start as a space; "" for a piece of no text): STARTS, CONTINUES or ATTACHED. Made
    once per vocabulary (a server builds a request for every call); read, never written."""
    return torch.tensor(
        [
            STARTS if not text or text[0].isspace() else CONTINUES if word_character(text[0]) else ATTACHED
            for text in texts
        ],
        dtype=torch.long,
    )


def _padded(ends: Sequence[Sequence[int]], slots: int) -> torch.Tensor:
    """(N, slots) each sentence's term ends, padded with DONE."""
    table = torch.full((len(ends), slots), DONE, dtype=torch.long)
    for n, sentence in enumerate(ends):
        table[n, : len(sentence)] = torch.tensor(list(sentence), dtype=torch.long)
    return table


def _welcome(log_probs: torch.Tensor, rows: torch.Tensor, firsts: torch.Tensor, unmet: torch.Tensor) -> None:
    """The first piece of each unmet term of `rows` (`firsts`, (R, T)) scored TERM_BONUS
    higher, so that a beam keeps the hypotheses that begin a term where the model finds
    it likely, before the ones that put it off."""
    row, slot = unmet.nonzero(as_tuple=True)
    row, piece = rows[row].to(log_probs.device), firsts[row, slot].to(log_probs.device)
    log_probs[row, piece] = log_probs[row, piece] + TERM_BONUS
