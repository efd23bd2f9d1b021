"""Every kernel set computes what the reference computes, and is chosen in one place."""

import logging
from dataclasses import replace

import pytest
import torch

from rnnsearch import kernels
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import max_output_lengths
from rnnsearch.text.batches import make_batch, source_tensors
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model

CPU_SETS = [
    kernels.CPU_TRAINING,
    kernels.CPU_TRAINING_BF16,
    kernels.CPU_SEARCH,
    kernels.ACCELERATOR,
    kernels.ONNX_EXPORT,
]
MODELS = {
    "paper": {},
    "luong general lstm": {"decoder": {"wiring": "luong", "cell": "lstm"}, "score": "general"},
    "two layers, tanh readout": {"decoder": {"layers": 2}, "readout": "tanh"},
    "fixed context": {"score": "none"},
}


def loss_and_gradients(model, batch, chosen: kernels.Kernels):
    with kernels.use(chosen):
        loss, _ = sequence_loss(model, batch, Objective(0.1))
    return loss, torch.autograd.grad(loss, list(model.parameters()))


@pytest.mark.parametrize("options", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("chosen", CPU_SETS, ids=[k.name for k in CPU_SETS])
def test_every_set_trains_on_the_references_loss_and_gradients(chosen, options):
    model = tiny_model(vocab=23, seed=2, **options).train()
    sources = random_sources(7, 23, seed=4, min_len=1, max_len=10)
    batch = make_batch(list(zip(sources, random_sources(7, 23, seed=5, min_len=1, max_len=12))))
    expected, expected_grads = loss_and_gradients(model, batch, kernels.REFERENCE)
    found, grads = loss_and_gradients(model, batch, chosen)
    assert found.item() == pytest.approx(expected.item(), rel=1e-5)
    for (name, _), g, e in zip(model.named_parameters(), grads, expected_grads, strict=True):
        assert torch.allclose(g, e, rtol=1e-4, atol=1e-5 * float(e.abs().max())), name


@pytest.mark.parametrize("options", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("chosen", CPU_SETS, ids=[k.name for k in CPU_SETS])
def test_every_set_steps_the_decoder_as_the_reference_does(chosen, options):
    model = tiny_model(vocab=23, seed=3, **options).eval()
    src, lengths = source_tensors(random_sources(40, 23, seed=6, max_len=12))
    prev = torch.randint(3, 23, (40,), generator=torch.Generator().manual_seed(1))

    def step(kernel_set):
        with torch.no_grad(), kernels.use(kernel_set):
            log_probs, state, weights = model.step(prev, model.encode(src, lengths))
        return log_probs, state.state, weights

    for found, expected in zip(step(chosen), step(kernels.REFERENCE), strict=True):
        if expected is None:
            assert found is None
        else:
            assert torch.allclose(found, expected, atol=1e-5)


def test_search_translates_with_the_cpu_search_set_as_with_the_reference(monkeypatch):
    model = tiny_model(vocab=20, seed=3)
    src, lengths = source_tensors(random_sources(30, 20, seed=5, max_len=12))
    limits = max_output_lengths(lengths, 1.5, 3)
    chosen = []
    choose = kernels.choose
    monkeypatch.setattr(kernels, "choose", lambda *a, **k: chosen.append(choose(*a, **k)) or chosen[-1])
    fast = greedy_search(model, src, lengths, max_lengths=limits)
    monkeypatch.setattr(kernels, "choose", lambda *a, **k: kernels.REFERENCE)
    plain = greedy_search(model, src, lengths, max_lengths=limits)
    assert [k.name for k in chosen] == ["cpu-search"]
    assert [h[0].tokens for h in fast] == [h[0].tokens for h in plain]
    for a, b in zip(fast, plain):
        assert a[0].score == pytest.approx(b[0].score, abs=1e-4)
        assert torch.allclose(a[0].alignment, b[0].alignment, atol=1e-5)


@pytest.mark.parametrize(
    "device, purpose, precision, cuda_graphs, name",
    [
        ("cpu", "train", "fp32", True, "cpu-train"),
        ("cpu", "train", "bf16", True, "cpu-train-bf16"),
        ("cpu", "search", "fp32", True, "cpu-search"),
        ("cpu", "search", "bf16", True, "cpu-search"),
        ("cuda", "train", "fp32", True, "cuda-graphs"),
        ("cuda", "train", "bf16", True, "accelerator"),
        ("cuda", "train", "fp32", False, "accelerator"),
        ("cuda", "search", "bf16", True, "cuda-graphs"),
        ("cuda:1", "search", "fp32", False, "accelerator"),
        ("mps", "search", "fp32", True, "accelerator"),
        ("cpu", "export", "fp32", True, "onnx-export"),
    ],
)
def test_the_choice_follows_device_purpose_and_precision(device, purpose, precision, cuda_graphs, name):
    assert kernels.choose(device, purpose=purpose, precision=precision, cuda_graphs=cuda_graphs).name == name


def test_outside_any_set_the_model_runs_the_reference():
    assert kernels.active() is kernels.REFERENCE
    x = torch.linspace(-3, 3, 50)
    assert torch.equal(kernels.tanh(x), torch.tanh(x))


def test_a_set_ends_with_its_scope_even_on_an_error():
    with pytest.raises(RuntimeError):
        with kernels.use(kernels.CPU_SEARCH):
            with kernels.use(kernels.ONNX_EXPORT):
                assert kernels.active() is kernels.ONNX_EXPORT
            assert kernels.active() is kernels.CPU_SEARCH
            raise RuntimeError
    assert kernels.active() is kernels.REFERENCE


def test_the_first_use_of_a_set_is_logged_once(caplog):
    fresh = replace(kernels.REFERENCE, name="a fresh set", description="for this test")
    with caplog.at_level(logging.INFO, logger="rnnsearch.kernels"):
        for _ in range(2):
            with kernels.use(fresh):
                pass
    assert [r.getMessage() for r in caplog.records] == ["kernels: a fresh set — for this test"]
