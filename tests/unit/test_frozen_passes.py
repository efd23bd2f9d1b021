"""The frozen passes train-aligner keeps (rnnsearch/training/frozen_passes.py): a batch's
kept pass is the model's own pass of that batch, and the memory they take is counted
right however long the pairs."""

import numpy as np
import pytest
import torch

from rnnsearch.config.train import TrainConfig
from rnnsearch.text.batches import InMemoryPairs, make_batch
from rnnsearch.training.frozen_passes import FLOAT_BYTES, OFFSET_BYTES, FrozenPasses
from tests.conftest import random_sources, tiny_model

VOCAB = 12


def corpus(count: int, seed: int) -> InMemoryPairs:
    sources = random_sources(count, VOCAB, seed=seed, min_len=2)
    targets = random_sources(count, VOCAB, seed=seed + 1, min_len=2)
    return InMemoryPairs(list(zip(sources, targets, strict=True)))


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("kept", ["all", "some"])
def test_a_batchs_kept_pass_is_the_models_pass_of_that_batch(swapped, kept):
    model = tiny_model(VOCAB).eval()
    pairs = corpus(24, seed=3)
    options = TrainConfig(batch_tokens=60)
    budget = 2**30 if kept == "all" else FrozenPasses(model, pairs, options, budget=2**30).kept_bytes / 2
    passes = FrozenPasses(model, pairs, options, budget=budget, swapped=swapped)
    assert (passes.kept_pairs == len(pairs)) == (kept == "all") and passes.kept_pairs > 0
    for indices in (np.array([5, 0, 17, 11]), np.array([23, 2, 9])):  # batches of other epochs than the first
        chosen = [pairs[int(i)] for i in indices]
        batch = make_batch([(t, s) for s, t in chosen] if swapped else chosen)
        readout, weights, source = passes.forced(indices, batch)
        with torch.no_grad():
            expected, expected_weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        real = batch.tgt_out != 0
        torch.testing.assert_close(readout[real], expected[real])
        torch.testing.assert_close(weights[real], expected_weights[real])
        torch.testing.assert_close(source.padding, state.padding, rtol=0, atol=0)
        torch.testing.assert_close(source.annotations[~source.padding], state.annotations[~state.padding])
        assert not readout[~real].any() and not weights[~real].any() and not source.annotations[source.padding].any()


def test_the_memory_of_long_pairs_is_counted_in_full():
    """Lengths are read as uint16 from a prepared corpus: their products must not wrap."""
    model = tiny_model(VOCAB).eval()
    pairs = corpus(4, seed=5)
    pairs.source_lengths = np.array([300, 2, 500, 3], dtype=np.uint16)
    pairs.target_lengths = np.array([400, 2, 600, 3], dtype=np.uint16)
    readout, annotation = model.decoder.output_layer.in_features, model.encoder.annotation_size
    each = [
        FLOAT_BYTES * ((t + 1) * readout + (t + 1) * (s + 1) + (s + 1) * annotation) + OFFSET_BYTES
        for s, t in zip(pairs.source_lengths.tolist(), pairs.target_lengths.tolist(), strict=True)
    ]
    assert FrozenPasses(model, pairs, TrainConfig(), budget=2**30).kept_bytes == sum(each)
    room = FrozenPasses(model, pairs, TrainConfig(), budget=each[0] + each[1] + each[2] - 1)
    assert room.kept_pairs == 2 and room.kept_bytes == each[0] + each[1]
