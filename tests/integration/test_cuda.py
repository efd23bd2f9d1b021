"""The CUDA path computes what the CPU path computes: losses, gradients, searches, graphed
training steps (guided ones and the alignment module's too), a whole training run, and
bf16 autocast with α_ij and the loss in fp32. Run where a GPU is present; skipped elsewhere."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config.train import TrainConfig
from rnnsearch.search.beam import beam_search
from rnnsearch.search.fixed_shape import fixed_shape_beam_search, fixed_shape_greedy_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import InMemoryPairs, make_batch, source_tensors
from rnnsearch.training.frozen_passes import FrozenPasses
from rnnsearch.training.graphed_loss import GraphedLoss, GraphedPass
from rnnsearch.training.loop import StepContext, training_step
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model, tiny_model_with_module
from tests.integration.conftest import tiny_config, write_config
from tests.unit.test_guided_loss import pairs_and_links

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")
DECODERS = {
    "bahdanau-gru": {},
    "luong-input-feeding-lstm": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
    "bahdanau-lstm-2-layers": {"cell": "lstm", "layers": 2},
}


@pytest.fixture(autouse=True)
def exact_fp32_products():
    """Full fp32 matrix products and cuDNN RNNs (no TF32) while these tests compare with the CPU."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _batch(seed: int, vocab: int = 20, count: int = 16):
    sources = random_sources(count, vocab, seed=seed, min_len=2, max_len=11)
    targets = random_sources(count, vocab, seed=seed + 1, min_len=2, max_len=9)
    return make_batch(list(zip(sources, targets)))


@pytest.mark.parametrize("score", ["additive", "general", "scaled_dot", "location", "none"])
def test_loss_and_gradients_on_cuda_equal_the_cpu(score):
    cpu_model = tiny_model(vocab=20, seed=3, score=score).train()
    cuda_model = copy.deepcopy(cpu_model).to(CUDA)
    batch = _batch(seed=7)
    cpu_loss, tokens = sequence_loss(cpu_model, batch, Objective(0.1))
    cuda_loss, cuda_tokens = sequence_loss(cuda_model, batch.to(CUDA), Objective(0.1))
    cpu_loss.backward()
    cuda_loss.backward()
    assert cuda_tokens == tokens
    assert cuda_loss.item() == pytest.approx(cpu_loss.item(), rel=1e-5)
    for (name, p), q in zip(cpu_model.named_parameters(), cuda_model.parameters()):
        assert torch.linalg.norm(q.grad.cpu() - p.grad) <= 1e-4 * torch.linalg.norm(p.grad), name


@pytest.mark.parametrize("decoder", DECODERS.values(), ids=DECODERS.keys())
def test_greedy_and_beam_search_on_cuda_equal_the_cpu(decoder):
    cpu_model = tiny_model(vocab=20, seed=2, decoder=decoder)
    cuda_model = copy.deepcopy(cpu_model).to(CUDA)
    src, lengths = source_tensors(random_sources(24, 20, seed=8, max_len=12))
    limits = max_output_lengths(lengths, 1.5, 3)
    for search in (
        lambda model, s, n: greedy_search(model, s, n, max_lengths=limits),
        lambda model, s, n: beam_search(model, s, n, max_lengths=limits, options=SearchOptions(beam_size=4, n_best=2)),
    ):
        expected = search(cpu_model, src, lengths)
        found = search(cuda_model, src.to(CUDA), lengths.to(CUDA))
        for cpu_hypotheses, cuda_hypotheses in zip(expected, found):
            for a, b in zip(cpu_hypotheses, cuda_hypotheses):
                assert b.tokens == a.tokens
                assert b.score == pytest.approx(a.score, abs=1e-4)
                assert torch.allclose(b.alignment, a.alignment, atol=1e-5)


@pytest.mark.parametrize("decoder", DECODERS.values(), ids=DECODERS.keys())
@pytest.mark.parametrize("score", ["additive", "location", "none"])
def test_searches_replayed_as_cuda_graphs_equal_the_eager_searches_on_the_cpu(decoder, score):
    """Batches of 7 sentences of falling length: several graphs, some replayed for a second batch."""
    cpu_model = tiny_model(vocab=20, seed=5, score=score, decoder=decoder)
    cuda_model = copy.deepcopy(cpu_model).to(CUDA)
    src, lengths = source_tensors(sorted(random_sources(40, 20, seed=9, max_len=15), key=len, reverse=True))
    limits = max_output_lengths(lengths, 1.5, 3)
    for eager, graphed, options in (
        (greedy_search, fixed_shape_greedy_search, SearchOptions(in_flight=7)),
        (beam_search, fixed_shape_beam_search, SearchOptions(beam_size=4, n_best=3, in_flight=7)),
    ):
        expected = eager(cpu_model, src, lengths, max_lengths=limits, options=options)
        found = graphed(cuda_model, src.to(CUDA), lengths.to(CUDA), max_lengths=limits, options=options)
        for cpu_hypotheses, cuda_hypotheses in zip(expected, found, strict=True):
            assert [h.tokens for h in cuda_hypotheses] == [h.tokens for h in cpu_hypotheses]
            for a, b in zip(cpu_hypotheses, cuda_hypotheses):
                assert b.score == pytest.approx(a.score, abs=1e-4)
                assert (a.alignment is None) == (b.alignment is None)
                if a.alignment is not None:
                    assert torch.allclose(b.alignment, a.alignment, atol=1e-5)


