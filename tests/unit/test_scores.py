"""Every alignment model in the registry, checked for the properties attention needs."""

import math
from dataclasses import replace

import pytest
import torch

from rnnsearch.model.scores import SCORES
from rnnsearch.text.batches import source_tensors
from tests.conftest import random_sources, tiny_model


def energies_and_weights(model, src, lengths):
    state = model.encode(src, lengths)
    attention = model.decoder.attention
    energies = attention.score(state.top.unsqueeze(1), state.keys).squeeze(1)
    _, weights = attention(state.top, state)
    return state, energies, weights


@pytest.mark.parametrize("score", SCORES)
def test_energies_are_finite_and_weights_sum_to_one_with_zero_padding(score):
    model = tiny_model(score=score)
    src, lengths = source_tensors(random_sources(9, 12, seed=1))
    state, energies, weights = energies_and_weights(model, src, lengths)
    assert energies.shape == src.shape and torch.isfinite(energies).all()
    assert torch.allclose(weights.sum(1), torch.ones(9), atol=1e-6)
    assert torch.all(weights[state.padding] == 0.0)


@pytest.mark.parametrize("score", SCORES)
def test_gradients_reach_every_parameter_of_the_score(score):
    model = tiny_model(score=score).train()
    src, lengths = source_tensors(random_sources(4, 12, seed=2))
    readout, _ = model(src, lengths, torch.randint(4, 12, (4, 5)))
    model.logits(readout).sum().backward()
    for name, parameter in model.decoder.attention.score.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_cosine_energies_lie_in_minus_one_to_one():
    model = tiny_model(score="cosine")
    src, lengths = source_tensors(random_sources(16, 12, seed=4))
    _, energies, _ = energies_and_weights(model, src, lengths)
    assert energies.abs().max() <= 1.0 + 1e-6


def test_location_weights_ignore_the_annotations():
    model = tiny_model(score="location")
    src, lengths = source_tensors(random_sources(6, 12, seed=5))
    state = model.encode(src, lengths)
    attention = model.decoder.attention
    _, weights = attention(state.top, state)
    other = torch.randn_like(state.annotations)
    elsewhere = replace(state, annotations=other, **attention.source_side(other, state.padding))
    _, again = attention(state.top, elsewhere)
    assert torch.equal(weights, again)


def test_dot_equals_scaled_dot_times_root_n():
    dot, scaled = tiny_model(score="dot", seed=6), tiny_model(score="scaled_dot", seed=6)
    src, lengths = source_tensors(random_sources(5, 12, seed=7))
    _, dot_energies, _ = energies_and_weights(dot, src, lengths)
    _, scaled_energies, _ = energies_and_weights(scaled, src, lengths)
    n = dot.decoder.attention.score.size
    assert torch.allclose(dot_energies, scaled_energies * math.sqrt(n), atol=1e-5)


def test_dot_has_no_parameters_when_sizes_agree():
    score = SCORES["dot"](16, 16, 8)
    assert sum(p.numel() for p in score.parameters()) == 0
    assert sum(p.numel() for p in SCORES["dot"](16, 12, 8).parameters()) == 16 * 12


def test_additive_energies_and_gradients_match_the_formula():
    """The additive score recomputes its tanh in the backward pass; values and gradients
    must equal e = v_aᵀ tanh(W_a s + U_a h_j) differentiated by autograd."""
    torch.manual_seed(0)
    score = SCORES["additive"](6, 8, 5).double()
    query, keys = torch.randn(3, 2, 6, dtype=torch.float64), torch.randn(3, 4, 5, dtype=torch.float64)
    query.requires_grad_(True)
    keys.requires_grad_(True)
    inputs = [query, keys, score.query_layer.weight, score.v.weight]
    expected = score.v(torch.tanh(keys.unsqueeze(1) + score.query_layer(query).unsqueeze(2))).squeeze(3)
    actual = score(query, keys)
    assert torch.allclose(actual, expected, atol=1e-12)
    grad = torch.randn_like(expected)
    assert all(
        torch.allclose(a, e, atol=1e-12)
        for a, e in zip(torch.autograd.grad(actual, inputs, grad), torch.autograd.grad(expected, inputs, grad))
    )
    assert torch.autograd.gradcheck(score, (query, keys))


def test_additive_energies_in_float32_match_the_tanh_formula():
    """In fp32 on the CPU the energies are computed from σ(2x) and Σ v_a; they must equal
    v_aᵀ tanh(x) in float64 even when v_a's large mean makes Σ v_a σ far exceed them."""
    torch.manual_seed(1)
    score = SCORES["additive"](16, 24, 512)
    with torch.no_grad():
        score.v.weight.add_(0.5)
    query, keys = torch.randn(4, 3, 16), torch.randn(4, 7, 512)
    with torch.no_grad():
        actual = score(query, keys)
        wide = score.double()
        expected = wide.v(torch.tanh(keys.double().unsqueeze(1) + wide.query_layer(query.double()).unsqueeze(2)))
    assert actual.dtype == torch.float32
    assert torch.allclose(actual.double(), expected.squeeze(3), atol=2e-4)
    assert torch.allclose(actual.double().softmax(-1), expected.squeeze(3).softmax(-1), atol=2e-5)
