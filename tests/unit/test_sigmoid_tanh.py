"""The sigmoid-based tanh must be tanh: values, gradients, and in-place behaviour."""

import torch

from rnnsearch.kernels.sigmoid_tanh import tanh, tanh_


def test_values_match_torch_tanh_across_the_range():
    x = torch.cat(
        [torch.linspace(-30, 30, 10_001), torch.tensor([0.0, -0.0, 1e-30, -1e-8, float("inf"), -float("inf")])]
    )
    assert torch.allclose(tanh(x), torch.tanh(x), rtol=0, atol=2.5e-7)
    assert tanh(torch.tensor([float("inf"), -float("inf")])).tolist() == [1.0, -1.0]
    assert tanh(torch.tensor([float("nan")])).isnan().all()


def test_gradient_is_one_minus_tanh_squared():
    x = torch.randn(50, 7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(tanh, (x,))
    assert torch.autograd.gradcheck(lambda t: tanh_(t * 1.0), (x,))
    y = torch.randn(4, 3, 5, generator=torch.Generator().manual_seed(0)).requires_grad_()
    ours = torch.autograd.grad(tanh_(y * 3).sum(), y)[0]
    reference = torch.autograd.grad(torch.tanh(y * 3).sum(), y)[0]
    assert torch.allclose(ours, reference, atol=2e-6)  # 3 · 2|t| · 2.5e-7: the chain rule scales tanh's error


def test_tanh_leaves_its_input_and_tanh_underscore_overwrites_it():
    x = torch.randn(100)
    before = x.clone()
    assert torch.allclose(tanh(x), torch.tanh(before), atol=2.5e-7)
    assert torch.equal(x, before)
    result = tanh_(x)
    assert result.data_ptr() == x.data_ptr()
    assert torch.allclose(x, torch.tanh(before), atol=2.5e-7)


def test_in_place_under_autograd_keeps_earlier_gradients_right():
    w = torch.randn(6, 4, requires_grad=True)
    inputs = torch.randn(3, 6)
    out = tanh_(inputs @ w)
    (out**2).sum().backward()
    expected_w = w.detach().clone().requires_grad_()
    (torch.tanh(inputs @ expected_w) ** 2).sum().backward()
    assert torch.allclose(w.grad, expected_w.grad, atol=1e-5)
