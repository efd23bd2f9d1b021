"""The decoder loss on padded shapes, which a GPU replays as CUDA graphs, computed here
eagerly: the padding must change neither the loss nor any gradient, for every term of
the objective."""

import pytest
import torch

from rnnsearch.text.batches import make_batch
from rnnsearch.training import loss
from rnnsearch.training.graphed_loss import POSITION_MULTIPLE, ROW_MULTIPLE, DecoderLoss, fixed_shape_inputs
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model
from tests.unit.test_guided_loss import pairs_and_links

DECODERS = {
    "bahdanau-gru": {},
    "luong": {"wiring": "luong"},
    "luong-input-feeding-lstm": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
    "bahdanau-lstm-2-layers": {"cell": "lstm", "layers": 2},
}


ATTENTIONS = {
    "additive": {},
    "additive-coverage": {"coverage": True},
    "location": {"score": "location"},
    "none": {"score": "none"},
}


@pytest.mark.parametrize("attention", ATTENTIONS.values(), ids=ATTENTIONS.keys())
@pytest.mark.parametrize("decoder", DECODERS.values(), ids=DECODERS.keys())
def test_the_decoder_loss_on_padded_shapes_equals_the_sequence_loss(decoder, attention):
    """With coverage, padded rows and positions must leave C and its gradients alone too."""
    model = tiny_model(vocab=20, seed=3, decoder=decoder, **attention).train()
    sources = random_sources(13, 20, seed=7, min_len=2, max_len=10)
    targets = random_sources(13, 20, seed=8, min_len=2, max_len=12)
    batch = make_batch(list(zip(sources, targets)))
    parameters = list(model.parameters())
    expected, tokens = sequence_loss(model, batch, Objective(0.1))
    expected_grads = torch.autograd.grad(expected, parameters, allow_unused=True)

    annotations, summary = model.encoder(batch.src, batch.src_lengths)
    inputs = fixed_shape_inputs(annotations, summary, batch, longest_source=32)
    padded_annotations, _, padding, tgt_in, tgt_out = inputs
    assert padded_annotations.size(0) == ROW_MULTIPLE > batch.src.size(0)
    assert padded_annotations.size(1) % POSITION_MULTIPLE == 0 and tgt_in.size(1) % POSITION_MULTIPLE == 0
    assert tgt_in.size(1) > batch.tgt_in.size(1) and bool(padding[13:].all())
    padded = DecoderLoss(model, Objective(0.1))(*inputs)
    assert int((tgt_out != 0).sum()) == tokens
    _assert_same_loss_and_gradients(model, padded, expected, expected_grads)


def _assert_same_loss_and_gradients(model, found, expected, expected_grads):
    grads = torch.autograd.grad(found, list(model.parameters()), allow_unused=True)
    assert found.item() == pytest.approx(expected.item(), rel=1e-5)
    for (name, _), grad, expected_grad in zip(model.named_parameters(), grads, expected_grads, strict=True):
        if expected_grad is None:
            assert grad is None or not grad.any(), name
        else:
            assert torch.allclose(grad, expected_grad, rtol=1e-4, atol=1e-5), name


ALIGNING = {name: attention for name, attention in ATTENTIONS.items() if name != "none"}


@pytest.mark.parametrize("attention", ALIGNING.values(), ids=ALIGNING.keys())
def test_the_guided_objective_on_padded_shapes_equals_the_eager_one(attention):
    """The graphs replay the eager steps' own loss function, guided term included: links
    padded with zero rows and columns, and a batch without links read as zeros."""
    model = tiny_model(vocab=23, seed=4, decoder={"cell": "lstm"}, **attention).train()
    pairs, links = pairs_and_links(11, 23, seed=6)
    objective = Objective(0.1, 0.7)
    for batch in (make_batch(pairs, links=links), make_batch(pairs, links=[links[1]] * len(pairs))):
        expected, _ = sequence_loss(model, batch, objective)
        expected_grads = torch.autograd.grad(expected, list(model.parameters()), allow_unused=True)
        annotations, summary = model.encoder(batch.src, batch.src_lengths)
        shape = (annotations.size(0), batch.tgt_out.size(1), annotations.size(1))
        dense = loss.guide_links(batch, objective, shape)
        dense = torch.zeros(shape) if dense is None else dense
        inputs = fixed_shape_inputs(annotations, summary, batch, longest_source=32, links=dense)
        assert inputs[-1].shape == (ROW_MULTIPLE, *inputs[3].shape[1:], inputs[0].size(1))
        _assert_same_loss_and_gradients(model, DecoderLoss(model, objective)(*inputs), expected, expected_grads)


def test_padded_sources_stop_where_an_alignment_model_stops_reaching():
    model = tiny_model(vocab=20, seed=3)
    batch = make_batch([([4] * 9, [5, 6])])  # 10 source positions with </s>
    annotations, summary = model.encoder(batch.src, batch.src_lengths)
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=12)[0].size(1) == 12
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=10)[0].size(1) == 10
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=40)[0].size(1) == 16