def _assert_graphed_steps_equal_eager_steps(eager_model, graphed, objective, batches, *, frozen=(), indices=None):
    """Three updates of `eager_model` and of `graphed`'s model (a copy), each training what
    requires gradients: the same losses and tokens at each step, two shapes captured (the
    second batch has the first one's padded shape, so its graphs replay on new data; the
    third needs a new one), and the same weights after. `frozen` and `indices` (each
    batch's pairs, or None) give the graphed steps kept passes."""
    graphed_model = graphed.model
    eager_optimizer = torch.optim.Adam([p for p in eager_model.parameters() if p.requires_grad], lr=0.01)
    graphed_optimizer = torch.optim.Adam([p for p in graphed_model.parameters() if p.requires_grad], lr=0.01)
    for batch, pairs in zip(batches, indices or [None] * len(batches), strict=True):
        eager_loss, tokens = training_step(StepContext(eager_model, eager_optimizer, objective, 1.0), batch)
        graphed_loss, graphed_tokens = training_step(
            StepContext(graphed_model, graphed_optimizer, objective, 1.0, graphed=graphed, frozen=frozen),
            batch,
            indices=pairs,
        )
        assert graphed_tokens == tokens
        assert graphed_loss == pytest.approx(eager_loss, rel=1e-5)
    assert len(graphed.graphed) == 2
    for (name, p), q in zip(eager_model.named_parameters(), graphed_model.parameters()):
        assert torch.allclose(q, p, rtol=1e-4, atol=1e-5), name


def _linked_batches():
    """Batches with links, one without any, and a new shape."""
    pairs, links = pairs_and_links(16, 23, seed=6)
    more_pairs, more_links = pairs_and_links(40, 23, seed=8)
    return [
        batch.to(CUDA)
        for batch in (
            make_batch(pairs, links=links),
            make_batch(pairs, links=[links[1]] * len(pairs)),
            make_batch(more_pairs, links=more_links),
        )
    ]


@pytest.mark.parametrize("decoder", {"luong": {"wiring": "luong"}, **DECODERS}.values())
def test_training_steps_replayed_as_cuda_graphs_equal_eager_steps(decoder):
    eager_model = tiny_model(vocab=20, seed=3, decoder=decoder).train().to(CUDA)
    graphed = GraphedLoss(copy.deepcopy(eager_model), Objective(0.1), longest_source=64)
    batches = [batch.to(CUDA) for batch in (_batch(seed=7), _batch(seed=9), _batch(seed=11, count=40))]
    _assert_graphed_steps_equal_eager_steps(eager_model, graphed, Objective(0.1), batches)


@pytest.mark.parametrize("coverage", [False, True], ids=["attention", "coverage"])
def test_guided_training_steps_replayed_as_cuda_graphs_equal_eager_steps(coverage):
    """Guided alignment (and coverage) keep the graphs, a batch without links among them."""
    eager_model = tiny_model(vocab=23, seed=4, decoder={"cell": "lstm"}, coverage=coverage).train().to(CUDA)
    objective = Objective(0.1, 0.7)
    graphed = GraphedLoss(copy.deepcopy(eager_model), objective, longest_source=64)
    _assert_graphed_steps_equal_eager_steps(eager_model, graphed, objective, _linked_batches())


def _with_module(*, null: bool):
    """A tiny model with a module whose weights are random, as a trained one's are."""
    return tiny_model_with_module(23, seed=4, null=null, decoder={"cell": "lstm"}).to(CUDA)


@pytest.mark.parametrize("null", [False, True], ids=["module", "module-null"])
def test_training_with_the_alignment_module_replayed_as_cuda_graphs_equals_eager_steps(null):
    """model.aligner: the module's terms (a padded, masked vocabulary; dense links) replay
    beside the translation's, guided term included."""
    eager_model = _with_module(null=null).train()
    objective = Objective(0.1, 0.5, aligner="both")
    graphed = GraphedLoss(copy.deepcopy(eager_model), objective, longest_source=64)
    _assert_graphed_steps_equal_eager_steps(eager_model, graphed, objective, _linked_batches())


