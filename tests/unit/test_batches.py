"""Tests for rnnsearch.text.batches: token-budget bucketing, reproducible order, padded tensors."""

from __future__ import annotations

import random
import tracemalloc
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from rnnsearch.text.batches import EpochBatches, InMemoryPairs, Pair, epoch_batches, make_batch
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


def as_lists(batches: EpochBatches) -> list[list[int]]:
    return [indices.tolist() for indices in batches]


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return random_pairs()


@pytest.fixture(scope="module")
def corpus(pairs: list[Pair]) -> InMemoryPairs:
    return InMemoryPairs(pairs)


@pytest.fixture(scope="module")
def batches(corpus: InMemoryPairs) -> list[list[int]]:
    return as_lists(epoch_batches(corpus, batch_tokens=BUDGET, max_sentences=None, seed=1, epoch=0))


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


def test_same_seed_and_epoch_give_same_batches(corpus: InMemoryPairs, batches: list[list[int]]) -> None:
    assert as_lists(epoch_batches(corpus, BUDGET, None, seed=1, epoch=0)) == batches


def test_other_epoch_or_seed_changes_order(pairs: list[Pair], corpus: InMemoryPairs, batches: list[list[int]]) -> None:
    next_epoch = as_lists(epoch_batches(corpus, BUDGET, None, seed=1, epoch=1))
    other_seed = as_lists(epoch_batches(corpus, BUDGET, None, seed=2, epoch=0))
    assert next_epoch != batches
    assert other_seed != batches
    assert [batch[0] for batch in next_epoch[:10]] != [batch[0] for batch in batches[:10]]
    assert sorted(i for batch in next_epoch for i in batch) == list(range(len(pairs)))


def test_batch_order_is_not_by_length(pairs: list[Pair], batches: list[list[int]]) -> None:
    longest = [max(len(pairs[i][0]) for i in batch) for batch in batches]
    assert longest != sorted(longest)
    assert longest != sorted(longest, reverse=True)


def test_max_sentences_caps_batches(pairs: list[Pair], corpus: InMemoryPairs) -> None:
    capped = as_lists(epoch_batches(corpus, BUDGET, max_sentences=8, seed=1, epoch=0))
    assert max(len(batch) for batch in capped) == 8
    assert sorted(i for batch in capped for i in batch) == list(range(len(pairs)))
    for batch in capped:
        assert len(batch) == 1 or padded_size(pairs, batch) <= BUDGET


def test_pair_over_budget_gets_its_own_batch() -> None:
    long_pair: Pair = (list(range(4, 34)), list(range(4, 24)))
    short_pairs: list[Pair] = [([5, 6], [7]) for _ in range(6)]
    pairs = short_pairs[:3] + [long_pair] + short_pairs[3:]
    batches = as_lists(epoch_batches(InMemoryPairs(pairs), batch_tokens=12, max_sentences=None, seed=3, epoch=0))
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


