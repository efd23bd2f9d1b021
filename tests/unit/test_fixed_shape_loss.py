"""The decoder loss on padded shapes, which a GPU replays as CUDA graphs, computed here
eagerly: the padding must change neither the loss nor any gradient."""

import pytest
import torch

from rnnsearch.kernels.cuda_graphs import POSITION_MULTIPLE, ROW_MULTIPLE, DecoderLoss, fixed_shape_inputs
from rnnsearch.text.batches import make_batch
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model

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
    loss = DecoderLoss(model, 0.1)(*inputs)
    grads = torch.autograd.grad(loss, parameters, allow_unused=True)

    assert int((tgt_out != 0).sum()) == tokens
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    for (name, _), grad, expected_grad in zip(model.named_parameters(), grads, expected_grads, strict=True):
        if expected_grad is None:
            assert grad is None or not grad.any(), name
        else:
            assert torch.allclose(grad, expected_grad, rtol=1e-4, atol=1e-5), name


def test_padded_sources_stop_where_an_alignment_model_stops_reaching():
    model = tiny_model(vocab=20, seed=3)
    batch = make_batch([([4] * 9, [5, 6])])  # 10 source positions with </s>
    annotations, summary = model.encoder(batch.src, batch.src_lengths)
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=12)[0].size(1) == 12
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=10)[0].size(1) == 10
    assert fixed_shape_inputs(annotations, summary, batch, longest_source=40)[0].size(1) == 16
