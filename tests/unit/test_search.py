import itertools
import math

import pytest
import torch

from rnnsearch.search.beam import beam_search, top_extensions
from rnnsearch.search.greedy import greedy_search, row_maxima
from rnnsearch.search.rules import CHUNK, SearchCancelled, SearchOptions, coverage_log, max_output_lengths, score
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS, EOS, PAD
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model


def search(model, sources, beam_size=1, n_best=1, penalty=1.0, ratio=1.5, extra=3, coverage=0.0):
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, ratio, extra)
    if beam_size == 1:
        return greedy_search(model, src, lengths, max_lengths=limits, options=SearchOptions(length_penalty=penalty))
    options = SearchOptions(beam_size=beam_size, n_best=n_best, length_penalty=penalty, coverage_penalty=coverage)
    return beam_search(model, src, lengths, max_lengths=limits, options=options)


def test_beam_of_one_equals_greedy(model):
    sources = random_sources(20, 12, seed=6)
    greedy = search(model, sources, beam_size=1)
    src, lengths = source_tensors(sources)
    beam = beam_search(model, src, lengths, max_lengths=max_output_lengths(lengths, 1.5, 3), options=SearchOptions())
    for g, b in zip(greedy, beam):
        assert g[0].tokens == b[0].tokens
        assert g[0].score == pytest.approx(b[0].score, abs=1e-5)
        assert torch.allclose(g[0].alignment, b[0].alignment, atol=1e-6)


ARCHITECTURES = {
    "luong": {"wiring": "luong"},
    "luong-input-feeding-lstm": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
    "bahdanau-lstm-2-layers": {"cell": "lstm", "layers": 2},
}


@pytest.mark.parametrize("attention_coverage", [False, True], ids=["", "attention-coverage"])
@pytest.mark.parametrize("decoder", ARCHITECTURES.values(), ids=ARCHITECTURES.keys())
def test_beam_of_one_equals_greedy_and_batches_do_not_matter_for_every_decoder(decoder, attention_coverage):
    """Beams reorder the whole recurrent state: LSTM cells, fed-back h̃ and the coverage too."""
    model = tiny_model(vocab=20, seed=2, decoder=decoder, coverage=attention_coverage)
    sources = random_sources(24, 20, seed=8, max_len=12)
    greedy = [h[0].tokens for h in search(model, sources, beam_size=1)]
    src, lengths = source_tensors(sources)
    beam_one = beam_search(
        model, src, lengths, max_lengths=max_output_lengths(lengths, 1.5, 3), options=SearchOptions()
    )
    assert [h[0].tokens for h in beam_one] == greedy
    wide = [h[0].tokens for h in search(model, sources, beam_size=4)]
    one_by_one = [search(model, [source], beam_size=4)[0][0].tokens for source in sources]
    assert one_by_one == wide


@pytest.mark.parametrize("attention_coverage", [False, True], ids=["", "attention-coverage"])
@pytest.mark.parametrize("beam_size, coverage", [(1, 0.0), (4, 0.0), (4, 0.5)])
def test_translation_does_not_depend_on_batch_size(beam_size, coverage, attention_coverage):
    model = tiny_model(vocab=20, seed=1, coverage=attention_coverage)
    sources = random_sources(64, 20, seed=7, max_len=14)
    reference = [h[0].tokens for h in search(model, sources, beam_size, coverage=coverage)]
    for size in (1, 7):
        outputs = []
        for start in range(0, len(sources), size):
            outputs += [h[0].tokens for h in search(model, sources[start : start + size], beam_size, coverage=coverage)]
        assert outputs == reference


def _in_flight_search(model, sources, beam_size, n_best, in_flight):
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    if beam_size == 1:
        return greedy_search(model, src, lengths, max_lengths=limits, options=SearchOptions(in_flight=in_flight))
    options = SearchOptions(beam_size=beam_size, n_best=n_best, in_flight=in_flight)
    return beam_search(model, src, lengths, max_lengths=limits, options=options)


ATTENTIONS = {
    "additive": {},
    "additive-coverage": {"coverage": True},
    "location": {"score": "location"},
    "none": {"score": "none"},
}


