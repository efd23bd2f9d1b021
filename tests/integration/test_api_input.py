"""The Python API refuses bad arguments with one clear error naming the argument or item,
a UserError that is also the TypeError or ValueError Python code expects."""

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.errors import UserError
from rnnsearch.translation.translator import MAX_BEAM_SIZE


@pytest.fixture(scope="module")
def translator(model_dir):
    return rnnsearch.load(model_dir, device="cpu")


@pytest.fixture(scope="module")
def speech(speech_model):
    return rnnsearch.load(speech_model, device="cpu")


def refused(kind: type, fragments: tuple[str, ...], call, *args, **kwargs) -> None:
    """`call` raises a UserError of `kind` whose one-line message holds every fragment."""
    with pytest.raises(kind) as raised:
        call(*args, **kwargs)
    message = str(raised.value)
    assert isinstance(raised.value, UserError) and "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize(
    ("texts", "kind", "fragments"),
    [
        ("Ein Hund.", TypeError, ("texts", "single str", '["Ein Hund."]')),
        (b"Ein Hund.", TypeError, ("texts", "single bytes")),
        ({"Ein Hund.": 1}, TypeError, ("texts", "dict")),
        (None, TypeError, ("texts", "NoneType")),
        (123, TypeError, ("texts", "int")),
        ([123], TypeError, ("texts[0]", "expected a str, got int")),
        (["a", None], TypeError, ("texts[1]", "expected a str, got NoneType")),
        (["a", "b", "\ud800"], ValueError, ("texts[2]", "surrogate")),
    ],
)
def test_bad_texts_are_refused_naming_the_item(translator, texts, kind, fragments):
    refused(kind, fragments, translator.translate, texts)


def test_any_iterable_of_texts_is_read_once_and_translated_in_order(translator):
    texts = ["Ein Hund läuft.", "", "Zwei Männer spielen Fußball."]
    expected = [t.text for t in translator.translate(texts, beam_size=1)]
    assert [t.text for t in translator.translate((t for t in texts), beam_size=1)] == expected
    assert [t.text for t in translator.translate(tuple(texts), beam_size=1)] == expected


@pytest.mark.parametrize(
    ("options", "kind", "fragments"),
    [
        ({"beam_size": "2"}, TypeError, ("beam_size", "str")),
        ({"beam_size": 2.0}, TypeError, ("beam_size", "float")),
        ({"beam_size": True}, TypeError, ("beam_size", "bool")),
        ({"beam_size": 0}, ValueError, ("beam_size", f"1 to {MAX_BEAM_SIZE}")),
        ({"beam_size": MAX_BEAM_SIZE + 1}, ValueError, ("beam_size", f"1 to {MAX_BEAM_SIZE}")),
        ({"beam_size": 2, "n_best": "1"}, TypeError, ("n_best", "str")),
        ({"beam_size": 2, "n_best": 0}, ValueError, ("n_best",)),
        ({"beam_size": 2, "n_best": 3}, ValueError, ("n_best", "beam size 2")),
    ],
)
def test_bad_search_options_are_refused_naming_the_option(translator, options, kind, fragments):
    refused(kind, fragments, translator.translate, ["Ein Hund."], **options)


def test_the_widest_beam_allowed_still_translates(translator):
    [translation] = translator.translate(["Ein Hund."], beam_size=np.int64(MAX_BEAM_SIZE), n_best=2)
    assert len(translation.alternatives) == 1


def test_bad_load_arguments_are_refused_naming_the_argument(model_dir):
    refused(TypeError, ("model_dir", "int"), rnnsearch.load, 123)
    refused(TypeError, ("device", "int"), rnnsearch.load, model_dir, device=0)
    refused(TypeError, ("batch_sentences", "str"), rnnsearch.load, model_dir, batch_sentences="8")
    refused(ValueError, ("batch_sentences",), rnnsearch.load, model_dir, batch_sentences=0)


@pytest.mark.parametrize(
    "search", [{"max_length_extra": 2**63}, {"max_length_ratio": 1.0e19}, {"length_penalty": 400.0}]
)
def test_search_settings_that_would_overflow_are_refused_at_load_naming_the_key(model_dir, search):
    """Once accepted, these made every translation empty or raised an OverflowError."""
    refused(ValueError, (*search, "less than or equal to"), rnnsearch.load, model_dir, search=search)


def test_bad_speech_arguments_are_refused_naming_the_item(speech, translator):
    refused(TypeError, ("paths", "single str", '["one.wav"]'), speech.transcribe_files, "one.wav")
    refused(TypeError, ("paths[1]", "NoneType"), speech.transcribe_files, ["one.wav", None])
    refused(TypeError, ("audio[0]", "numpy array"), speech.transcribe, [[0.0] * 800], ["a"])
    refused(ValueError, ("names", "1 names for 2 inputs"), speech.transcribe, [np.zeros(800)] * 2, ["a"])
    size = speech.data.features.size
    refused(TypeError, ("inputs[0]", f"(frames, {size})"), speech.translate_vectors, [torch.zeros(3, size + 1)], ["a"])
    refused(TypeError, ("names", "single str"), speech.translate_vectors, [torch.zeros(3, size)], "a")
    refused(ValueError, ("beam_size",), speech.translate_vectors, [torch.zeros(3, size)], ["a"], beam_size=0)
    refused(UserError, ("reads audio",), speech.translate, ["Ein Hund."])
    refused(UserError, ("reads text",), translator.transcribe_files, ["one.wav"])


