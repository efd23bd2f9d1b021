import torch

from rnnsearch.model.attention import masked_softmax
from rnnsearch.text.batches import source_tensors
from tests.conftest import random_sources


def test_weights_sum_to_one_and_padding_gets_exactly_zero(model):
    src, lengths = source_tensors(random_sources(16, 12, seed=1))
    state = model.encode(src, lengths)
    _, weights = model.decoder.attention(state.top, state)
    real = ~state.padding
    assert torch.allclose(weights.sum(1), torch.ones(16), atol=1e-6)
    assert torch.all(weights[state.padding] == 0.0)
    assert torch.all(weights[real] > 0.0)


def test_sentence_padded_in_a_batch_gets_the_same_alignment_as_alone(model):
    sources = random_sources(8, 12, seed=2, min_len=2, max_len=12)
    short = min(range(8), key=lambda i: len(sources[i]))
    src, lengths = source_tensors(sources)
    tgt_in = torch.randint(4, 12, (8, 6))
    _, batched = model(src, lengths, tgt_in)
    alone_src, alone_lengths = source_tensors([sources[short]])
    _, alone = model(alone_src, alone_lengths, tgt_in[short : short + 1])
    n = int(alone_lengths[0])
    assert batched.size(2) > n
    assert torch.allclose(batched[short, :, :n], alone[0], atol=1e-5)
    assert torch.all(batched[short, :, n:] == 0.0)


def test_row_with_every_position_masked_stays_finite():
    energies = torch.randn(3, 5)
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[1] = True
    padding[2, 3:] = True
    weights = masked_softmax(energies, padding)
    assert torch.isfinite(weights).all()
    assert torch.all(weights[2, 3:] == 0.0)
    assert torch.allclose(weights.sum(1), torch.ones(3))


def test_gradients_reach_the_alignment_model(model):
    model.train()
    src, lengths = source_tensors(random_sources(4, 12, seed=3))
    readout, _ = model(src, lengths, torch.randint(4, 12, (4, 5)))
    model.logits(readout).sum().backward()
    score = model.decoder.attention.score
    for parameter in score.parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0
