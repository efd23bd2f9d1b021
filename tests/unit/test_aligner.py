"""The alignment module (rnnsearch/model/aligner.py): it sees the word it aligns, its rows
are distributions over the source, and training it never changes the translation."""

import copy
import functools

import pytest
import torch

from rnnsearch.alignments.words import hard_alignment
from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.model.aligner import Normalising
from rnnsearch.model.ensemble import Ensemble
from rnnsearch.model.objectives import OBJECTIVES, TERMS, Prediction, agreement_loss
from rnnsearch.model.seq2seq import build_aligner
from rnnsearch.search.beam import beam_search
from rnnsearch.search.fixed_shape import fixed_shape_beam_search, fixed_shape_greedy_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import make_batch, source_tensors
from rnnsearch.text.subwords import BOS
from rnnsearch.training.loss import Objective, sequence_loss, two_way_loss
from tests.conftest import random_sources, tiny_model, tiny_model_with_module

VOCAB = 12


def with_module(seed: int = 0, *, null: bool = False):
    """A tiny model with a module whose weights are random."""
    return tiny_model_with_module(VOCAB, seed=seed, null=null)


def forced_rows(model, src, lengths, targets):
    tgt_in = torch.cat([torch.full((targets.size(0), 1), BOS), targets[:, :-1]], 1)
    readout, weights, state = model.teacher_forced(src, lengths, tgt_in)
    return weights, model.aligner_rows(src, state, readout, weights, targets).alignment()


def test_the_modules_row_for_y_i_sees_y_i_and_the_attentions_does_not():
    """Change y_i alone: row i of α (computed before y_i is known) stays; row i of β moves."""
    model = with_module()
    src, lengths = source_tensors(random_sources(4, VOCAB, seed=3, min_len=4))
    targets = torch.randint(4, VOCAB, (4, 6))
    changed = targets.clone()
    i = 3
    changed[:, i] = 4 + (targets[:, i] - 3) % (VOCAB - 4)
    with torch.no_grad():
        alpha, beta = forced_rows(model, src, lengths, targets)
        alpha_changed, beta_changed = forced_rows(model, src, lengths, changed)
    torch.testing.assert_close(alpha[:, : i + 1], alpha_changed[:, : i + 1], rtol=0, atol=0)
    torch.testing.assert_close(beta[:, :i], beta_changed[:, :i], rtol=0, atol=0)
    moved = (beta[:, i].log() - beta_changed[:, i].log()).nan_to_num().abs().amax(dim=1)
    assert moved.min() > 1e-2  # every sentence's row moved


@pytest.mark.parametrize("null", [False, True], ids=["without-null", "with-null"])
def test_rows_are_distributions_over_the_real_source_positions(null):
    """With the NULL option, a row and its mass on NULL make one distribution."""
    model = with_module(null=null)
    batch = make_batch(pairs(5, seed=5))
    with torch.no_grad():
        rows = module_rows(model, batch)
    beta = rows.alignment()
    assert beta.shape == (*batch.tgt_out.shape, batch.src.size(1))
    nothing = rows.log_null().exp() if null else torch.zeros(batch.tgt_out.shape)
    torch.testing.assert_close(beta.sum(-1) + nothing, torch.ones(batch.tgt_out.shape))
    assert not null or (nothing[batch.tgt_out != 0] > 0).all()
    padded = torch.arange(batch.src.size(1)).unsqueeze(0) >= batch.src_lengths.unsqueeze(1)
    assert (beta.masked_select(padded.unsqueeze(1).expand_as(beta)) == 0).all()


def test_the_batch_vocabulary_normalises_as_the_whole_one_does_when_it_is_the_whole_one():
    model = with_module()
    src, lengths = source_tensors(random_sources(3, VOCAB, seed=6))
    targets = torch.randint(4, VOCAB, (3, 5))
    tgt_in = torch.cat([torch.full((3, 1), BOS), targets[:, :-1]], 1)
    with torch.no_grad():
        readout, weights, state = model.teacher_forced(src, lengths, tgt_in)
        rows = functools.partial(model.aligner_rows, src, state, readout, weights, targets)
        whole, listed = rows().log_likelihood(), rows(Normalising(torch.arange(VOCAB))).log_likelihood()
        batch = rows(Normalising(targets.unique())).log_likelihood()
    torch.testing.assert_close(whole, listed)
    assert (batch >= whole - 1e-6).all()  # fewer pieces to share the mass with


