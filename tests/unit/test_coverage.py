"""The coverage model (Tu et al. 2016): C_{i-1,j} = Σ_{k<i} α_kj in the decoder state,
read by the additive score; without it, the model is the one it was."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from rnnsearch import kernels
from rnnsearch.errors import UserError
from rnnsearch.export.graphs import export_encoder, export_step
from rnnsearch.export.runtime import check_graph, fixed_sizes, session, step_inputs
from rnnsearch.files.model_directory import load_weights, model_tensors, write_tensors
from rnnsearch.model.settings import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS, PAD
from tests.conftest import random_sources, tiny_model

VOCAB = 20
DECODERS = {
    "bahdanau": {},
    "luong": {"wiring": "luong"},
    "luong-input-feeding-lstm": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
}


def searched(model, sources, beam_size):
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    if beam_size == 1:
        return greedy_search(model, src, lengths, max_lengths=limits, options=SearchOptions())
    return beam_search(model, src, lengths, max_lengths=limits, options=SearchOptions(beam_size=beam_size, n_best=2))


@pytest.mark.parametrize("decoder", DECODERS.values(), ids=DECODERS.keys())
def test_the_coverage_a_step_reads_is_the_sum_of_the_attention_before_it(decoder):
    """C_0 = 0 and C_i = Σ_{k≤i} α_k exactly, step by step; padded positions stay 0;
    teacher forcing attends with the same coverage."""
    model = tiny_model(vocab=VOCAB, seed=2, decoder=decoder, coverage=True)
    src, lengths = source_tensors(random_sources(6, VOCAB, seed=3, min_len=1, max_len=9))
    tgt_in = torch.cat([torch.full((6, 1), BOS), torch.randint(4, VOCAB, (6, 7))], 1)
    padding = src == PAD
    with torch.no_grad():
        _, forced = model(src, lengths, tgt_in)
        state = model.encode(src, lengths)
        expected = torch.zeros(src.shape)
        for i in range(tgt_in.size(1)):
            assert torch.equal(state.coverage, expected)
            _, state, weights = model.step(tgt_in[:, i], state)
            assert torch.allclose(weights, forced[:, i], atol=1e-6)
            expected = expected + weights
        assert torch.equal(state.coverage, expected)
    assert (state.coverage[padding] == 0).all()
    assert torch.allclose(state.coverage.sum(1), torch.full((6,), float(tgt_in.size(1))))


def test_coverage_changes_the_attention_through_v_a():
    """V_a C enters the energies: with V_a = 0 the attention is the model's without coverage."""
    covered = tiny_model(vocab=VOCAB, seed=2, coverage=True)
    src, lengths = source_tensors(random_sources(4, VOCAB, seed=3, min_len=3))
    tgt_in = torch.cat([torch.full((4, 1), BOS), torch.randint(4, VOCAB, (4, 5))], 1)
    with torch.no_grad():
        before = covered(src, lengths, tgt_in)[1]
        covered.decoder.attention.score.coverage_layer.weight.zero_()
        after = covered(src, lengths, tgt_in)[1]
    assert torch.equal(before[:, 0], after[:, 0])  # C_0 = 0: the first step cannot differ
    assert not torch.allclose(before[:, 1:], after[:, 1:])


def without_v_a(model):
    """The model without coverage whose other weights are `model`'s."""
    plain = tiny_model(vocab=VOCAB, seed=7)
    weights = {name: value for name, value in model.state_dict().items() if "coverage_layer" not in name}
    plain.load_state_dict(weights, strict=True)
    return plain