def reference_batches(
    source_lengths: list[int],
    target_lengths: list[int],
    batch_tokens: int,
    max_sentences: int | None,
    seed: int,
    epoch: int,
) -> list[list[int]]:
    """The batching that Python lists of pairs had, written out plainly on lists of lengths:
    the batches that earlier runs saw, which the same seed must keep giving."""
    rng = random.Random(f"{seed}:{epoch}")
    order = list(range(len(source_lengths)))
    rng.shuffle(order)
    order.sort(key=lambda i: (source_lengths[i], target_lengths[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        size = max(source_lengths[index], target_lengths[index]) + 1
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


@dataclass
class Lengths:
    """Only the lengths of a corpus: all that batching reads."""

    source_lengths: np.ndarray
    target_lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.source_lengths)


def random_lengths(count: int, shortest: int, longest: int, seed: int, dtype: type = np.int32) -> Lengths:
    """Source lengths uniform in shortest..longest, targets within 4 of them."""
    rng = np.random.default_rng(seed)
    sources = rng.integers(shortest, longest + 1, count)
    targets = np.clip(sources + rng.integers(-4, 5, count), shortest, longest)
    return Lengths(sources.astype(dtype), targets.astype(dtype))


def assert_matches_reference(lengths: Lengths, batch_tokens: int, max_sentences: int | None, seed: int) -> None:
    sources, targets = lengths.source_lengths.tolist(), lengths.target_lengths.tolist()
    for epoch in range(3):
        expected = reference_batches(sources, targets, batch_tokens, max_sentences, seed, epoch)
        assert as_lists(epoch_batches(lengths, batch_tokens, max_sentences, seed, epoch)) == expected, epoch


@pytest.mark.parametrize(
    "count, longest, batch_tokens, max_sentences",
    [
        (0, 30, 400, None),  # no pairs, no batches
        (1, 30, 400, None),  # a single pair
        (1, 30, 10, None),  # a single pair over the budget
        (500, 40, 400, None),
        (500, 40, 400, 8),
        (2000, 4, 60, None),  # lengths 1..4: nearly every pair ties with hundreds of others
        (2000, 4, 60, 3),
        (300, 60, 40, None),  # most pairs over the budget, each in a batch of its own
        (1000, 200, 3000, 50),
        (1000, 40, 100_000, None),  # the whole corpus within one budget
    ],
)
def test_batches_equal_the_list_based_reference(
    count: int, longest: int, batch_tokens: int, max_sentences: int | None
) -> None:
    for seed in range(4):
        assert_matches_reference(random_lengths(count, 1, longest, seed), batch_tokens, max_sentences, seed)


def test_batches_equal_the_reference_on_random_settings() -> None:
    rng = random.Random(7)
    for seed in range(40):
        dtype = rng.choice([np.uint16, np.int32, np.int64])
        lengths = random_lengths(rng.choice([2, 17, 300, 1500]), rng.randint(0, 3), rng.randint(3, 120), seed, dtype)
        assert_matches_reference(lengths, rng.choice([1, 12, 150, 400, 4000]), rng.choice([None, 1, 5, 40]), seed)


def test_epoch_batches_are_numpy_views_of_one_index_array(corpus: InMemoryPairs) -> None:
    epoch = epoch_batches(corpus, BUDGET, None, seed=1, epoch=0)
    assert epoch.order.dtype == np.int32
    assert sorted(epoch.order.tolist()) == list(range(len(corpus)))
    assert [epoch[k].tolist() for k in range(len(epoch))] == as_lists(epoch)
    assert all(isinstance(indices, np.ndarray) and indices.dtype == np.int32 for indices in epoch)


def peak_bytes(count: int) -> int:
    """Peak bytes allocated (numpy's arrays included) while batching `count` pairs' lengths."""
    lengths = random_lengths(count, 1, 100, seed=0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        epoch_batches(lengths, 4000, None, seed=1, epoch=0)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_memory_grows_by_a_few_bytes_a_pair() -> None:
    """A list of Python ints costs over 36 bytes a pair; index arrays and sort keys, under 24."""
    count = 20_000
    per_pair = (peak_bytes(10 * count) - peak_bytes(count)) / (9 * count)
    assert per_pair <= 24, per_pair


def as_arrays(pairs: list[Pair]) -> list[Pair]:
    return [(array("i", s), array("i", t)) for s, t in pairs]


def as_views(dtype: type) -> Callable[[list[Pair]], list[Pair]]:
    """Pairs as views of one flat array of ids, as a memory-mapped dataset hands them out."""

    def views(pairs: list[Pair]) -> list[Pair]:
        flat = np.array([i for s, t in pairs for i in (*s, *t)], dtype=dtype)
        ends = np.cumsum([n for s, t in pairs for n in (len(s), len(t))]).tolist()
        sides = [flat[start:end] for start, end in zip([0, *ends], ends)]
        return list(zip(sides[0::2], sides[1::2]))

    return views


@pytest.mark.parametrize("convert", [as_arrays, as_views(np.uint16), as_views(np.int32)])
def test_make_batch_is_the_same_from_arrays_and_numpy_views(
    pairs: list[Pair], batches: list[list[int]], convert: Callable[[list[Pair]], list[Pair]]
) -> None:
    converted = convert(pairs)
    for batch_indices in [*batches[:5], list(range(len(pairs)))]:
        expected = make_batch([pairs[i] for i in batch_indices])
        batch = make_batch([converted[i] for i in batch_indices])
        for name in ("src", "src_lengths", "tgt_in", "tgt_out"):
            assert getattr(batch, name).dtype == torch.long
            assert torch.equal(getattr(batch, name), getattr(expected, name)), name


def test_make_batch_of_feature_vectors() -> None:
    frames = [torch.randn(n, 3) for n in (4, 2, 5)]
    targets = as_views(np.uint16)([([4], [5, 6]), ([7], [8]), ([9], [10, 11, 12])])
    batch = make_batch([(f, t) for f, (_, t) in zip(frames, targets)])
    assert batch.src.shape == (3, 5, 3)
    assert batch.src_lengths.tolist() == [4, 2, 5]
    assert torch.equal(batch.src[1, :2], frames[1]) and (batch.src[1, 2:] == 0).all()
    assert batch.tgt_out.tolist() == [[5, 6, EOS, PAD], [8, EOS, PAD, PAD], [10, 11, 12, EOS]]
    assert batch.tgt_in.tolist() == [[BOS, 5, 6, PAD], [BOS, 8, PAD, PAD], [BOS, 10, 11, 12]]
