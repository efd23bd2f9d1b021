"""Tests for rnnsearch.text.batches: token-budget bucketing, reproducible order, padded tensors."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from rnnsearch.text.batches import Pair, epoch_batches, make_batch
from rnnsearch.text.subwords import BOS, EOS, PAD

BUDGET = 400


def random_pairs(count: int = 500, seed: int = 0, max_len: int = 40) -> list[Pair]:
    """Source lengths uniform in 1..max_len; target lengths near them, as in real parallel text."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for _ in range(count):
        src_len = rng.randint(1, max_len)
        tgt_len = min(max_len, max(1, src_len + rng.randint(-4, 4)))
        pairs.append(([rng.randint(4, 999) for _ in range(src_len)], [rng.randint(4, 999) for _ in range(tgt_len)]))
    return pairs


def padded_size(pairs: list[Pair], batch: list[int]) -> int:
    return max(max(len(pairs[i][0]), len(pairs[i][1])) + 1 for i in batch) * len(batch)


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return random_pairs()


@pytest.fixture(scope="module")
def batches(pairs: list[Pair]) -> list[list[int]]:
    return epoch_batches(pairs, batch_tokens=BUDGET, max_sentences=None, seed=1, epoch=0)


def test_every_index_exactly_once(pairs: list[Pair], batches: list[list[int]]) -> None:
    counts = Counter(i for batch in batches for i in batch)
    assert sorted(counts) == list(range(len(pairs)))
    assert set(counts.values()) == {1}
    assert all(batch for batch in batches)


def test_batches_respect_token_budget(pairs: list[Pair], batches: list[list[int]]) -> None:
    for batch in batches:
        assert len(batch) == 1 or padded_size(pairs, batch) <= BUDGET


def test_batches_are_reasonably_full(pairs: list[Pair], batches: list[list[int]]) -> None:
    total = sum(padded_size(pairs, batch) for batch in batches)
    assert total / (len(batches) * BUDGET) > 0.75


def test_same_seed_and_epoch_give_same_batches(pairs: list[Pair], batches: list[list[int]]) -> None:
    assert epoch_batches(pairs, BUDGET, None, seed=1, epoch=0) == batches


def test_other_epoch_or_seed_changes_order(pairs: list[Pair], batches: list[list[int]]) -> None:
    next_epoch = epoch_batches(pairs, BUDGET, None, seed=1, epoch=1)
    other_seed = epoch_batches(pairs, BUDGET, None, seed=2, epoch=0)
    assert next_epoch != batches
    assert other_seed != batches
    assert [batch[0] for batch in next_epoch[:10]] != [batch[0] for batch in batches[:10]]
    assert sorted(i for batch in next_epoch for i in batch) == list(range(len(pairs)))


def test_batch_order_is_not_by_length(pairs: list[Pair], batches: list[list[int]]) -> None:
    longest = [max(len(pairs[i][0]) for i in batch) for batch in batches]
    assert longest != sorted(longest)
    assert longest != sorted(longest, reverse=True)


def test_max_sentences_caps_batches(pairs: list[Pair]) -> None:
    capped = epoch_batches(pairs, BUDGET, max_sentences=8, seed=1, epoch=0)
    assert max(len(batch) for batch in capped) == 8
    assert sorted(i for batch in capped for i in batch) == list(range(len(pairs)))
    for batch in capped:
        assert len(batch) == 1 or padded_size(pairs, batch) <= BUDGET


def test_pair_over_budget_gets_its_own_batch() -> None:
    long_pair: Pair = (list(range(4, 34)), list(range(4, 24)))
    short_pairs: list[Pair] = [([5, 6], [7]) for _ in range(6)]
    pairs = short_pairs[:3] + [long_pair] + short_pairs[3:]
    batches = epoch_batches(pairs, batch_tokens=12, max_sentences=None, seed=3, epoch=0)
    assert [3] in batches
    assert sorted(i for batch in batches for i in batch) == list(range(len(pairs)))
    for batch in batches:
        assert batch == [3] or padded_size(pairs, batch) <= 12


def test_padding_is_small(pairs: list[Pair], batches: list[list[int]]) -> None:
    padded_tgt = real_tgt = padded_src = real_src = 0
    for batch in batches:
        tensors = make_batch([pairs[i] for i in batch])
        padded_tgt += tensors.tgt_out.numel()
        real_tgt += int((tensors.tgt_out != PAD).sum())
        padded_src += tensors.src.numel()
        real_src += int((tensors.src != PAD).sum())
    assert real_tgt == sum(len(t) + 1 for _, t in pairs)
    assert padded_tgt / real_tgt < 1.3
    assert padded_src / real_src < 1.3


SMALL: list[Pair] = [([4, 5, 6], [7, 8]), ([9], [10, 11, 12, 13]), ([14, 15], [16])]


def test_make_batch_source_rows() -> None:
    batch = make_batch(SMALL)
    assert batch.src.dtype == torch.long
    assert batch.src.shape == (3, 4)
    assert batch.src_lengths.tolist() == [4, 2, 3]
    for row, (source, _) in enumerate(SMALL):
        length = int(batch.src_lengths[row])
        assert batch.src[row, : length - 1].tolist() == source
        assert int(batch.src[row, length - 1]) == EOS
        assert (batch.src[row, length:] == PAD).all()


def test_make_batch_target_rows() -> None:
    batch = make_batch(SMALL)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (3, 5)
    assert (batch.tgt_in[:, 0] == BOS).all()
    for row, (_, target) in enumerate(SMALL):
        n = len(target)
        assert batch.tgt_in[row, 1 : n + 1].tolist() == target
        assert batch.tgt_out[row, :n].tolist() == target
        assert int(batch.tgt_out[row, n]) == EOS
        assert (batch.tgt_out[row, n + 1 :] == PAD).all()
        assert (batch.tgt_in[row, n + 1 :] == PAD).all()
    real = batch.tgt_in[:, 1:] != PAD
    assert torch.equal(batch.tgt_in[:, 1:][real], batch.tgt_out[:, :-1][real])
    assert torch.equal(batch.tgt_in != PAD, batch.tgt_out != PAD)
    assert batch.target_tokens == sum(len(t) + 1 for _, t in SMALL)


def test_make_batch_teacher_forcing_shift_on_random_pairs(pairs: list[Pair], batches: list[list[int]]) -> None:
    for batch_indices in batches[:10]:
        batch = make_batch([pairs[i] for i in batch_indices])
        real = batch.tgt_in[:, 1:] != PAD
        assert torch.equal(batch.tgt_in[:, 1:][real], batch.tgt_out[:, :-1][real])
        lengths = torch.tensor([len(pairs[i][1]) for i in batch_indices])
        assert torch.equal(batch.tgt_out.gather(1, lengths[:, None]).squeeze(1), torch.full_like(lengths, EOS))
