"""Batches of padded tensors, built from length-bucketed sentences under a token budget.

A source is a list of piece ids (text) or a (frames, features) float tensor (speech);
targets are always piece ids.

Sentences of similar length are batched together so little compute goes to padding;
the order of batches is shuffled with a generator seeded from (seed, epoch), so an
epoch's batches can be rebuilt exactly when training resumes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rnnsearch.text.subwords import BOS, EOS, PAD

Source = Sequence[int] | torch.Tensor
Pair = tuple[Source, Sequence[int]]


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


def pad(sequences: Sequence[Sequence[int]]) -> torch.Tensor:
    """(N, max length) long tensor of `sequences`, right-padded with PAD."""
    out = torch.full((len(sequences), max(len(s) for s in sequences)), PAD, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        out[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return out


def source_tensors(sources: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded sources with </s> appended, and their lengths."""
    with_eos = [list(s) + [EOS] for s in sources]
    return pad(with_eos), torch.tensor([len(s) for s in with_eos], dtype=torch.long)


def vector_tensors(sources: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, frames, F) zero-padded feature vectors, and the real numbers of frames."""
    lengths = torch.tensor([len(s) for s in sources], dtype=torch.long)
    out = sources[0].new_zeros(len(sources), int(lengths.max()), sources[0].size(1))
    for row, source in enumerate(sources):
        out[row, : len(source)] = source
    return out, lengths


def make_batch(pairs: Sequence[Pair]) -> Batch:
    sources = [s for s, _ in pairs]
    src, src_lengths = vector_tensors(sources) if isinstance(sources[0], torch.Tensor) else source_tensors(sources)
    return Batch(
        src=src,
        src_lengths=src_lengths,
        tgt_in=pad([[BOS, *t] for _, t in pairs]),
        tgt_out=pad([[*t, EOS] for _, t in pairs]),
    )


def _padded_size(pair: Pair) -> int:
    return max(len(pair[0]), len(pair[1])) + 1


def bucket_indices(
    pairs: Sequence[Pair], batch_tokens: int, max_sentences: int | None, rng: random.Random
) -> list[list[int]]:
    """Groups of pair indices, each filling at most `batch_tokens` padded tokens.

    Pairs are shuffled, sorted by length (ties keep the shuffled order), cut into
    batches under the budget, and the batches are shuffled again.
    """
    order = list(range(len(pairs)))
    rng.shuffle(order)
    order.sort(key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        size = _padded_size(pairs[index])
        grown = max(longest, size)
        full = max_sentences is not None and len(current) >= max_sentences
        if current and (grown * (len(current) + 1) > batch_tokens or full):
            batches.append(current)
            current, grown = [], size
        current.append(index)
        longest = grown
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def epoch_batches(
    pairs: Sequence[Pair], batch_tokens: int, max_sentences: int | None, seed: int, epoch: int
) -> list[list[int]]:
    """The batches of one epoch, the same for the same (seed, epoch)."""
    return bucket_indices(pairs, batch_tokens, max_sentences, random.Random(f"{seed}:{epoch}"))
