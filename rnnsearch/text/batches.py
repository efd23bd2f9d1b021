"""Batches of padded tensors, built from length-bucketed sentences under a token budget.

A source is a sequence of piece ids (text) or a (frames, features) float tensor (speech);
targets are always piece ids. Piece ids may be lists, `array.array`s or numpy arrays
(views of a memory-mapped dataset): a batch's tensors are built by copying each pair's
ids into a padded numpy array, whatever holds them.

Sentences of similar length are batched together so little compute goes to padding;
the order of batches is shuffled with a generator seeded from (seed, epoch), so an
epoch's batches can be rebuilt exactly when training resumes. Batching reads only the
corpus's arrays of source and target lengths, and an epoch's batches are numpy arrays of
pair indices: a few bytes per pair, however many millions of pairs there are.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from rnnsearch.alignments.guide import guide_entries
from rnnsearch.reserved import BOS, EOS, PAD

Pieces = Sequence[int] | np.ndarray
Source = Pieces | torch.Tensor
Pair = tuple[Source, Pieces]


class PairSource(Protocol):
    """What batching needs from a corpus: every pair's lengths at once, and pairs by index.

    Lengths count source pieces (or feature frames) without </s> and target pieces
    without <s> and </s>, as `len` of the pair's source and target.
    """

    @property
    def source_lengths(self) -> np.ndarray: ...

    @property
    def target_lengths(self) -> np.ndarray: ...

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Pair: ...


class LinkedPairs(PairSource, Protocol):
    """A corpus whose pairs carry word links, as (target piece, source piece) rows: what
    guided alignment and the alignment module's links objective read. Only text has
    words to link, and a config that asks for links of other data is refused."""

    def links(self, index: int) -> np.ndarray: ...


class InMemoryPairs:
    """Pairs held in a list (validation sets, speech, tests) as a `PairSource`."""

    def __init__(self, pairs: Sequence[Pair]) -> None:
        self.pairs = pairs
        self.source_lengths = _lengths([source for source, _ in pairs])
        self.target_lengths = _lengths([target for _, target in pairs])

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: int) -> Pair:
        return self.pairs[index]


def _lengths(sequences: Sequence[Source]) -> np.ndarray:
    return np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))


@dataclass
class Guide:
    """The word links that guide a batch's attention (rnnsearch.alignments.guide.guide_entries):

    entries: (L, 3) (pair, target piece i, source piece j): A_ij > 0, row i of α is
             the step that outputs target piece i (tgt_out[:, i])
    weights: (L,)   A_ij, 1 / the links of target piece i, so each linked row sums to 1
    """

    entries: torch.Tensor
    weights: torch.Tensor

    def to(self, device: torch.device) -> Guide:
        return Guide(self.entries.to(device, non_blocking=True), self.weights.to(device, non_blocking=True))

    def matrix(self, shape: tuple[int, int, int]) -> torch.Tensor:
        """The guide A as a dense (B, T, S) matrix, 0 where there is no link: the shape of α,
        which a fixed-shape (CUDA graph) loss can read whatever the number of links."""
        return self.weights.new_zeros(shape).index_put_(tuple(self.entries.unbind(1)), self.weights)  # entries unique


@dataclass
class Batch:
    """Source and teacher-forcing target tensors of one batch.

    src:         (B, S)  source ids followed by </s>, padded with 0,
                 or (B, S, F) feature vectors padded with zero vectors
    src_lengths: (B,)    real source lengths (</s> included for ids)
    tgt_in:      (B, T)  <s> y_1 … y_n   (decoder inputs y_{i-1})
    tgt_out:     (B, T)  y_1 … y_n </s>  (what each step must predict)
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor

    @property
    def target_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())

    def to(self, device: torch.device) -> Batch:
        return Batch(
            *(t.to(device, non_blocking=True) for t in (self.src, self.src_lengths, self.tgt_in, self.tgt_out))
        )


