import pytest
import torch

from rnnsearch.model.scores import SCORES
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS
from tests.conftest import random_sources, tiny_model


@pytest.mark.parametrize(
    ("score", "readout"), [*((score, "maxout") for score in [*SCORES, "none"]), ("additive", "tanh")]
)
def test_teacher_forcing_equals_a_loop_of_single_steps(score, readout):
    """For every alignment model, the fixed-context baseline and both readouts."""
    model = tiny_model(readout=readout, score=score)
    src, lengths = source_tensors(random_sources(5, 12, seed=4))
    targets = torch.randint(4, 12, (5, 7))
    tgt_in = torch.cat([torch.full((5, 1), BOS), targets[:, :-1]], 1)
    with torch.no_grad():
        readout_all, weights_all = model(src, lengths, tgt_in)
        forced = model.logits(readout_all).log_softmax(-1)
        state = model.encode(src, lengths)
        for i in range(tgt_in.size(1)):
            log_probs, state, weights = model.step(tgt_in[:, i], state)
            assert torch.allclose(log_probs, forced[:, i], atol=1e-5)
            if score == "none":
                assert weights is None and weights_all is None
            else:
                assert torch.allclose(weights, weights_all[:, i], atol=1e-6)


def test_initial_state_comes_from_the_backward_rnn_at_the_first_word(model):
    sources = random_sources(3, 12, seed=5, min_len=3)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, backward_first = model.encoder(src, lengths)
        hidden = model.encoder.rnn.hidden_size
        assert torch.allclose(backward_first, annotations[:, 0, hidden:], atol=1e-6)
        state = model.encode(src, lengths)
        assert torch.allclose(state.state, torch.tanh(model.decoder.init_layer(backward_first)))
