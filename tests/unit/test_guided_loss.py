"""The guided-alignment loss: λ × the cross-entropy between each linked row of α and its
links' distribution, added to the label-smoothed cross-entropy; nothing when λ = 0 or a
batch has no links; the same gradients through the fused CPU loop as through the steps."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from rnnsearch import kernels
from rnnsearch.kernels import fused_decoder
from rnnsearch.text.batches import Batch, GuidedBatch, make_batch
from rnnsearch.training.loss import Objective, sequence_loss
from tests.conftest import random_sources, tiny_model

WEIGHT = 0.7


def pairs_and_links(count: int, vocab: int, seed: int):
    """Random pairs, each with random links inside it (one pair without any)."""
    sources = random_sources(count, vocab, seed=seed, min_len=2, max_len=11)
    targets = random_sources(count, vocab, seed=seed + 1, min_len=2, max_len=13)
    rng = np.random.default_rng(seed)
    links = []
    for k, (source, target) in enumerate(zip(sources, targets)):
        chosen = {(int(rng.integers(len(target))), int(rng.integers(len(source)))) for _ in range(len(target))}
        links.append(np.array(sorted(chosen), dtype=np.int64).reshape(-1, 2) if k != 1 else np.zeros((0, 2)))
    return list(zip(sources, targets)), links


def direct_guided_term(alignments: torch.Tensor, links: list[np.ndarray]) -> torch.Tensor:
    """Σ over the linked target pieces i of each pair of −Σ_j A_ij log α_ij, A_i uniform
    over the source pieces linked to i, from α directly, a row at a time."""
    total = alignments.new_zeros(())
    for pair, rows in enumerate(links):
        for target in sorted({int(t) for t, _ in rows}):
            sources = [int(s) for t, s in rows if t == target]
            total = total - alignments[pair, target, sources].log().sum() / len(sources)
    return total


def test_the_guided_loss_is_the_cross_entropy_plus_lambda_times_the_attentions_cross_entropy():
    model = tiny_model(vocab=23, seed=0).train()
    pairs, links = pairs_and_links(7, 23, seed=3)
    batch = make_batch(pairs, links=links)
    torch.manual_seed(0)
    guided, tokens = sequence_loss(model, batch, Objective(0.1, WEIGHT))
    torch.manual_seed(0)
    plain, same_tokens = sequence_loss(model, make_batch(pairs), Objective(0.1))
    torch.manual_seed(0)
    _, alignments = model(batch.src, batch.src_lengths, batch.tgt_in)
    assert tokens == same_tokens
    expected = plain + WEIGHT * direct_guided_term(alignments, links)
    assert guided.item() == pytest.approx(expected.item(), rel=1e-6)
    assert guided.item() > plain.item()


def loss_and_gradients(model, batch, *, fused: bool, weight: float):
    """The loss and its gradients under the CPU training kernels, with the fused loop
    (checked to run) or without it."""
    ran = []

    def counted(*args, **kwargs):
        ran.append(1)
        return fused_decoder.attentive_gru(*args, **kwargs)

    with kernels.use(replace(kernels.CPU_TRAINING, attentive_gru=counted if fused else None)):
        loss, _ = sequence_loss(model, batch, Objective(0.1, weight))
    assert bool(ran) == fused
    return loss, torch.autograd.grad(loss, list(model.parameters()))


@pytest.mark.parametrize("seed", [0, 1])
def test_the_fused_loop_gives_the_step_loops_guided_loss_and_gradients(seed):
    model = tiny_model(vocab=23, seed=seed).train()
    pairs, links = pairs_and_links(9, 23, seed=10 + seed)
    batch = make_batch(pairs, links=links)
    expected, expected_grads = loss_and_gradients(model, batch, fused=False, weight=WEIGHT)
    found, grads = loss_and_gradients(model, batch, fused=True, weight=WEIGHT)
    _, unguided_grads = loss_and_gradients(model, batch, fused=True, weight=0.0)
    assert found.item() == pytest.approx(expected.item(), rel=1e-6)
    for (name, _), g, e in zip(model.named_parameters(), grads, expected_grads, strict=True):
        assert torch.allclose(g, e, rtol=1e-4, atol=1e-5 * float(e.abs().max())), name
    attention = dict(zip((name for name, _ in model.named_parameters()), zip(grads, unguided_grads)))
    assert any(not torch.equal(g, u) for name, (g, u) in attention.items() if "attention" in name)


@pytest.mark.parametrize("fused", [False, True])
def test_lambda_zero_or_no_links_give_exactly_the_unguided_loss_and_gradients(fused):
    model = tiny_model(vocab=23, seed=2).train()
    pairs, links = pairs_and_links(6, 23, seed=4)
    torch.manual_seed(1)
    today, today_grads = loss_and_gradients(model, make_batch(pairs), fused=fused, weight=0.0)
    for batch, weight in (
        (make_batch(pairs, links=links), 0.0),
        (make_batch(pairs), WEIGHT),
        (make_batch(pairs, links=[np.zeros((0, 2))] * len(pairs)), WEIGHT),
    ):
        torch.manual_seed(1)
        loss, grads = loss_and_gradients(model, batch, fused=fused, weight=weight)
        assert torch.equal(loss, today)
        assert all(torch.equal(g, t) for g, t in zip(grads, today_grads, strict=True))


def test_a_batch_carries_its_guide_only_when_asked_and_moves_it_with_itself():
    pairs, links = pairs_and_links(3, 23, seed=5)
    assert type(make_batch(pairs)) is Batch and type(make_batch(pairs).to(torch.device("cpu"))) is Batch
    guided = make_batch(pairs, links=links).to(torch.device("cpu"))
    assert isinstance(guided, GuidedBatch)
    guide = guided.guide
    assert guide.entries.shape == (sum(len(rows) for rows in links), 3)
    sums: dict[tuple[int, int], float] = {}
    for (pair, target, _), weight in zip(guide.entries.tolist(), guide.weights.tolist()):
        sums[pair, target] = sums.get((pair, target), 0.0) + weight
    assert sums and all(total == pytest.approx(1.0) for total in sums.values())


def test_the_objective_is_the_configs_loss_terms_declared_once():
    from rnnsearch.config import config_from_dict

    data = {"train": {"src": "a", "tgt": "b", "alignments": "links"}, "valid": {"src": "c", "tgt": "d"}}
    config = config_from_dict({"data": data, "train": {"label_smoothing": 0.2, "guided_alignment_weight": 0.5}})
    objective = Objective.of(config)
    assert (objective.label_smoothing, objective.guided_alignment_weight, objective.guided) == (0.2, 0.5, True)
    assert objective.aligner is None and objective.translation
    plain = Objective.of(config_from_dict({"data": data}))
    assert not plain.guided and plain.label_smoothing == 0.1
    module = config_from_dict({"data": data, "model": {"aligner": True}, "train": {"aligner_objective": "links"}})
    frozen = Objective.of(module, translation=False)
    assert (frozen.aligner, frozen.translation, frozen.guided) == ("links", False, True)
    by_prediction = config_from_dict(
        {"data": data, "model": {"aligner": True}, "train": {"aligner_objective": "prediction"}}
    )
    assert not Objective.of(by_prediction, translation=False).guided
