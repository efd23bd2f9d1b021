import pytest
import torch
import torch.nn.functional as F

from rnnsearch import kernels
from rnnsearch.kernels import packed as packing
from rnnsearch.kernels.packed import linear, packed_weights
from rnnsearch.model.linear import Linear
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from tests.conftest import random_sources, tiny_model

needs_onednn = pytest.mark.skipif(not packing._ONEDNN, reason="this PyTorch has no oneDNN")


@pytest.fixture(autouse=True)
def pack_small_weights(monkeypatch):
    """The test weights and batches are far below the sizes where packing pays; pack them anyway."""
    monkeypatch.setattr(packing, "MIN_PACKED_ELEMENTS", 0)
    monkeypatch.setattr(packing, "MIN_PACKED_ROWS", 0)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 24), (3, 4, 24), (1, 24)])
def test_packed_products_equal_f_linear(shape, bias):
    torch.manual_seed(0)
    weight = torch.randn(40, 24)
    b = torch.randn(40) if bias else None
    x = torch.randn(*shape)
    with torch.no_grad(), packed_weights():
        assert torch.allclose(linear(x, weight, b), F.linear(x, weight, b), atol=1e-5)


needs_bf16 = pytest.mark.skipif(not packing._ONEDNN_BF16, reason="no oneDNN bfloat16 here")


@needs_bf16
@pytest.mark.parametrize("bias", [True, False])
def test_under_bfloat16_autocast_packed_products_are_autocast_products_bit_for_bit(bias):
    torch.manual_seed(0)
    weight, b, x = torch.randn(300, 96), torch.randn(300) if bias else None, torch.randn(2, 37, 96)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = F.linear(x, weight, b)
        with packed_weights():
            found = linear(x, weight, b)
            assert [key[-1] for key in packing._scope.packed] == [torch.bfloat16]
    assert found.dtype == expected.dtype == torch.bfloat16
    assert torch.equal(found, expected)


def test_a_block_of_columns_is_packed_as_its_own_matrix():
    torch.manual_seed(0)
    weight = torch.randn(30, 50)
    x_left, x_right = torch.randn(6, 20), torch.randn(6, 30)
    with torch.no_grad(), packed_weights():
        assert torch.allclose(linear(x_left, weight[:, :20]), x_left @ weight[:, :20].T, atol=1e-5)
        assert torch.allclose(linear(x_right, weight[:, 20:]), x_right @ weight[:, 20:].T, atol=1e-5)


def test_under_autograd_it_is_f_linear():
    torch.manual_seed(0)
    layer = Linear(16, 8)
    x = torch.randn(4, 16, requires_grad=True)
    with kernels.use(kernels.CPU_SEARCH):
        assert torch.equal(layer(x), F.linear(x, layer.weight, layer.bias))


@needs_onednn
def test_small_weights_are_not_packed(monkeypatch):
    monkeypatch.setattr(packing, "MIN_PACKED_ELEMENTS", 1000)
    small, large = torch.randn(20, 40), torch.randn(40, 40)
    with torch.no_grad(), packed_weights():
        linear(torch.randn(3, 40), small)
        linear(torch.randn(3, 40), large)
        assert [entry[0] for entry in packing._scope.packed.values()] == [large]


@needs_onednn
def test_a_few_rows_are_multiplied_without_packing(monkeypatch):
    """One sentence, or one beam, is not worth packing the weights for."""
    monkeypatch.setattr(packing, "MIN_PACKED_ROWS", 16)
    weight = torch.randn(40, 40)
    with torch.no_grad(), packed_weights():
        few = torch.randn(5, 40)
        assert torch.equal(linear(few, weight), F.linear(few, weight))
        assert not packing._scope.packed
        many = torch.randn(2, 8, 40)
        assert torch.allclose(linear(many, weight), F.linear(many, weight), atol=1e-5)
        assert [entry[0] for entry in packing._scope.packed.values()] == [weight]


def test_outside_a_scope_it_is_f_linear():
    torch.manual_seed(0)
    layer = Linear(16, 8)
    x = torch.randn(4, 16)
    assert torch.equal(layer(x), F.linear(x, layer.weight, layer.bias))


@needs_onednn
def test_every_scope_packs_the_weights_as_they_are_then():
    """Fused Adam writes to the weights without moving their version counters, so a
    packed copy must not outlive the scope it was made for."""
    torch.manual_seed(0)
    layer = Linear(16, 8)
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.1, fused=True)
    x = torch.randn(70, 16)
    for _ in range(3):
        layer(x).square().sum().backward()
        optimizer.step()
        with torch.no_grad(), kernels.use(kernels.CPU_SEARCH):
            assert torch.allclose(layer(x), F.linear(x, layer.weight, layer.bias), atol=1e-5)
    assert packing._scope.packed is None


@needs_onednn
def test_an_in_place_change_inside_a_scope_is_packed_again():
    layer = Linear(16, 8)
    x = torch.randn(4, 16)
    with torch.no_grad(), kernels.use(kernels.CPU_SEARCH):
        layer(x)
        layer.load_state_dict({"weight": torch.zeros(8, 16), "bias": torch.ones(8)})
        assert torch.equal(layer(x), torch.ones(4, 8))


@needs_onednn
@pytest.mark.parametrize("beam_size", [1, 4])
def test_search_outputs_do_not_depend_on_packing(beam_size, monkeypatch):
    model = tiny_model(vocab=20, seed=3)
    src, lengths = source_tensors(random_sources(30, 20, seed=5, max_len=12))
    limits = max_output_lengths(lengths, 1.5, 3)

    def run():
        if beam_size == 1:
            return greedy_search(model, src, lengths, max_lengths=limits)
        return beam_search(model, src, lengths, max_lengths=limits, options=SearchOptions(beam_size=beam_size))

    packed = run()
    monkeypatch.setattr(packing, "_ONEDNN", False)
    plain = run()
    assert [h[0].tokens for h in packed] == [h[0].tokens for h in plain]
    for a, b in zip(packed, plain):
        assert a[0].score == pytest.approx(b[0].score, abs=1e-4)
        assert torch.allclose(a[0].alignment, b[0].alignment, atol=1e-5)
