"""The decoder loss and the alignment module's loss on padded shapes, which a GPU replays
as CUDA graphs, computed here eagerly: the padding must change neither the loss nor any
gradient, for every term of the objective."""

import pytest
import torch

from rnnsearch.text.batches import make_batch
from rnnsearch.training.frozen_passes import KeptSource
from rnnsearch.training.graphed_loss import (
    POSITION_MULTIPLE,
    ROW_MULTIPLE,
    VOCABULARY_MULTIPLE,
    DecoderLoss,
    Grid,
    ModuleLoss,
    fixed_shape_inputs,
    module_inputs,
    padded_pass,
)
from rnnsearch.training.loss import Objective, frozen_pass, sequence_loss
from tests.conftest import random_sources, tiny_model, tiny_model_with_module
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
    inputs = fixed_shape_inputs(annotations, summary, batch, 32, Objective(0.1))
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
        inputs = fixed_shape_inputs(annotations, summary, batch, 32, objective)
        assert inputs[-1].shape == (ROW_MULTIPLE, *inputs[3].shape[1:], inputs[0].size(1))
        _assert_same_loss_and_gradients(model, DecoderLoss(model, objective)(*inputs), expected, expected_grads)


def test_padded_sources_stop_where_an_alignment_model_stops_reaching():
    model = tiny_model(vocab=20, seed=3)
    batch = make_batch([([4] * 9, [5, 6])])  # 10 source positions with </s>
    annotations, summary = model.encoder(batch.src, batch.src_lengths)
    for longest, padded in ((12, 12), (10, 10), (40, 16)):
        assert fixed_shape_inputs(annotations, summary, batch, longest, Objective())[0].size(1) == padded


def _with_module(*, null: bool, seed: int = 4):
    """A tiny model with a module whose weights are random, as a trained one's are."""
    return tiny_model_with_module(23, seed=seed, null=null, decoder={"cell": "lstm"}).train()


def _module_batches():
    """A batch with links (one pair without any), the same pairs with one pair's links
    each, and the same pairs with none."""
    pairs, links = pairs_and_links(11, 23, seed=6)
    return make_batch(pairs, links=links), make_batch(pairs, links=[links[2]] * len(pairs)), make_batch(pairs)


@pytest.mark.parametrize("null", [False, True], ids=["", "null"])
@pytest.mark.parametrize("aligner", ["prediction", "both"])
def test_the_alignment_modules_terms_beside_the_translations_on_padded_shapes_equal_the_eager_ones(aligner, null):
    """Training the model with its module (model.aligner): the vocabulary padded and
    masked, the links dense and padded, a batch without links read as zeros."""
    model = _with_module(null=null)
    objective = Objective(0.1, 0.5, aligner=aligner)
    for batch in _module_batches():
        expected, _ = sequence_loss(model, batch, objective)
        expected_grads = torch.autograd.grad(expected, list(model.parameters()), allow_unused=True)
        annotations, summary = model.encoder(batch.src, batch.src_lengths)
        inputs = fixed_shape_inputs(annotations, summary, batch, 32, objective)
        vocabulary, vocabulary_padding = inputs[-2:]
        assert vocabulary.numel() == VOCABULARY_MULTIPLE and bool(vocabulary_padding[-1])
        _assert_same_loss_and_gradients(model, DecoderLoss(model, objective)(*inputs), expected, expected_grads)


@pytest.mark.parametrize("null", [False, True], ids=["", "null"])
@pytest.mark.parametrize("aligner", ["prediction", "links", "both"])
def test_the_alignment_modules_terms_alone_on_padded_shapes_equal_the_eager_ones(aligner, null):
    """Training the module alone (train-aligner): the frozen pass computed, or kept and
    zero at padding, as frozen_passes.py gives it."""
    model = _with_module(null=null, seed=7).eval()
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    objective = Objective(aligner=aligner, translation=False)
    module = list(model.aligner.parameters())
    for batch in _module_batches():
        expected, _ = sequence_loss(model, batch, objective)
        if not expected.requires_grad:  # the links term alone, on a batch that carries none
            assert ModuleLoss(model, objective)(*module_inputs(frozen_pass(model, batch), batch, 32, objective)) == 0
            continue
        expected_grads = torch.autograd.grad(expected, module)
        readout, weights, state = frozen_pass(model, batch)
        real = (batch.tgt_out != 0).unsqueeze(-1)
        kept = (
            readout * real,
            weights * real,
            KeptSource(state.annotations * ~state.padding.unsqueeze(-1), state.padding),
        )
        for forced in (frozen_pass(model, batch), kept):
            found = ModuleLoss(model, objective)(*module_inputs(forced, batch, 32, objective))
            assert found.item() == pytest.approx(expected.item(), rel=1e-5)
            for grad, expected_grad in zip(torch.autograd.grad(found, module), expected_grads, strict=True):
                assert torch.allclose(grad, expected_grad, rtol=1e-4, atol=1e-6)


def test_the_frozen_pass_on_a_padded_shape_cut_back_is_the_batchs_own():
    """What a GPU replays for train-aligner's frozen pass (GraphedPass): the decoder on
    the grid's padded inputs, then its readout and α cut back to the batch's shape."""
    model = _with_module(null=False).eval()
    batch = _module_batches()[0]
    with torch.no_grad():
        readout, weights, _ = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        annotations, summary = model.encoder(batch.src, batch.src_lengths)
        grid = Grid.of(batch.src, batch.tgt_in, 32)
        padded_readout, padded_weights = padded_pass(
            model,
            grid.per_source(annotations),
            torch.nn.functional.pad(summary, (0, 0, 0, grid.rows)),
            grid.source_padding(batch.src_lengths, batch.src.size(1)),
            grid.targets(batch.tgt_in),
        )
    rows, targets, sources = batch.src.size(0), batch.tgt_in.size(1), batch.src.size(1)
    assert padded_weights.shape[0] == ROW_MULTIPLE and padded_weights.shape[1] % POSITION_MULTIPLE == 0
    real = batch.tgt_out != 0
    torch.testing.assert_close(padded_readout[:rows, :targets][real], readout[real])
    torch.testing.assert_close(padded_weights[:rows, :targets, :sources][real], weights[real])
    assert not padded_weights[:rows, :targets, sources:].any()