def test_chunks_are_translated_one_at_a_time_with_lines_numbered_across_chunks(translator):
    def chunks():
        yield ["Ein Hund läuft.", ""]
        assert len(translated) == 1, "the second chunk was read before the first was translated"
        yield ("Zwei Männer spielen Fußball.",)

    translated = []
    for translations in translator.translate_chunks(chunks(), beam_size=1):
        translated.append([t.text for t in translations])
    whole = [t.text for t in translator.translate(["Ein Hund läuft.", "", "Zwei Männer spielen Fußball."], beam_size=1)]
    assert translated == [whole[:2], whole[2:]]
    overlong = translator.translate_chunks([["Ein Hund."], ["Eine Katze.", " ".join(["Hund"] * 400)]])
    refused(UserError, ("input line 3", "search.max_source_length"), list, overlong)
    refused(TypeError, ("chunks[1]", "single str"), list, translator.translate_chunks([["Ein Hund."], "Katze"]))
    refused(ValueError, ("beam_size",), translator.translate_chunks, [["Ein Hund."]], beam_size=0)
    refused(TypeError, ("chunks", "single str"), translator.translate_chunks, "Ein Hund.")
    pairs = [(["Ein Hund."], ["A dog."]), (["Ein Hund."], ["A dog."], ["Ein Hund."])]
    refused(TypeError, ("chunks[1]", "a pair (sources, targets)", "3 items"), list, translator.align_chunks(pairs))


@pytest.mark.parametrize("model", ["model_dir", "speech_model"])
def test_loading_a_model_imports_nothing_of_training(model, request):
    """A kind of data prepares corpora through training's modules; translating with it
    loads none of them (nor the prepared-data machinery), whatever the kind, nor what
    only documents and glossaries use (sentencex, pyahocorasick)."""
    import subprocess
    import sys

    code = (
        "import sys, rnnsearch; t = rnnsearch.load(sys.argv[1], device='cpu'); "
        "print(sorted(m for m in sys.modules if m.startswith(('rnnsearch.training', 'rnnsearch.prepared', "
        "'sentencex', 'ahocorasick'))))"
    )
    path = str(request.getfixturevalue(model))
    result = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_one_request_built_and_checked_once_translates_as_the_keywords_do(translator):
    """The server and the commands build a call's settings once (`request`) and hand the
    value down: the same translations as `translate`'s keywords, bit for bit; a request
    made for given pairs, which searches nothing, cannot translate; a keyword a method
    does not take is refused, naming it, not ignored; `align` and documents, from their
    settings made once, write what their keywords write."""
    texts, prefixes = ["Ein Hund läuft.", "Zwei <b>Männer</b> stehen."], ["A", ""]
    asked = {"beam_size": 3, "n_best": 2, "markup": "html", "reading": "output"}
    request = translator.request({**asked, "prefixes": prefixes})
    assert request.source.name == "attention" and request.search.beam_size == 3 and request.markup.markup == "html"
    assert request == translator.request({**asked, "prefixes": tuple(prefixes)}) and hash(request)
    by_keywords = translator.translate(texts, prefixes=prefixes, **asked)
    by_request = translator.translate_with(request, texts)
    for one, other in zip(by_keywords, by_request, strict=True):
        assert (one.text, one.score, one.marked_up) == (other.text, other.score, other.marked_up)
        assert np.array_equal(one.alignment, other.alignment)
    chunks = translator.translate_chunks_with(
        request.prefixed(None), [texts[:1], texts[1:]], prefix_chunks=[["A"], [""]]
    )
    assert [t.text for chunk in chunks for t in chunk] == [t.text for t in by_request]
    refused(
        ValueError,
        ("request", "searches nothing"),
        translator.translate_with,
        translator.request({}, searches=False),
        texts,
    )
    refused(ValueError, ("n_best", "beam size"), translator.request, {"beam_size": 1, "n_best": 2})
    refused(TypeError, ("translate", "'beam'", "beam_size"), translator.translate, texts, beam=2)
    refused(TypeError, ("align", "'glossary'"), translator.align, texts, texts, glossary={"Hund": "dog"})
    refused(TypeError, ("translate_documents", "'prefixes'"), translator.translate_documents, [b"x"], prefixes=["A"])
    settings = translator.align_settings({"markup": "html", "reading": "output"})
    aligned = translator.align_chunks_with(settings, [(texts, ["A dog runs.", "Two men stand."])])
    assert [pair.words.marked_up for chunk in aligned for pair in chunk] == [
        words.marked_up
        for words in translator.align(texts, ["A dog runs.", "Two men stand."], markup="html", reading="output")
    ]
    refused(TypeError, ("align", "'beam_size'"), translator.align_settings, {"beam_size": 2})
    pairs = [(texts, ["A dog runs.", "Two men stand."])]
    scored = translator.score_chunks_with(translator.request({"alignment_from": "attention"}, searches=False), pairs)
    by_keyword = translator.score_chunks(pairs, alignment_from="attention")
    assert [(p.log_prob, p.tokens) for chunk in scored for p in chunk] == [
        (p.log_prob, p.tokens) for chunk in by_keyword for p in chunk
    ]
    page = b"<p>Ein <b>Hund</b> l\xc3\xa4uft.</p>"
    settings = translator.document_settings({"beam_size": 2, "glossary": {"Hund": "hound"}})
    by_settings = translator.translate_documents_with(settings, [page], format="html")
    assert [d.data for d in by_settings] == [
        d.data for d in translator.translate_documents([page], format="html", beam_size=2, glossary={"Hund": "hound"})
    ]
    assert b"hound" in by_settings[0].data
    refused(TypeError, ("translate_documents", "'prefixes'"), translator.document_settings, {"prefixes": ["A"]})