@dataclass
class GuidedBatch(Batch):
    """A batch with the word links that guide its attention (guided alignment): made only
    when they are asked for, so that every other batch is a plain `Batch`."""

    guide: Guide

    def to(self, device: torch.device) -> GuidedBatch:
        plain = super().to(device)
        return GuidedBatch(plain.src, plain.src_lengths, plain.tgt_in, plain.tgt_out, guide=self.guide.to(device))


def _rows(sequences: Sequence[Pieces], width: int, offset: int) -> np.ndarray:
    """(N, width) int64 array of PAD, with sequence k's ids from column `offset` of row k.

    A row is copied in one numpy assignment, from a list, an `array.array` or a numpy
    view alike, which is much faster than a tensor per sequence.
    """
    out = np.full((len(sequences), width), PAD, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        out[row, offset : offset + len(sequence)] = sequence
    return out


def source_tensors(sources: Sequence[Pieces]) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded sources with </s> appended, and their lengths (</s> included)."""
    lengths = _lengths(sources)
    src = _rows(sources, int(lengths.max()) + 1, 0)
    src[np.arange(len(sources)), lengths] = EOS
    return torch.from_numpy(src), torch.from_numpy(lengths + 1)


def side_tensors(sources: Sequence[Sequence[Pieces]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sources cut into pieces by several subword models (an ensemble's source sides), one
    tuple of readings per sentence → (N, S, sides) ids, each reading padded and ending in
    </s> as `source_tensors` makes them; the longest reading's length of each sentence;
    and side 0's lengths."""
    sides = [source_tensors([source[side] for source in sources]) for side in range(len(sources[0]))]
    width = max(src.size(1) for src, _ in sides)
    stacked = torch.stack([torch.nn.functional.pad(src, (0, width - src.size(1)), value=PAD) for src, _ in sides], 2)
    lengths = torch.stack([side_lengths for _, side_lengths in sides]).amax(0)
    return stacked, lengths, sides[0][1]


def target_tensors(targets: Sequence[Pieces]) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forcing decoder inputs <s> y_1 … y_n and outputs y_1 … y_n </s>, padded."""
    lengths = _lengths(targets)
    tgt_in = _rows(targets, int(lengths.max()) + 1, 1)
    tgt_in[:, 0] = BOS
    tgt_out = np.full_like(tgt_in, PAD)
    tgt_out[:, :-1] = tgt_in[:, 1:]
    tgt_out[np.arange(len(targets)), lengths] = EOS
    return torch.from_numpy(tgt_in), torch.from_numpy(tgt_out)


def vector_tensors(sources: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, frames, F) zero-padded feature vectors, and the real numbers of frames."""
    lengths = torch.tensor([len(s) for s in sources], dtype=torch.long)
    out = sources[0].new_zeros(len(sources), int(lengths.max()), sources[0].size(1))
    for row, source in enumerate(sources):
        out[row, : len(source)] = source
    return out, lengths


def make_batch(pairs: Sequence[Pair], *, links: Sequence[np.ndarray] | None = None) -> Batch:
    """The tensors of `pairs`: feature vectors or piece ids as sources, piece ids as targets;
    with `links`, a `GuidedBatch` whose guide holds each pair's (L, 2) (target piece,
    source piece) word links."""
    vectors = [s for s, _ in pairs if isinstance(s, torch.Tensor)]
    if vectors:
        src, src_lengths = vector_tensors(vectors)
    else:
        src, src_lengths = source_tensors([s for s, _ in pairs if not isinstance(s, torch.Tensor)])
    tgt_in, tgt_out = target_tensors([t for _, t in pairs])
    if links is None:
        return Batch(src=src, src_lengths=src_lengths, tgt_in=tgt_in, tgt_out=tgt_out)
    entries, weights = guide_entries([np.asarray(pair, dtype=np.int64) for pair in links])
    guide = Guide(torch.from_numpy(entries), torch.from_numpy(weights))
    return GuidedBatch(src=src, src_lengths=src_lengths, tgt_in=tgt_in, tgt_out=tgt_out, guide=guide)


@dataclass(frozen=True, eq=False)
class EpochBatches:
    """An epoch's batches of pair indices, in training order.

    order:   pair indices sorted by length, batch after batch (int32 below 2**31 pairs)
    bounds:  (B + 1,) where each batch starts in `order`, then len(order)
    batches: (B,) the batch, by its place in `order`, that comes k-th in training
    """

    order: np.ndarray
    bounds: np.ndarray
    batches: np.ndarray

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, k: int) -> np.ndarray:
        """Pair indices of the k-th batch of the epoch (a view of `order`)."""
        batch = self.batches[k]
        return self.order[self.bounds[batch] : self.bounds[batch + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[k] for k in range(len(self)))


def epoch_batches(
    pairs: PairSource, batch_tokens: int, max_sentences: int | None, seed: int, epoch: int
) -> EpochBatches:
    """The batches of one epoch, the same for the same (seed, epoch).

    Each batch fills at most `batch_tokens` padded tokens (a longer pair gets a batch of
    its own) and holds at most `max_sentences` pairs. Pairs are shuffled, sorted by
    (source length, target length) with ties in the shuffled order, cut greedily into
    batches, and the batches are shuffled again, all with one generator seeded from
    (seed, epoch). Its draws are those that shuffling Python lists of pairs makes, so a
    seed gives the batches it gave when the pairs were batched as lists.
    """
    rng = random.Random(f"{seed}:{epoch}")
    sources, targets = pairs.source_lengths, pairs.target_lengths
    order = _by_length(_shuffled_range(len(sources), rng), sources, targets)
    bounds = _batch_bounds(_padded_sizes(order, sources, targets), batch_tokens, max_sentences)
    return EpochBatches(order, bounds, _shuffled_range(len(bounds) - 1, rng))


def _shuffled_range(count: int, rng: random.Random) -> np.ndarray:
    """0 … count - 1 in the order `rng.shuffle` puts a list of them.

    The permutation a shuffle makes depends only on the sequence's length, so shuffling
    an `array.array` of C ints gives the list's order, faster and with no Python int
    kept per element; numpy then reads the array in place.
    """
    typecode = "i" if count < 2**31 else "q"
    numbers = array(typecode, [0]) * count
    view = np.frombuffer(numbers, dtype=typecode)
    view[:] = np.arange(count, dtype=typecode)
    rng.shuffle(numbers)
    return view


def _by_length(order: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """`order` stably sorted by (source length, target length) of the pairs it names."""
    return order[np.argsort(_length_keys(order, sources, targets), kind="stable")]


def _length_keys(order: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """One key per pair of `order` that sorts as (source length, target length) does.

    The key, source length × (longest target + 1) + target length, takes the narrowest
    unsigned type that holds it: a few bytes a pair, and keys of 16 bits or fewer are
    radix-sorted.
    """
    span = int(targets.max(initial=0)) + 1
    key_type = np.min_scalar_type((int(sources.max(initial=0)) + 1) * span)
    keys = sources.astype(key_type)[order]
    keys *= span
    keys += targets.astype(key_type)[order]
    return keys


def _padded_sizes(order: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Padded tokens each pair of `order` needs in a batch row: its longer side, plus
    </s> (source, decoder output) or <s> (decoder input)."""
    return (np.maximum(sources, targets).astype(np.int32) + 1)[order]


def _batch_bounds(sizes: np.ndarray, batch_tokens: int, max_sentences: int | None) -> np.ndarray:
    """Where each batch starts in `sizes` (padded sizes in batching order), then the end.

    A batch takes pairs in order while its longest size times its number of pairs stays
    within `batch_tokens` and it has at most `max_sentences` pairs. That product never
    falls as a batch grows, so the pairs that fit from a start are a prefix of a window
    no longer than the cap, or than the budget over the first pair's size, which numpy
    measures at once.
    """
    bounds = array("q", [0])
    start, total = 0, len(sizes)
    cap = total if max_sentences is None else max_sentences
    while start < total:
        window = sizes[start : start + max(1, min(cap, batch_tokens // int(sizes[start])))]
        fits = np.maximum.accumulate(window) * np.arange(1, len(window) + 1) <= batch_tokens
        start += max(1, int(np.count_nonzero(fits)))
        bounds.append(start)
    return np.frombuffer(bounds, dtype=np.int64)
