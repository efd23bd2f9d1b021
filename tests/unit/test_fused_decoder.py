"""The fused training loop (Bahdanau wiring, GRU, additive score) against the general
step loop it replaces on the CPU: same loss, same alignments, same gradients."""

from dataclasses import replace

import pytest
import torch

from rnnsearch import kernels
from rnnsearch.kernels import fused_decoder
from rnnsearch.model.wirings import fused_score
from rnnsearch.text.batches import make_batch
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model


def batch_of(count: int, vocab: int, seed: int):
    sources = random_sources(count, vocab, seed=seed, min_len=1, max_len=11)
    targets = random_sources(count, vocab, seed=seed + 1, min_len=1, max_len=13)
    return make_batch(list(zip(sources, targets)))


def loss_alignments_and_gradients(model, batch, fused: bool):
    """The smoothed loss plus a random weighting of the alignments (so that their gradient
    is tested too), its gradients, and whether the fused loop ran: under the CPU training
    kernels, or under the same kernels without the fused loop."""
    ran = []

    def counted(*args, **kwargs):
        ran.append(1)
        return fused_decoder.attentive_gru(*args, **kwargs)

    chosen = replace(kernels.CPU_TRAINING, attentive_gru=counted if fused else None)
    with kernels.use(chosen):
        readout, alignments = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss, _ = sequence_loss(model, batch, Objective(0.1))
    weighting = torch.rand(alignments.shape, generator=torch.Generator().manual_seed(5))
    total = loss + (alignments * weighting).sum() + readout.square().sum()
    parameters = list(model.parameters())
    return total, alignments.detach(), torch.autograd.grad(total, parameters), bool(ran)


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
@pytest.mark.parametrize("readout", ["maxout", "tanh"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_fused_loop_gives_the_step_loops_loss_alignments_and_gradients(readout, seed, coverage):
    model = tiny_model(vocab=23, seed=seed, readout=readout, coverage=coverage).train()
    batch = batch_of(9, 23, seed=10 + seed)
    expected, expected_alignments, expected_grads, _ = loss_alignments_and_gradients(model, batch, False)
    found, alignments, grads, ran = loss_alignments_and_gradients(model, batch, True)

    assert ran
    assert found.item() == pytest.approx(expected.item(), rel=1e-6)
    assert torch.allclose(alignments, expected_alignments, atol=1e-6)
    assert bool((alignments.sum(-1) - 1).abs().max() < 1e-5)
    padding = torch.arange(batch.src.size(1)) >= batch.src_lengths.unsqueeze(1)
    assert bool((alignments.masked_select(padding.unsqueeze(1)) == 0).all())
    for (name, _), g, e in zip(model.named_parameters(), grads, expected_grads, strict=True):
        assert torch.allclose(g, e, rtol=1e-4, atol=1e-5 * float(e.abs().max())), name


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
def test_the_fused_loops_backward_pass_is_the_derivative_of_its_forward_pass(coverage):
    """Finite differences in float64 on every input: the hand-written backward pass; with
    coverage also on C_0 and V_a, whose gradient flows back through every later step."""
    generator = torch.Generator().manual_seed(0)
    batch, steps, size, source, attention, annotation = 3, 4, 5, 6, 7, 8

    def tensor(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64, requires_grad=True)

    padding = torch.arange(source) >= torch.tensor([[6], [3], [1]])
    inputs = (
        tensor(batch, steps, 3 * size),  # E y's share of the input gates
        tensor(batch, size),  # s_0
        tensor(batch, source, attention),  # U_a h_j
        tensor(batch, source, annotation),  # h_j
        padding,
        tensor(attention, size),  # W_a
        tensor(attention),  # v_a
        tensor(3 * size, annotation),  # the context's share of W_ih
        tensor(3 * size, size),  # W_hh
        tensor(3 * size),  # b_hh
        *(
            (tensor(batch, source).masked_fill(padding, 0.0), tensor(attention)) if coverage else (None, None)
        ),  # C_0, V_a
    )
    assert torch.autograd.gradcheck(fused_decoder._AttentiveGRU.apply, inputs)


DECODERS = {
    "luong": {"decoder": {"wiring": "luong"}},
    "lstm": {"decoder": {"cell": "lstm"}},
    "two layers": {"decoder": {"layers": 2}},
    "general score": {"score": "general"},
    "fixed context": {"score": "none"},
    "luong with coverage": {"decoder": {"wiring": "luong"}, "coverage": True},
}


@pytest.mark.parametrize("options", DECODERS.values(), ids=DECODERS.keys())
def test_other_decoders_keep_the_step_loop(options):
    model = tiny_model(vocab=23, **options).train()
    batch = batch_of(4, 23, seed=3)
    assert fused_score(model.decoder, model.encode(batch.src, batch.src_lengths)) is None


def test_the_fused_loop_runs_only_where_gradients_are_wanted():
    model = tiny_model(vocab=23).train()
    batch = batch_of(4, 23, seed=3)
    state = model.encode(batch.src, batch.src_lengths)
    assert fused_score(model.decoder, state) is model.decoder.attention.score
    with torch.no_grad():
        assert fused_score(model.decoder, state) is None


def test_only_fp32_training_on_the_cpu_chooses_the_fused_loop():
    assert kernels.choose("cpu", purpose="train").attentive_gru is not None
    assert kernels.choose("cpu", purpose="train", precision="bf16").attentive_gru is None
    assert kernels.choose("cpu", purpose="search").attentive_gru is None
    assert kernels.choose("cuda", purpose="train").attentive_gru is None
