"""The ONNX graphs of a model search exactly as the model: every score, wiring and cell."""

from pathlib import Path

import pytest
import torch

from rnnsearch.export.graphs import export_encoder, export_step
from rnnsearch.export.runtime import OnnxModel, session
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model

VOCAB = 20
VARIANTS = {
    "additive": {},
    "general": {"score": "general"},
    "dot": {"score": "dot"},
    "scaled_dot": {"score": "scaled_dot"},
    "cosine": {"score": "cosine"},
    "location": {"score": "location"},
    "fixed_context": {"score": "none"},
    "tanh_readout": {"readout": "tanh"},
    "tied_embeddings": {"decoder": {"tied_embeddings": True}},
    "unidirectional": {"encoder": {"bidirectional": False}},
    "lstm_two_layers": {"encoder": {"cell": "lstm", "layers": 2}, "decoder": {"cell": "lstm", "layers": 2}},
    "luong_input_feeding": {"score": "general", "decoder": {"wiring": "luong", "input_feeding": True}},
    "luong": {"score": "dot", "decoder": {"wiring": "luong", "input_feeding": False}},
    "additive_coverage": {"coverage": True},
    "luong_coverage": {"decoder": {"wiring": "luong", "input_feeding": False}, "coverage": True},
    "luong_lstm_fixed_context": {
        "score": "none",
        "decoder": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
    },
}


def assert_same_search(expected, found) -> None:
    """Two runtimes' n-best lists agree: tokens exactly; scores, log-probabilities and
    alignments to within the rounding of products summed in different orders by two
    libraries, which adds up over a hypothesis's tokens (1e-5 per token)."""
    for reference, hypotheses in zip(expected, found, strict=True):
        assert [h.tokens for h in hypotheses] == [h.tokens for h in reference]
        for h, r in zip(hypotheses, reference):
            tolerance = 1e-5 * max(len(r.tokens), 1)
            assert h.score == pytest.approx(r.score, abs=tolerance)
            assert h.log_prob == pytest.approx(r.log_prob, abs=tolerance)
            assert (h.alignment is None) == (r.alignment is None)
            if r.alignment is not None:
                assert torch.allclose(h.alignment, r.alignment, atol=1e-5)


def exported(model, folder: Path) -> OnnxModel:
    export_encoder(model, folder / "encoder.onnx")
    export_step(model, folder / "step.onnx")
    return OnnxModel(session(folder / "encoder.onnx", 1), session(folder / "step.onnx", 1))


def search(model, sources, beam_size, n_best=1, in_flight=None):
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    with torch.no_grad():
        if beam_size == 1:
            return greedy_search(model, src, lengths, max_lengths=limits, options=SearchOptions(in_flight=in_flight))
        options = SearchOptions(beam_size=beam_size, n_best=n_best, in_flight=in_flight)
        return beam_search(model, src, lengths, max_lengths=limits, options=options)


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    """Each variant's model and its exported graphs, exported once for the module."""
    built = {}
    for name, options in VARIANTS.items():
        model = tiny_model(vocab=VOCAB, **options)
        built[name] = model, exported(model, tmp_path_factory.mktemp(name))
    return built


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("beam_size", "n_best"), [(1, 1), (4, 3)])
def test_the_exported_graphs_search_as_the_model(graphs, variant, beam_size, n_best):
    model, onnx_model = graphs[variant]
    sources = random_sources(24, VOCAB, seed=3, max_len=14)
    expected = search(model, sources, beam_size, n_best)
    assert_same_search(expected, search(onnx_model, sources, beam_size, n_best))
    assert onnx_model.has_alignment == ("fixed_context" not in variant)


@pytest.mark.parametrize("variant", ["additive", "luong_input_feeding", "lstm_two_layers", "additive_coverage"])
def test_beam_one_equals_greedy_on_the_graphs(graphs, variant):
    _, onnx_model = graphs[variant]
    sources = random_sources(16, VOCAB, seed=4)
    greedy = search(onnx_model, sources, 1)
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    with torch.no_grad():
        beam = beam_search(onnx_model, src, lengths, max_lengths=limits, options=SearchOptions())
    assert_same_hypotheses(greedy, beam)


@pytest.mark.parametrize("variant", ["additive", "additive_coverage"])
@pytest.mark.parametrize("beam_size", [1, 5])
def test_graph_translations_do_not_depend_on_how_many_sentences_decode_together(graphs, beam_size, variant):
    _, onnx_model = graphs[variant]
    sources = random_sources(64, VOCAB, seed=5, max_len=20)
    alone = search(onnx_model, sources, beam_size, in_flight=1)
    for in_flight in (7, 64):
        assert_same_hypotheses(alone, search(onnx_model, sources, beam_size, in_flight=in_flight))
