import pytest
import torch
import torch.nn.functional as F

from rnnsearch.text.batches import make_batch
from rnnsearch.training import loss as loss_module
from rnnsearch.training.loss import Objective, output_layer_loss, sequence_loss
from tests.conftest import tiny_model


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("chunk_elements", [37 * 7, 1 << 22])  # 7 rows a chunk, or all 50 at once
def test_fused_loss_matches_the_output_layer_and_torch_cross_entropy(smoothing, chunk_elements, monkeypatch):
    monkeypatch.setattr(loss_module, "CHUNK_ELEMENTS", chunk_elements)
    torch.manual_seed(0)
    layer = torch.nn.Linear(6, 37)
    readout = (3 * torch.randn(50, 6)).requires_grad_()
    targets = torch.randint(0, 37, (50,))
    inputs = (readout, layer.weight, layer.bias)
    expected = F.cross_entropy(layer(readout), targets, label_smoothing=smoothing, reduction="sum")
    expected_grads = torch.autograd.grad(2.0 * expected, inputs)
    loss = output_layer_loss(readout, layer, targets, smoothing)
    grads = torch.autograd.grad(2.0 * loss, inputs)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert all(torch.allclose(g, e, atol=1e-4) for g, e in zip(grads, expected_grads))
    with torch.no_grad():
        assert output_layer_loss(readout, layer, targets, smoothing).item() == pytest.approx(loss.item(), rel=1e-6)


def test_padding_adds_neither_loss_nor_tokens():
    model = tiny_model(seed=2)
    short, long = ([4, 5], [6, 7]), ([4, 5, 6, 7, 8], [6, 7, 8, 9, 10, 11])
    alone, alone_tokens = sequence_loss(model, make_batch([short]), Objective(0.1))
    both, both_tokens = sequence_loss(model, make_batch([short, long]), Objective(0.1))
    other, other_tokens = sequence_loss(model, make_batch([long]), Objective(0.1))
    assert alone_tokens == 3 and both_tokens == alone_tokens + other_tokens
    assert both.item() == pytest.approx(alone.item() + other.item(), rel=1e-5)
