import pytest
import torch

from rnnsearch.model.scores import SCORES
from rnnsearch.model.seq2seq import build_model
from rnnsearch.model.settings import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import make_batch, source_tensors
from rnnsearch.text.subwords import BOS
from tests.conftest import random_sources, tiny_model

ARCHITECTURES = {
    "bahdanau": ({}, {}),
    "bahdanau-lstm-2-layers": ({}, {"cell": "lstm", "layers": 2}),
    "bahdanau-tied": ({}, {"tied_embeddings": True}),
    "unidirectional-lstm-encoder-3-layers": ({"cell": "lstm", "bidirectional": False, "layers": 3}, {}),
    "luong": ({}, {"wiring": "luong"}),
    "luong-input-feeding": ({}, {"wiring": "luong", "input_feeding": True}),
    "luong-lstm-2-layers": ({}, {"wiring": "luong", "cell": "lstm", "layers": 2}),
    "luong-input-feeding-lstm-4-layers-maxout": (
        {"layers": 2},
        {"wiring": "luong", "input_feeding": True, "cell": "lstm", "layers": 4, "readout": "maxout"},
    ),
}


def assert_teacher_forcing_equals_single_steps(model, vocab: int = 12):
    src, lengths = source_tensors(random_sources(5, vocab, seed=4))
    targets = torch.randint(4, vocab, (5, 7))
    tgt_in = torch.cat([torch.full((5, 1), BOS), targets[:, :-1]], 1)
    with torch.no_grad():
        readout_all, weights_all = model(src, lengths, tgt_in)
        forced = model.logits(readout_all).log_softmax(-1)
        state = model.encode(src, lengths)
        for i in range(tgt_in.size(1)):
            log_probs, state, weights = model.step(tgt_in[:, i], state)
            assert torch.allclose(log_probs, forced[:, i], atol=1e-5)
            if not model.has_alignment:
                assert weights is None and weights_all is None
            else:
                assert torch.allclose(weights, weights_all[:, i], atol=1e-6)


@pytest.mark.parametrize(("wiring", "first_changed"), [("bahdanau", 1), ("luong", 0)])
def test_row_i_of_alpha_is_the_step_that_outputs_y_i(wiring, first_changed):
    """Which target tokens row i of α depends on, so that the word links read from it are
    not one row off (docs/model.md §2 and §4). Step i outputs y_i and takes y_{i-1} as its
    input. Bahdanau attends with s_{i-1}, before the step's input enters the RNN: row i
    depends on y_{<i-1} only, and changing y_k first moves row k + 2. Luong attends with
    s_i, after it: changing y_k first moves row k + 1."""
    torch.manual_seed(0)
    model = tiny_model(decoder={"wiring": wiring}).eval()
    src, lengths = source_tensors(random_sources(3, 12, seed=4))
    targets = torch.randint(4, 12, (3, 6))
    changed = targets.clone()
    k = 2
    changed[:, k] = 4 + (targets[:, k] - 3) % 8
    with torch.no_grad():
        rows = [model(src, lengths, torch.cat([torch.full((3, 1), BOS), t[:, :-1]], 1))[1] for t in (targets, changed)]
    moved = [not torch.allclose(rows[0][:, i], rows[1][:, i]) for i in range(targets.size(1))]
    assert moved == [i >= k + 1 + first_changed for i in range(targets.size(1))]


@pytest.mark.parametrize(
    ("score", "readout"), [*((score, "maxout") for score in [*SCORES, "none"]), ("additive", "tanh")]
)
def test_teacher_forcing_equals_a_loop_of_single_steps(score, readout):
    """For every alignment model, the fixed-context baseline and both readouts."""
    assert_teacher_forcing_equals_single_steps(tiny_model(readout=readout, score=score))