@pytest.mark.parametrize("beam_size, n_best", [(1, 1), (4, 3)])
@pytest.mark.parametrize("attention", ATTENTIONS.values(), ids=ATTENTIONS.keys())
def test_sentences_joining_a_batch_in_flight_get_the_same_output(beam_size, n_best, attention):
    """With 5 places, sentences of other lengths join rows that are mid-sentence: the
    source side (and the coverage) is cut and padded around them, and each row's history
    starts later."""
    model = tiny_model(vocab=20, seed=4, **attention)
    sources = sorted(random_sources(40, 20, seed=9, max_len=15), key=len, reverse=True)
    everything_at_once = _in_flight_search(model, sources, beam_size, n_best, None)
    for in_flight in (1, 5):
        assert_same_hypotheses(everything_at_once, _in_flight_search(model, sources, beam_size, n_best, in_flight))


def _teacher_forced(model, source, tokens):
    """log p(tokens, </s> | source) and the alignment α of that output."""
    src, lengths = source_tensors([source])
    tgt_in = torch.tensor([[BOS] + tokens])
    target = tokens + [EOS]
    with torch.no_grad():
        readout, weights = model(src, lengths, tgt_in)
        log_probs = model.logits(readout).log_softmax(-1)[0]
    return sum(float(log_probs[i, t]) for i, t in enumerate(target)), weights[0]


@pytest.mark.parametrize(
    "penalty, coverage, attention_coverage", [(0.0, 0.0, False), (1.0, 0.0, False), (1.0, 2.0, False), (1.0, 2.0, True)]
)
def test_beam_as_wide_as_the_search_space_finds_the_exhaustive_best(penalty, coverage, attention_coverage):
    """Teacher forcing scores every candidate as search does: with coverage too, which
    the teacher-forced pass accumulates as the steps of search do."""
    vocab = 6  # outputs: <unk>, 4, 5 and </s>
    model = tiny_model(vocab=vocab, seed=3, coverage=attention_coverage)
    source = [4, 5, 5]
    limit = 4  # at most 3 tokens, then </s>
    words = [1, 4, 5]
    candidates = [list(c) for n in range(limit) for c in itertools.product(words, repeat=n)]
    options = SearchOptions(
        beam_size=len(candidates), n_best=len(candidates), length_penalty=penalty, coverage_penalty=coverage
    )
    scores = {tuple(c): score(*_forced_score_terms(model, source, c), options) for c in candidates}
    best = list(max(scores, key=scores.get))
    src, lengths = source_tensors([source])
    found = beam_search(model, src, lengths, max_lengths=torch.tensor([limit]), options=options)[0]
    assert found[0].tokens == best
    assert found[0].log_prob == pytest.approx(_teacher_forced(model, source, best)[0], abs=1e-4)
    assert [h.score for h in found] == pytest.approx(sorted(scores.values(), reverse=True), abs=1e-4)
    assert sorted(tuple(h.tokens) for h in found) == sorted(tuple(c) for c in candidates)


def _forced_score_terms(model, source, tokens):
    log_prob, alignment = _teacher_forced(model, source, tokens)
    return log_prob, len(tokens) + 1, alignment


def test_the_coverage_penalty_ranks_a_hypothesis_that_skips_words_lower():
    """The penalty ranks the same finished hypotheses of each beam: it changes some
    choices, and each choice covers the source at least as well as the one it replaces."""
    model = tiny_model(vocab=20, seed=5)
    sources = random_sources(30, 20, seed=3, max_len=10)
    plain = search(model, sources, beam_size=5)
    covered = search(model, sources, beam_size=5, coverage=5.0)
    assert [h[0].tokens for h in plain] != [h[0].tokens for h in covered]
    for before, after in zip(plain, covered):
        assert coverage_log(after[0].alignment) >= coverage_log(before[0].alignment) - 1e-6


def test_coverage_log_sums_the_capped_attention_of_the_source_words_only():
    alignment = torch.tensor(
        [
            [0.5, 0.25, 0.25, 0.0],
            [0.75, 0.0, 0.125, 0.125],
            [0.0, 0.0, 0.0, 1.0],  # </s>'s column is not a word: its weight counts for nothing
        ]
    )
    assert coverage_log(alignment) == pytest.approx(math.log(1.0) + math.log(0.25) + math.log(0.375))
    unread = torch.tensor([[1.0, 0.0, 0.0]])  # the second word never attended to
    assert coverage_log(unread) == pytest.approx(math.log(torch.finfo(torch.float32).tiny))