@pytest.mark.parametrize("null", [False, True])
def test_normalisers_known_from_earlier_batches_give_the_rows_computed_afresh(null):
    """Two batches aligned with one table of normalisers: the second reads the pieces the
    first computed and adds its own, and both get the rows computed without the table."""
    model = with_module(null=null)
    known = model.aligner.normaliser_table(model.encoder.embedding.weight)
    for seed, sources in ((6, 3), (7, 5)):
        src, lengths = source_tensors(random_sources(sources, VOCAB, seed=seed))
        targets = torch.randint(4, VOCAB, (sources, 5))
        tgt_in = torch.cat([torch.full((sources, 1), BOS), targets[:, :-1]], 1)
        with torch.no_grad():
            readout, weights, state = model.teacher_forced(src, lengths, tgt_in)
            rows = functools.partial(model.aligner_rows, src, state, readout, weights, targets)
            torch.testing.assert_close(rows(Normalising(known=known)).log_lexical, rows().log_lexical)
        seen = set(src.flatten().tolist()) | ({-1} if null else set())
        assert {index if index < VOCAB else -1 for index in known.isfinite().nonzero().flatten().tolist()} >= seen


def test_the_table_of_normalisers_is_kept_until_a_weight_it_reads_changes():
    """A second pass reads the normalisers the first computed; once a weight they depend
    on changes (the lexicon's, or the source embedding E_x) the table starts afresh, so
    no row is read with a stale normaliser. A table started under a caller's inference
    mode is written outside it too."""
    model = with_module(null=True)

    def rows_with_and_without_table(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        src, lengths = source_tensors(random_sources(3, VOCAB, seed=seed))
        targets = torch.randint(4, VOCAB, (3, 5))
        tgt_in = torch.cat([torch.full((3, 1), BOS), targets[:, :-1]], 1)
        known = model.aligner.normaliser_table(model.encoder.embedding.weight)
        readout, weights, state = model.teacher_forced(src, lengths, tgt_in)
        rows = functools.partial(model.aligner_rows, src, state, readout, weights, targets)
        return rows(Normalising(known=known)).log_lexical, rows().log_lexical

    with torch.no_grad():
        first = model.aligner.normaliser_table(model.encoder.embedding.weight)
        rows_with_and_without_table(8)
        assert model.aligner.normaliser_table(model.encoder.embedding.weight) is first
        for weight in (model.aligner.words.weight, model.encoder.embedding.weight):
            weight.add_(torch.randn_like(weight))
            torch.testing.assert_close(*rows_with_and_without_table(8))
        assert model.aligner.normaliser_table(model.encoder.embedding.weight) is not first
    with torch.inference_mode():
        model.aligner.words.weight.add_(1.0)
        rows_with_and_without_table(9)
    with torch.no_grad():
        torch.testing.assert_close(*rows_with_and_without_table(10))  # pieces the first pass did not see


def pairs(count: int, seed: int):
    sources = random_sources(count, VOCAB, seed=seed, min_len=3)
    generator = torch.Generator().manual_seed(seed + 1)
    return [(s, torch.randint(4, VOCAB, (len(s),), generator=generator).tolist()) for s in sources]


@pytest.mark.parametrize("objective", ["prediction", "links", "both"])
def test_training_the_module_leaves_every_translation_weight_as_it_was(objective):
    """The frozen objective, and the module's term beside the translation's (joint training):
    its gradient never reaches a translation weight."""
    model = with_module()
    before = {name: p.detach().clone() for name, p in model.named_parameters() if not name.startswith("aligner.")}
    links = [torch.tensor([[k, k] for k in range(len(t))]).numpy() for _, t in pairs(6, seed=2)]
    batch = make_batch(pairs(6, seed=2), links=links)
    frozen = Objective(aligner=objective, translation=False)
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    optimizer = torch.optim.Adam(model.aligner.parameters(), lr=0.01)
    module_before = [p.detach().clone() for p in model.aligner.parameters()]
    for _ in range(3):
        loss, _ = sequence_loss(model, batch, frozen)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for name, parameter in model.named_parameters():
        if not name.startswith("aligner."):
            assert torch.equal(parameter, before[name]), name
    assert any(not torch.equal(a, b) for a, b in zip(module_before, model.aligner.parameters()))
    model.requires_grad_(True)
    joint = Objective(label_smoothing=0.1, aligner=objective)
    alone = Objective(label_smoothing=0.1)
    loss, _ = sequence_loss(model, batch, joint)
    with_term = torch.autograd.grad(loss, [p for n, p in model.named_parameters() if not n.startswith("aligner.")])
    loss, _ = sequence_loss(model, batch, alone)
    without = torch.autograd.grad(loss, [p for n, p in model.named_parameters() if not n.startswith("aligner.")])
    for a, b in zip(with_term, without):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def train_module(model, batch, objective: str, *, steps: int) -> None:
    """`steps` updates of the model's module alone (Adam, rate 0.05) on one batch by `objective`."""
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    optimizer = torch.optim.Adam(model.aligner.parameters(), lr=0.05)
    for _ in range(steps):
        loss, _ = sequence_loss(model, batch, Objective(aligner=objective, translation=False))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_the_links_term_pulls_the_rows_towards_the_links():
    model = with_module(seed=4)
    data = pairs(8, seed=9)
    links = [torch.tensor([[k, len(s) - 1 - k] for k in range(len(s))]).numpy() for s, _ in data]
    batch = make_batch(data, links=links)
    train_module(model, batch, "links", steps=150)
    with torch.no_grad():
        _, beta = forced_rows(model, batch.src, batch.src_lengths, batch.tgt_out)
    hits = total = 0
    for b, (source, target) in enumerate(data):
        for k in range(len(target)):
            hits += int(beta[b, k].argmax()) == len(source) - 1 - k
            total += 1
    assert hits / total > 0.95


SEARCHES = {
    "greedy": (greedy_search, SearchOptions()),
    "beam": (beam_search, SearchOptions(beam_size=3, n_best=2)),
    "fixed-shape-greedy": (fixed_shape_greedy_search, SearchOptions()),
    "fixed-shape-beam": (fixed_shape_beam_search, SearchOptions(beam_size=3, n_best=2)),
}


CASES = [(name, False) for name in SEARCHES] + [("greedy", True), ("beam", True)]  # fixed-shape: single models


@pytest.mark.parametrize(("name", "ensemble"), CASES, ids=[f"{n}-{'ensemble' if e else 'single'}" for n, e in CASES])
def test_search_finds_the_same_translations_with_and_without_the_module(name, ensemble):
    function, options = SEARCHES[name]
    plain = [tiny_model(VOCAB, seed=seed) for seed in (0, 7)]
    aligned = [copy.deepcopy(model) for model in plain]
    for model in aligned:
        model.aligner = build_aligner(model, size=8)
    src, lengths = source_tensors(random_sources(6, VOCAB, seed=11))
    limits = max_output_lengths(lengths, 1.5, 3)

    def found(models):
        model = Ensemble(models, [0, 0]) if ensemble else models[0]
        with torch.no_grad():
            return function(model, src, lengths, max_lengths=limits, options=options)

    for expected, got in zip(found(plain), found(aligned), strict=True):
        for a, b in zip(expected, got, strict=True):
            assert a.tokens == b.tokens and a.score == b.score and torch.equal(a.alignment, b.alignment)


def test_the_objective_sums_the_terms_its_registry_entry_names(monkeypatch):
    """An objective is an entry of model/objectives.py's registry: its loss is the sum of
    its terms', and a new term is a class there, with nothing else to change."""

    class Doubled(Prediction):
        name = "doubled"

        def loss(self, rows, real, links):
            return 2 * super().loss(rows, real, links)

    monkeypatch.setitem(TERMS, "doubled", Doubled())
    monkeypatch.setitem(OBJECTIVES, "doubled and links", ("doubled", "links"))
    model = with_module(seed=3)
    data = pairs(5, seed=4)
    batch = make_batch(data, links=[torch.tensor([[0, 0]]).numpy() for _ in data])
    loss = {name: sequence_loss(model, batch, Objective(aligner=name, translation=False))[0] for name in OBJECTIVES}
    torch.testing.assert_close(loss["doubled and links"], 2 * loss["prediction"] + loss["links"])
    torch.testing.assert_close(loss["both"], loss["prediction"] + loss["links"])
    assert Objective(aligner="doubled and links").guided and not Objective(aligner="prediction").guided


def test_an_objective_outside_the_registry_is_refused_naming_the_registered_ones():
    tree = {"data": {"train": {"src": "a", "tgt": "b"}, "valid": {"src": "a", "tgt": "b"}}}
    with pytest.raises(UserError, match="train.aligner_objective: unknown alignment module objective 'agree'; choose"):
        config_from_dict({**tree, "train": {"aligner_objective": "agree"}})


def both_ways(count: int, seed: int):
    """A batch of pairs and the same pairs read the other way round."""
    given = pairs(count, seed=seed)
    return make_batch(given), make_batch([(target, source) for source, target in given])


def frozen_with_module(seed: int):
    model = with_module(seed)
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    return model


def test_agreement_is_the_same_either_way_round_and_its_gradient_reaches_both_modules():
    forward, backward = frozen_with_module(0), frozen_with_module(5)
    batch, reverse = both_ways(6, seed=2)
    agreeing = Objective(aligner="prediction", translation=False, agreement_weight=1.0)
    loss, tokens = two_way_loss(forward, backward, (batch, reverse), agreeing)
    swapped, swapped_tokens = two_way_loss(backward, forward, (reverse, batch), agreeing)
    torch.testing.assert_close(swapped, loss, rtol=1e-6, atol=0)
    assert tokens == swapped_tokens == batch.target_tokens + reverse.target_tokens
    apart = Objective(aligner="prediction", translation=False)
    assert loss > two_way_loss(forward, backward, (batch, reverse), apart)[0]
    with torch.no_grad():
        rows = [
            forced_rows(net, b.src, b.src_lengths, b.tgt_out)[1] for net, b in ((forward, batch), (backward, reverse))
        ]
    assert not torch.allclose(rows[0], rows[1].transpose(1, 2))  # two random modules disagree
    forward_rows, backward_rows = (module_rows(net, b) for net, b in ((forward, batch), (backward, reverse)))
    agreement_loss(forward_rows, backward_rows, batch.tgt_out != 0, reverse.tgt_out != 0).backward()
    for net in (forward, backward):
        assert all(p.grad is not None for p in net.aligner.parameters())
        assert any(p.grad.abs().sum() > 0 for p in net.aligner.parameters())


def module_rows(model, batch):
    readout, weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
    return model.aligner_rows(batch.src, state, readout, weights, batch.tgt_out)


def test_with_no_agreement_two_modules_trained_together_have_the_losses_each_has_alone():
    forward, backward = frozen_with_module(0), frozen_with_module(5)
    batch, reverse = both_ways(6, seed=2)
    apart = Objective(aligner="both", translation=False)
    together, tokens = two_way_loss(forward, backward, (batch, reverse), apart)
    alone = [sequence_loss(net, b, apart) for net, b in ((forward, batch), (backward, reverse))]
    assert torch.equal(together, alone[0][0] + alone[1][0])
    assert tokens == alone[0][1] + alone[1][1]


def test_a_target_word_no_source_word_translates_puts_its_mass_on_null_and_gets_no_link():
    """Targets translate their sources piece by piece and carry one more piece, FILLER,
    that no source piece stands for and no link names: a module with the NULL option
    learns to put FILLER's mass on NULL, and the hard links leave it unaligned."""
    filler = VOCAB - 1
    generator = torch.Generator().manual_seed(3)
    data, links = [], []
    for source in random_sources(12, VOCAB - 1, seed=8, min_len=3):
        at = int(torch.randint(0, len(source) + 1, (1,), generator=generator))
        target = [*source[:at], filler, *source[at:]]
        data.append((source, target))
        links.append(torch.tensor([[k + (k >= at), k] for k in range(len(source))]).numpy())
    model = with_module(seed=2, null=True)
    batch = make_batch(data, links=links)
    train_module(model, batch, "both", steps=100)
    with torch.no_grad():
        rows = module_rows(model, batch)
    on_null, beta = rows.log_null().exp(), rows.alignment()
    for b, (source, target) in enumerate(data):
        at = target.index(filler)
        assert on_null[b, at] > 0.5
        words = beta[b, : len(target), : len(source)].numpy()  # each piece a word; "</s>" left out
        linked = {word for _, word in hard_alignment(words, on_null[b, : len(target)].numpy())}
        assert linked == set(range(len(target))) - {at}