@pytest.mark.parametrize("kept", [False, True], ids=["passes-computed", "passes-kept"])
def test_training_the_module_alone_replayed_as_cuda_graphs_equals_eager_steps(kept):
    """train-aligner: the translation frozen, the module's terms alone replayed, on passes
    computed at each step or kept (frozen_passes.py)."""
    eager_model = _with_module(null=True).eval()
    eager_model.requires_grad_(False)
    eager_model.aligner.requires_grad_(True)
    objective = Objective(aligner="both", translation=False)
    graphed = GraphedLoss(copy.deepcopy(eager_model), objective, longest_source=64)
    frozen: tuple[FrozenPasses, ...] = ()
    indices = None
    if kept:  # the first two batches' pairs kept, the third's computed
        pairs, _ = pairs_and_links(16, 23, seed=6)
        options = TrainConfig(batch_tokens=10_000)
        kept_passes = FrozenPasses(
            graphed.model, InMemoryPairs(pairs), options, budget=2**30, teacher_forced=graphed.teacher_forced
        )
        frozen, indices = (kept_passes,), [np.arange(16), np.arange(16), None]
    _assert_graphed_steps_equal_eager_steps(
        eager_model, graphed, objective, _linked_batches(), frozen=frozen, indices=indices
    )


def test_a_frozen_pass_replayed_as_a_cuda_graph_equals_the_eager_pass():
    """Two batches of one padded shape (the second replays the first one's graph on new
    data), then a new shape: readout and α at every real position, the source side's padding."""
    model = _with_module(null=False).eval()
    passes = GraphedPass(model, longest_source=64)
    for batch in _linked_batches():
        with torch.no_grad():
            readout, weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        found_readout, found_weights, found_state = passes(batch.src, batch.src_lengths, batch.tgt_in)
        real = batch.tgt_out != 0
        assert found_readout.shape == readout.shape and found_weights.shape == weights.shape
        torch.testing.assert_close(found_readout[real], readout[real], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(found_weights[real], weights[real], rtol=1e-5, atol=1e-6)
        assert torch.equal(found_state.padding, state.padding)
    assert len(passes.captured) == 2


def test_graph_replays_draw_new_dropout_masks_and_learn():
    model = tiny_model(vocab=20, seed=3).to(CUDA)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.3
    model.train()
    graphed = GraphedLoss(model, Objective(0.1), longest_source=64)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    batch = _batch(seed=7).to(CUDA)
    with torch.no_grad():
        twice = [graphed(batch)[0].item() for _ in range(2)]
    assert twice[0] != twice[1]
    losses = [
        training_step(StepContext(model, optimizer, Objective(0.1), 1.0, graphed=graphed), batch)[0] for _ in range(30)
    ]
    assert losses[-1] < 0.7 * losses[0]


def test_a_bf16_step_on_cuda_keeps_fp32_weights_alignments_and_loss():
    reference = tiny_model(vocab=20, seed=5).train().to(CUDA)
    mixed = copy.deepcopy(reference)
    batch = _batch(seed=3).to(CUDA)
    fp32_loss, _ = training_step(
        StepContext(reference, torch.optim.SGD(reference.parameters(), lr=0.1), Objective(0.1), 1.0), batch
    )
    bf16_loss, _ = training_step(
        StepContext(mixed, torch.optim.SGD(mixed.parameters(), lr=0.1), Objective(0.1), 1.0, precision="bf16"), batch
    )
    assert bf16_loss != fp32_loss and bf16_loss == pytest.approx(fp32_loss, rel=0.03)
    assert all(p.dtype == torch.float32 for p in mixed.parameters())
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        _, weights = mixed(batch.src, batch.src_lengths, batch.tgt_in)
        loss, _ = sequence_loss(mixed, batch, Objective(0.1))
    assert weights.dtype == torch.float32 and loss.dtype == torch.float32
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:2], device=CUDA), atol=1e-6)
    padded = torch.arange(batch.src.size(1), device=CUDA) >= batch.src_lengths.unsqueeze(1)
    assert bool((weights.masked_select(padded.unsqueeze(1).expand_as(weights)) == 0).all())


def test_a_model_trained_on_cuda_translates_the_same_on_the_cpu(corpus, tmp_path):
    config = write_config(tmp_path / "config.yaml", tiny_config(corpus, tmp_path / "run", device="cuda"))
    assert main(["train", str(config)]) == 0
    sources = ["Ein Hund läuft über eine Wiese.", "Zwei Männer spielen Fußball.", "Eine Frau singt."]
    on_cpu = rnnsearch.load(tmp_path / "run", device="cpu").translate(sources, beam_size=3)
    on_cuda = rnnsearch.load(tmp_path / "run", device="cuda").translate(sources, beam_size=3)
    assert [t.text for t in on_cuda] == [t.text for t in on_cpu]
    for a, b in zip(on_cpu, on_cuda):
        assert b.score == pytest.approx(a.score, abs=1e-3)