def test_nbest_is_sorted_distinct_and_carries_alignments(model):
    sources = random_sources(6, 12, seed=8)
    results = search(model, sources, beam_size=5, n_best=3)
    for source, nbest in zip(sources, results):
        assert len(nbest) == 3
        scores = [h.score for h in nbest]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.tokens) for h in nbest}) == 3
        for h in nbest:
            assert h.alignment.shape == (len(h.tokens) + 1, len(source) + 1)
            assert torch.allclose(h.alignment.sum(1), torch.ones(len(h.tokens) + 1), atol=1e-5)
            assert h.log_prob <= 0 and math.isfinite(h.score)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_outputs_respect_the_length_limit_and_never_emit_specials(beam_size):
    model = tiny_model(seed=4)
    with torch.no_grad():
        model.decoder.output_layer.bias[EOS] = -100.0  # the model never wants to stop
    sources = random_sources(10, 12, seed=9)
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.0, 2)
    for nbest, limit in zip(search(model, sources, beam_size, ratio=1.0, extra=2), limits):
        assert len(nbest[0].tokens) + 1 == int(limit)
        assert not {PAD, BOS, EOS} & set(nbest[0].tokens)


@pytest.mark.parametrize("score", ["additive", "additive-coverage", "general", "cosine", "location", "none"])
@pytest.mark.parametrize(
    "decoder", [{}, {"wiring": "luong", "input_feeding": True, "cell": "lstm"}], ids=["bahdanau", "luong-feeding"]
)
def test_beams_sharing_one_source_side_step_like_rows_with_their_own_copies(score, decoder):
    """A beam's K rows read one copy of the sentence's h_j; every step, reordering within
    beams and retiring whole sentences must give what K private copies give. Each row
    keeps its own coverage."""
    covered = score == "additive-coverage"
    model = tiny_model(vocab=20, seed=3, score=score.removesuffix("-coverage"), decoder=decoder, coverage=covered)
    src, lengths = source_tensors(random_sources(6, 20, seed=2, min_len=2, max_len=10))
    k, state = 3, model.encode(src, lengths)
    shared, copied = state.tile_beams(k), state.select(torch.arange(6).repeat_interleave(k))
    assert shared.annotations.size(0) == 6 and copied.annotations.size(0) == 6 * k
    prev = torch.randint(4, 20, (6 * k,), generator=torch.Generator().manual_seed(0))
    for step in range(4):
        shared_log_probs, shared, shared_weights = model.step(prev, shared)
        copied_log_probs, copied, copied_weights = model.step(prev, copied)
        assert torch.allclose(shared_log_probs, copied_log_probs, atol=1e-6)
        assert (shared_weights is None) == (copied_weights is None)
        if shared_weights is not None:
            assert torch.allclose(shared_weights, copied_weights, atol=1e-7)
        blocks = shared.state.size(0) // k
        within = torch.stack([torch.randperm(k) for _ in range(blocks)]) + torch.arange(blocks).unsqueeze(1) * k
        shared, copied = shared.reorder_beams(within.view(-1)), copied.reorder_beams(within.view(-1))
        prev = shared_log_probs.argmax(-1)[within.view(-1)]
        if step == 1:  # the second and fifth sentences finish
            rows = torch.tensor([b * k + j for b in (0, 2, 3, 5) for j in range(k)])
            shared, copied, prev = shared.select(rows), copied.select(rows), prev[rows]


@pytest.mark.parametrize("columns", [CHUNK * 3, CHUNK * 3 + 5, 7])
def test_row_maxima_equal_max_with_its_first_index_on_ties(columns):
    generator = torch.Generator().manual_seed(columns)
    scores = torch.randint(-40, 40, (200, columns), generator=generator).float()  # many ties
    scores[0] = -math.inf
    scores[1, :-1] = -math.inf  # the maximum in the last, possibly partial, chunk
    best, column = row_maxima(scores)
    expected = scores.max(1)
    assert torch.equal(best, expected.values)
    first = [int((row == top).nonzero()[0]) for row, top in zip(scores, expected.values)]
    assert column.tolist() == first


