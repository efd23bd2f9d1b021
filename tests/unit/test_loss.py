import pytest
import torch
import torch.nn.functional as F

from rnnsearch.text.batches import make_batch
from rnnsearch.training.loss import SmoothedCrossEntropy, sequence_loss
from tests.conftest import tiny_model


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_fused_loss_matches_torch_cross_entropy_in_value_and_gradient(smoothing):
    torch.manual_seed(0)
    logits = (3 * torch.randn(50, 37)).requires_grad_()
    targets = torch.randint(0, 37, (50,))
    expected = F.cross_entropy(logits, targets, label_smoothing=smoothing, reduction="sum")
    (expected_grad,) = torch.autograd.grad(expected, logits)
    loss = SmoothedCrossEntropy.apply(logits, targets, smoothing)
    (grad,) = torch.autograd.grad(2.0 * loss, logits)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert torch.allclose(grad, 2.0 * expected_grad, atol=1e-5)


def test_padding_adds_neither_loss_nor_tokens():
    model = tiny_model(seed=2)
    short, long = ([4, 5], [6, 7]), ([4, 5, 6, 7, 8], [6, 7, 8, 9, 10, 11])
    alone, alone_tokens = sequence_loss(model, make_batch([short]), 0.1)
    both, both_tokens = sequence_loss(model, make_batch([short, long]), 0.1)
    other, other_tokens = sequence_loss(model, make_batch([long]), 0.1)
    assert alone_tokens == 3 and both_tokens == alone_tokens + other_tokens
    assert both.item() == pytest.approx(alone.item() + other.item(), rel=1e-5)
