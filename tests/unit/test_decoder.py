import pytest
import torch

from rnnsearch.model.scores import SCORES
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS
from tests.conftest import random_sources, tiny_model

ARCHITECTURES = {
    "bahdanau": ({}, {}),
    "bahdanau-lstm-2-layers": ({}, {"cell": "lstm", "layers": 2}),
    "bahdanau-tied": ({}, {"tied_embeddings": True}),
    "unidirectional-lstm-encoder-3-layers": ({"cell": "lstm", "bidirectional": False, "layers": 3}, {}),
    "luong": ({}, {"wiring": "luong"}),
    "luong-input-feeding": ({}, {"wiring": "luong", "input_feeding": True}),
    "luong-lstm-2-layers": ({}, {"wiring": "luong", "cell": "lstm", "layers": 2}),
    "luong-input-feeding-lstm-4-layers-maxout": (
        {"layers": 2},
        {"wiring": "luong", "input_feeding": True, "cell": "lstm", "layers": 4, "readout": "maxout"},
    ),
}


def assert_teacher_forcing_equals_single_steps(model, vocab: int = 12):
    src, lengths = source_tensors(random_sources(5, vocab, seed=4))
    targets = torch.randint(4, vocab, (5, 7))
    tgt_in = torch.cat([torch.full((5, 1), BOS), targets[:, :-1]], 1)
    with torch.no_grad():
        readout_all, weights_all = model(src, lengths, tgt_in)
        forced = model.logits(readout_all).log_softmax(-1)
        state = model.encode(src, lengths)
        for i in range(tgt_in.size(1)):
            log_probs, state, weights = model.step(tgt_in[:, i], state)
            assert torch.allclose(log_probs, forced[:, i], atol=1e-5)
            if not model.has_alignment:
                assert weights is None and weights_all is None
            else:
                assert torch.allclose(weights, weights_all[:, i], atol=1e-6)


@pytest.mark.parametrize(
    ("score", "readout"), [*((score, "maxout") for score in [*SCORES, "none"]), ("additive", "tanh")]
)
def test_teacher_forcing_equals_a_loop_of_single_steps(score, readout):
    """For every alignment model, the fixed-context baseline and both readouts."""
    assert_teacher_forcing_equals_single_steps(tiny_model(readout=readout, score=score))


@pytest.mark.parametrize("score", [*SCORES, "none"])
@pytest.mark.parametrize("input_feeding", [False, True])
def test_luong_teacher_forcing_equals_single_steps_for_every_score(score, input_feeding):
    """Without input feeding, training attends to all positions in one batched product."""
    model = tiny_model(score=score, decoder={"wiring": "luong", "input_feeding": input_feeding})
    assert_teacher_forcing_equals_single_steps(model)


@pytest.mark.parametrize(("encoder", "decoder"), ARCHITECTURES.values(), ids=ARCHITECTURES.keys())
def test_teacher_forcing_equals_single_steps_for_every_architecture(encoder, decoder):
    assert_teacher_forcing_equals_single_steps(tiny_model(encoder=encoder, decoder=decoder))


@pytest.mark.parametrize(("encoder", "decoder"), ARCHITECTURES.values(), ids=ARCHITECTURES.keys())
def test_every_architecture_trains_every_parameter(encoder, decoder):
    model = tiny_model(encoder=encoder, decoder=decoder).train()
    src, lengths = source_tensors(random_sources(4, 12, seed=2))
    readout, _ = model(src, lengths, torch.randint(4, 12, (4, 5)))
    model.logits(readout).log_softmax(-1).sum().backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name
        assert parameter.grad.abs().sum() > 0, name


def test_tied_embeddings_share_one_matrix():
    model = tiny_model(decoder={"tied_embeddings": True})
    assert model.decoder.output_layer.weight is model.decoder.embedding.weight
    untied = tiny_model()
    assert sum(p.numel() for p in untied.parameters()) - sum(p.numel() for p in model.parameters()) == 12 * 8


def test_initial_state_comes_from_the_backward_rnn_at_the_first_word(model):
    sources = random_sources(3, 12, seed=5, min_len=3)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, summary = model.encoder(src, lengths)
        hidden = model.encoder.rnn.hidden_size
        assert torch.allclose(summary, annotations[:, 0, hidden:], atol=1e-6)
        state = model.encode(src, lengths)
        assert torch.allclose(state.top, torch.tanh(model.decoder.init_layer(summary)))


def test_a_unidirectional_encoder_starts_the_decoder_from_its_last_word():
    model = tiny_model(encoder={"bidirectional": False}, decoder={"layers": 2})
    sources = random_sources(4, 12, seed=6, min_len=2)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, summary = model.encoder(src, lengths)
        assert annotations.size(2) == model.encoder.rnn.hidden_size
        last = annotations[torch.arange(4), lengths - 1]
        assert torch.allclose(summary, last, atol=1e-6)
        state = model.encode(src, lengths)
        assert state.state.shape == (4, 2, 16)
        assert torch.allclose(state.state.flatten(1), torch.tanh(model.decoder.init_layer(summary)))
