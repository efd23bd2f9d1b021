"""Words and phrases no output may contain (`Avoided`): a user's do-not-write list,
through the constraint door of constraints.py.

A model may spell one word in several ways ("▁dog", "▁do g", "▁d o g"), so forbidding
one spelling's last piece (as token-level negative constraints do) lets another through.
Here what a row has written is read as text: a piece is forbidden where, taken next, it
would complete an avoided phrase standing on whole words, whatever pieces spell it,
in any case. A phrase is complete where its last character is written, so a longer word
it begins ("dogs") is written only where the model spells it with a piece running past
the phrase's end ("▁dogs", not "▁dog s"). The tables (`AvoidTable`) are made once per
list and vocabulary, in time and memory linear in the list (a phrase's prefixes are keys
only where a piece holds the rest of it); each search then keeps, for every row, the end of what it has
written (as long as the longest phrase), interned, so that the pieces each distinct end
forbids are found once.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from rnnsearch.search.constraints import Places, forbid_pairs
from rnnsearch.text.glossary import folded, word_character

TEXT_START = "\x00"
"""What a row's text starts with: a character that is no word's, so that a phrase may begin the output."""


@dataclass(frozen=True)
class AvoidTable:
    """The pieces that complete an avoided phrase, for one list and one vocabulary.

    always:     pieces that hold a whole phrase after a word boundary of their own
                (" dog", "(dog")
    continuing: for each phrase's first k characters (a key: "" for k = 0, the text
                ending at a word boundary), the pieces that start with the rest of it
                and end it on a word boundary or at their own end
    window:     characters of a row's text kept to find its keys: the longest phrase's, and one
    """

    always: tuple[int, ...]
    continuing: dict[str, tuple[int, ...]]
    window: int
    texts: tuple[str, ...] = field(repr=False)

    @classmethod
    def of(cls, phrases: Sequence[str], texts: Sequence[str]) -> AvoidTable:
        """The table of `phrases` for a vocabulary whose pieces read as `texts` (a word
        start as a space; a piece of no text, "")."""
        keys = sorted({folded(" ".join(phrase.split())) for phrase in phrases} - {""})
        pieces, ordered, starts = _vocabulary(tuple(texts))
        always = _holding(keys, pieces)
        continuing: dict[str, set[int]] = {}
        longest = max((len(text) for text in starts), default=0)
        for phrase in keys:
            for k in range(max(len(phrase) - longest, 0), len(phrase)):  # no piece holds a longer rest
                found = _starting(phrase[k:], ordered, starts)
                if k == 0 and not word_character(phrase[0]):
                    always.update(found)
                elif found:
                    continuing.setdefault(phrase[:k], set()).update(found)
        window = max((len(phrase) for phrase in keys), default=0) + 1
        return cls(tuple(sorted(always)), {k: tuple(sorted(v)) for k, v in continuing.items()}, window, pieces)


@functools.lru_cache(maxsize=4)
def _vocabulary(texts: tuple[str, ...]) -> tuple[tuple[str, ...], list[tuple[str, int]], list[str]]:
    """A vocabulary's pieces in lower case, and those with text in order with their ids
    (and their texts alone, to bisect): made once per vocabulary, not for every call
    that avoids words (a server's requests)."""
    pieces = tuple(folded(text) for text in texts)
    ordered = sorted((text, v) for v, text in enumerate(pieces) if text)
    return pieces, ordered, [text for text, _ in ordered]


def _holding(phrases: list[str], pieces: tuple[str, ...]) -> set[int]:
    """The pieces in which a phrase stands on whole words, after a character of their own."""
    if not phrases:
        return set()
    import ahocorasick  # loaded with the first avoid list, not with every model

    automaton = ahocorasick.Automaton()
    for phrase in phrases:
        automaton.add_word(phrase, phrase)
    automaton.make_automaton()
    held = set()
    for v, text in enumerate(pieces):
        for last, phrase in automaton.iter(text):
            start, end = last + 1 - len(phrase), last + 1
            before = start > 0 and (not word_character(text[start - 1]) or not word_character(phrase[0]))
            if before and _ends_word(text, end, phrase):
                held.add(v)
                break
    return held


def _starting(rest: str, ordered: list[tuple[str, int]], starts: list[str]) -> list[int]:
    """The pieces whose text starts with `rest` and ends a word with it (or ends there)."""
    found = []
    for k in range(bisect.bisect_left(starts, rest), len(starts)):
        text, v = ordered[k]
        if not text.startswith(rest):
            break
        if _ends_word(text, len(rest), rest):
            found.append(v)
    return found


def _ends_word(text: str, end: int, phrase: str) -> bool:
    """Whether a phrase ending at `end` of `text` ends a word there: the text ends, the
    next character is no word's, or the phrase's last character is none."""
    return end == len(text) or not word_character(text[end]) or not word_character(phrase[-1])


class Avoided:
    """No output contains an avoided phrase (the module docstring). The state of a row:
    the index of its text's end among those this search has met (`ends`). A row that
    a prefix or a term forces to write a phrase (all it may take) writes it: what the
    user asks to be written wins."""

    on_device = False

    def __init__(self, table: AvoidTable):
        self.table = table
        self.ends: list[str] = [TEXT_START]
        self.index: dict[str, int] = {TEXT_START: 0}
        self.forbidden: dict[int, torch.Tensor] = {}

    @property
    def least_lengths(self) -> torch.Tensor:
        """No sentence needs a step more: </s> alone."""
        return torch.ones(1, dtype=torch.long)

    def within(self, limits: torch.Tensor) -> Avoided:
        """It reads no limit: itself."""
        return self

    @staticmethod
    def start(sentences: torch.Tensor) -> torch.Tensor:
        """Every row starts at the text's start."""
        return torch.zeros(len(sentences), 1, dtype=torch.long)

    def mask(self, log_probs: torch.Tensor, state: torch.Tensor, at: Places) -> torch.Tensor:
        """Each row's pieces that would complete a phrase forbidden, all rows at once
        (`forbid_pairs`: not where they are all it may take)."""
        forbidden = [self._forbidden_after(end) for end in state[:, 0].tolist()]
        counts = torch.tensor([len(tokens) for tokens in forbidden])
        if int(counts.sum()):
            rows = torch.arange(len(forbidden)).repeat_interleave(counts)
            forbid_pairs(log_probs, rows, torch.cat(forbidden))
        return log_probs

    def advance(self, state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Each row's text's end once it has written its piece of `tokens`."""
        texts = self.table.texts
        ends = [
            self._interned((self.ends[end] + texts[token])[-self.table.window :])
            for end, token in zip(state[:, 0].tolist(), tokens.tolist(), strict=True)
        ]
        return torch.tensor(ends, dtype=torch.long).unsqueeze(1)

    def _interned(self, end: str) -> int:
        found = self.index.get(end)
        if found is None:
            found = self.index[end] = len(self.ends)
            self.ends.append(end)
        return found

    def _forbidden_after(self, index: int) -> torch.Tensor:
        """The pieces a row whose text ends as `ends[index]` may not take next."""
        cached = self.forbidden.get(index)
        if cached is not None:
            return cached
        end, continuing = self.ends[index], self.table.continuing
        tokens = set(self.table.always)
        for j in range(1, len(end) + 1):
            key = end[j:]
            if key in continuing and (not word_character(end[j - 1]) or (key and not word_character(key[0]))):
                tokens.update(continuing[key])
        self.forbidden[index] = torch.tensor(sorted(tokens), dtype=torch.long)
        return self.forbidden[index]