@pytest.mark.parametrize("beam_size", [1, 4])
def test_without_coverage_the_model_has_the_same_parameters_and_the_same_outputs(beam_size):
    """Coverage adds V_a and nothing else; with V_a = 0 every output is bit for bit that of
    the model without coverage, whose state carries no coverage at all."""
    covered = tiny_model(vocab=VOCAB, seed=2, coverage=True)
    with torch.no_grad():
        covered.decoder.attention.score.coverage_layer.weight.zero_()
    plain = without_v_a(covered)
    assert set(covered.state_dict()) - set(plain.state_dict()) == {"decoder.attention.score.coverage_layer.weight"}
    sources = random_sources(12, VOCAB, seed=5)
    assert plain.encode(*source_tensors(sources)).coverage is None
    for expected, found in zip(searched(plain, sources, beam_size), searched(covered, sources, beam_size)):
        assert [h.tokens for h in found] == [h.tokens for h in expected]
        assert [h.score for h in found] == [h.score for h in expected]
        assert all(torch.equal(h.alignment, r.alignment) for h, r in zip(found, expected))


def trained(model, steps: int = 5):
    """`model` after a few steps of training on random pairs under the CPU training kernels."""
    generator = torch.Generator().manual_seed(0)
    src, lengths = source_tensors(random_sources(8, VOCAB, seed=11))
    tgt = torch.randint(4, VOCAB, (8, 6), generator=generator)
    tgt_in = torch.cat([torch.full((8, 1), BOS), tgt[:, :-1]], 1)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    with kernels.use(kernels.choose("cpu", purpose="train")):
        for _ in range(steps):
            optimiser.zero_grad()
            readout, _ = model(src, lengths, tgt_in)
            F.cross_entropy(model.logits(readout).flatten(0, 1), tgt.flatten()).backward()
            optimiser.step()
    return model.eval()


def test_a_trained_coverage_model_saves_and_loads_with_its_translations(tmp_path: Path):
    model = trained(tiny_model(vocab=VOCAB, seed=2, coverage=True))
    path = tmp_path / "best.safetensors"
    write_tensors(path, model_tensors(model), {"step": 5})
    loaded = tiny_model(vocab=VOCAB, seed=9, coverage=True)
    load_weights(loaded, path)
    v_a = "decoder.attention.score.coverage_layer.weight"
    assert torch.equal(loaded.state_dict()[v_a], model.state_dict()[v_a])
    sources = random_sources(10, VOCAB, seed=6)
    for beam_size in (1, 3):
        expected, found = searched(model, sources, beam_size), searched(loaded, sources, beam_size)
        assert [[h.tokens for h in hs] for hs in found] == [[h.tokens for h in hs] for hs in expected]
    with pytest.raises(UserError) as excinfo:
        load_weights(tiny_model(vocab=VOCAB, seed=9), path)
    assert "\n" not in str(excinfo.value)


def test_the_packages_check_takes_the_coverage_graph_of_a_coverage_config(tmp_path: Path):
    """The step graph of a coverage model takes `coverage` (and returns `next_coverage`);
    a package whose config says otherwise is refused, one line naming the inputs."""
    model = tiny_model(vocab=VOCAB, seed=2, coverage=True)
    export_encoder(model, tmp_path / "encoder.onnx")
    export_step(model, tmp_path / "step.onnx")
    step = session(tmp_path / "step.onnx", 1)
    assert "next_coverage" in [output.name for output in step.get_outputs()]
    assert "coverage" in [output.name for output in session(tmp_path / "encoder.onnx", 1).get_outputs()]
    config = tiny_config(coverage=True)
    check_graph(tmp_path / "step.onnx", step, step_inputs(config), fixed_sizes(config))
    with pytest.raises(UserError) as excinfo:
        check_graph(tmp_path / "step.onnx", step, step_inputs(tiny_config(coverage=False)), {})
    assert "coverage" in str(excinfo.value) and "\n" not in str(excinfo.value)


def tiny_config(coverage: bool):
    """The model config of `tiny_model`, with or without coverage."""
    return ModelConfig(
        embedding_size=8,
        encoder=EncoderConfig(hidden_size=8),
        attention=AttentionConfig(size=8, coverage=coverage),
        decoder=DecoderConfig(hidden_size=16, readout_size=8),
    )