@pytest.mark.parametrize("attention_coverage", [False, True], ids=["", "attention-coverage"])
@pytest.mark.parametrize("decoder", [{}, {"wiring": "luong", "input_feeding": True, "cell": "lstm"}])
def test_retiring_rows_in_place_keeps_every_remaining_row_as_it_was(decoder, attention_coverage):
    """Rows that end are replaced by the last rows; each kept row must carry its whole
    state (recurrent part, coverage and source side) to its new place, and say where it was."""
    model = tiny_model(vocab=20, seed=3, decoder=decoder, coverage=attention_coverage)
    src, lengths = source_tensors(random_sources(9, 20, seed=4, min_len=2, max_len=10))
    state = model.encode(src, lengths)
    _, state, _ = model.step(torch.full((9,), BOS), state)
    copy = state.select(torch.arange(9))
    ended = torch.tensor([True, False, False, True, False, False, False, True, False])
    kept, order = state.without(ended)
    assert sorted(order.tolist()) == [1, 2, 4, 5, 6, 8]
    for tensor, original in zip(kept.fields(), copy.fields()):
        if original is not None:
            assert torch.equal(tensor, original[order])
    unchanged, order = kept.without(torch.zeros(6, dtype=torch.bool))
    assert order.tolist() == list(range(6)) and torch.equal(unchanged.state, kept.state)


@pytest.mark.parametrize("beam_size", [1, 4])
def test_a_cancelled_search_stops_before_its_next_step(model, beam_size):
    asked = []

    def cancelled():
        asked.append(True)
        return len(asked) > 3

    src, lengths = source_tensors(random_sources(10, 12, seed=5, min_len=5))
    limits = max_output_lengths(lengths, 1.5, 3)
    with pytest.raises(SearchCancelled):
        options = SearchOptions(beam_size=beam_size, cancelled=cancelled)
        search = greedy_search if beam_size == 1 else beam_search
        search(model, src, lengths, max_lengths=limits, options=options)
    assert len(asked) == 4  # three steps ran; the fourth was not started


@pytest.mark.parametrize("vocab", [CHUNK * 5, CHUNK * 5 + 7, CHUNK - 3])
def test_top_extensions_equal_a_top_k_over_all_extensions(vocab):
    torch.manual_seed(vocab)
    sentences, k = 6, 4
    log_probs = torch.randn(sentences * k, vocab).log_softmax(-1)
    log_prob = torch.randn(sentences, k)
    log_prob[0, 1:] = -math.inf  # a sentence with one live hypothesis, as at the first step
    log_prob[1, 2] = -math.inf  # a closed slot
    log_probs[5, :] = -math.inf  # a row that may only end, restricted to </s>
    log_probs[5, EOS] = -0.5
    expected = (log_prob.view(-1, 1) + log_probs).view(sentences, -1).topk(k, dim=1)
    scores, parents, tokens = top_extensions(log_prob, log_probs, k)
    torch.testing.assert_close(scores, expected.values, rtol=0, atol=0)
    assert torch.equal(parents * vocab + tokens, expected.indices)
    live = torch.isfinite(log_prob).view(-1).nonzero().squeeze(1)  # the only rows scored
    for found, wanted in zip(top_extensions(log_prob, log_probs[live], k, live), (scores, parents, tokens)):
        assert torch.equal(found, wanted)


def test_top_extensions_name_real_tokens_when_fewer_than_k_are_possible():
    vocab, k = CHUNK + 5, 3
    log_probs = torch.full((k, vocab), -math.inf)
    log_probs[0, EOS] = -0.1  # the one live hypothesis may only end
    log_prob = torch.tensor([[0.0, -math.inf, -math.inf]])
    scores, parents, tokens = top_extensions(log_prob, log_probs, k)
    assert scores[0, 0] == -0.1 and parents[0, 0] == 0 and tokens[0, 0] == EOS
    assert bool((tokens >= 0).all() and (tokens < vocab).all() and (parents < k).all())