@pytest.mark.parametrize("score", [*SCORES, "none"])
@pytest.mark.parametrize("input_feeding", [False, True])
def test_luong_teacher_forcing_equals_single_steps_for_every_score(score, input_feeding):
    """Without input feeding, training attends to all positions in one batched product."""
    model = tiny_model(score=score, decoder={"wiring": "luong", "input_feeding": input_feeding})
    assert_teacher_forcing_equals_single_steps(model)


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
@pytest.mark.parametrize(("encoder", "decoder"), ARCHITECTURES.values(), ids=ARCHITECTURES.keys())
def test_teacher_forcing_equals_single_steps_for_every_architecture(encoder, decoder, coverage):
    """With coverage each teacher-forced position reads the coverage its step would."""
    assert_teacher_forcing_equals_single_steps(tiny_model(encoder=encoder, decoder=decoder, coverage=coverage))


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
@pytest.mark.parametrize(("encoder", "decoder"), ARCHITECTURES.values(), ids=ARCHITECTURES.keys())
def test_every_architecture_trains_every_parameter(encoder, decoder, coverage):
    """V_a too, with coverage: its gradient reaches it through every later step's score."""
    model = tiny_model(encoder=encoder, decoder=decoder, coverage=coverage).train()
    src, lengths = source_tensors(random_sources(4, 12, seed=2))
    readout, _ = model(src, lengths, torch.randint(4, 12, (4, 5)))
    model.logits(readout).log_softmax(-1).sum().backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name
        assert parameter.grad.abs().sum() > 0, name


def test_tied_embeddings_share_one_matrix():
    model = tiny_model(decoder={"tied_embeddings": True})
    assert model.decoder.output_layer.weight is model.decoder.embedding.weight
    untied = tiny_model()
    assert sum(p.numel() for p in untied.parameters()) - sum(p.numel() for p in model.parameters()) == 12 * 8


def test_initial_state_comes_from_the_backward_rnn_at_the_first_word(model):
    sources = random_sources(3, 12, seed=5, min_len=3)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, summary = model.encoder(src, lengths)
        hidden = model.encoder.rnn.hidden_size
        assert torch.allclose(summary, annotations[:, 0, hidden:], atol=1e-6)
        state = model.encode(src, lengths)
        assert torch.allclose(state.top, torch.tanh(model.decoder.init_layer(summary)))


def test_a_unidirectional_encoder_starts_the_decoder_from_its_last_word():
    model = tiny_model(encoder={"bidirectional": False}, decoder={"layers": 2})
    sources = random_sources(4, 12, seed=6, min_len=2)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, summary = model.encoder(src, lengths)
        assert annotations.size(2) == model.encoder.rnn.hidden_size
        last = annotations[torch.arange(4), lengths - 1]
        assert torch.allclose(summary, last, atol=1e-6)
        state = model.encode(src, lengths)
        assert state.state.shape == (4, 2, 16)
        assert torch.allclose(state.state.flatten(1), torch.tanh(model.decoder.init_layer(summary)))


def test_token_ids_and_feature_vectors_go_through_the_same_decoder():
    """A speech model differs from a text model in its input layer only."""
    config = ModelConfig(
        embedding_size=8,
        encoder=EncoderConfig(hidden_size=8),
        attention=AttentionConfig(size=8),
        decoder=DecoderConfig(hidden_size=16, readout_size=8),
        dropout=0.0,
    )
    torch.manual_seed(0)
    text, speech = build_model(config, 12, 12), build_model(config, 5, 12, vector_input=True)
    assert type(text.decoder) is type(speech.decoder)
    assert isinstance(speech.encoder.embedding, torch.nn.Linear)
    generator = torch.Generator().manual_seed(1)
    frames = [torch.randn(n, 5, generator=generator) for n in (7, 3, 11)]
    batch = make_batch([(f, [4, 5]) for f in frames])
    assert batch.src.shape == (3, 11, 5) and batch.src_lengths.tolist() == [7, 3, 11]
    assert all(torch.equal(row[:n], f) and not row[n:].any() for row, n, f in zip(batch.src, [7, 3, 11], frames))
    speech.eval()
    with torch.no_grad():
        readout, weights = speech(batch.src, batch.src_lengths, batch.tgt_in)
        assert readout.shape == (3, 3, 8) and weights.shape == (3, 3, 11)
        assert torch.all(weights[1, :, 3:] == 0)
        alone, _ = speech(batch.src[1:2, :3], batch.src_lengths[1:2], batch.tgt_in[1:2])
        assert torch.allclose(alone, readout[1:2], atol=1e-6)
    limits = max_output_lengths(batch.src_lengths, 0.5, 3)
    greedy = greedy_search(speech, batch.src, batch.src_lengths, max_lengths=limits)
    beam = beam_search(speech, batch.src, batch.src_lengths, max_lengths=limits, options=SearchOptions())
    assert [g[0].tokens for g in greedy] == [b[0].tokens for b in beam]
    assert [g[0].alignment.shape[1] for g in greedy] == [7, 3, 11]
    assert_teacher_forcing_equals_single_steps(text)
