"""The model learns: reversing random sequences (lengths 5–25) needs the alignment model.

The budget is a number of steps, not of seconds, so a loaded or slower machine takes
longer but reaches the same model (BENCHMARKS.md has the steps it took on each CPU)."""

import random

import pytest
import torch

from rnnsearch import kernels
from rnnsearch.model.seq2seq import build_model
from rnnsearch.model.settings import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from rnnsearch.search import max_output_lengths
from rnnsearch.search.greedy import greedy_search
from rnnsearch.text.batches import InMemoryPairs, epoch_batches, make_batch, source_tensors
from rnnsearch.training.trainer import training_step

pytestmark = pytest.mark.learning

VOCAB = 20
TARGET = 0.95  # exact-match accuracy on held-out sequences
CHECK_EVERY = 50
MAX_STEPS = 1000


def reversal_pairs(count: int, rng: random.Random) -> list[tuple[list[int], list[int]]]:
    pairs = []
    for _ in range(count):
        sequence = [rng.randrange(4, VOCAB) for _ in range(rng.randint(5, 25))]
        pairs.append((sequence, sequence[::-1]))
    return pairs


def exact_match(model, pairs) -> float:
    model.eval()
    src, lengths = source_tensors([s for s, _ in pairs])
    hypotheses = greedy_search(model, src, lengths, max_lengths=max_output_lengths(lengths, 1.0, 2))
    model.train()
    return sum(h[0].tokens == t for h, (_, t) in zip(hypotheses, pairs)) / len(pairs)


def test_learns_to_reverse_sequences_within_a_step_budget():
    torch.manual_seed(0)
    rng = random.Random(0)
    train, test = reversal_pairs(20000, rng), reversal_pairs(200, rng)
    config = ModelConfig(
        embedding_size=32,
        encoder=EncoderConfig(hidden_size=64),
        attention=AttentionConfig(size=64),
        decoder=DecoderConfig(hidden_size=128, readout_size=64),
        dropout=0.0,
    )
    model = build_model(config, VOCAB, VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    corpus = InMemoryPairs(train)
    step, accuracy, epoch = 0, 0.0, 0
    with kernels.use(kernels.choose("cpu", purpose="train")):  # as the trainer trains
        while accuracy < TARGET and step < MAX_STEPS:
            for indices in epoch_batches(corpus, 3000, None, seed=0, epoch=epoch):
                training_step(model, optimizer, make_batch([train[i] for i in indices]), 0.0, 1.0)
                step += 1
                if step % CHECK_EVERY == 0:
                    accuracy = exact_match(model, test)
                    if accuracy >= TARGET or step >= MAX_STEPS:
                        break
            epoch += 1
    assert accuracy >= TARGET, (step, accuracy)
