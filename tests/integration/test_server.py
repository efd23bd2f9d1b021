"""The HTTP server against the tiny trained model: API, limits, batching, page and `rnnsearch serve`."""

from __future__ import annotations

import asyncio
import copy
import io
import json
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import regress
import uvicorn
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict, load_config
from rnnsearch.errors import UserError
from rnnsearch.model.seq2seq import build_model
from rnnsearch.search.rules import SearchCancelled
from rnnsearch.server import Limits, create_app
from rnnsearch.server.batcher import Batcher
from rnnsearch.server.run import listen
from rnnsearch.translation.translator import Translator

LIMITS = Limits(max_texts=4, max_chars=1000)
SENTENCES = ["Ein Hund läuft durch den Schnee.", "Zwei Männer spielen Fußball.", "Eine Frau singt."]


@pytest.fixture(scope="module")
def translator(model_dir) -> Translator:
    return rnnsearch.load(model_dir, device="cpu")


@pytest.fixture(scope="module")
def client(translator, model_dir):
    with TestClient(create_app(translator, model_dir, LIMITS)) as client:
        yield client


def translate(client: TestClient, texts: list[str], **options) -> list[dict]:
    response = client.post("/v1/translate", json={"texts": texts, **options})
    assert response.status_code == 200, response.text
    return response.json()["translations"]


def assert_json_error(response, status: int, fragment: str = "") -> str:
    """An error answer: the status, a JSON body {"error": one line}, no traceback."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str)
    assert "\n" not in body["error"] and "Traceback" not in body["error"]
    assert fragment in body["error"], body["error"]
    return body["error"]


def assert_same_translation(answer: dict, expected) -> None:
    """An API translation equals the Translator's own result for the same text and settings."""
    assert answer["text"] == expected.text
    assert answer["target_tokens"] == expected.target_tokens
    assert answer["score"] == pytest.approx(expected.score, abs=1e-5)
    assert np.allclose(np.array(answer["alignment"]), expected.alignment, atol=1e-4)


def test_translations_match_the_translator_with_alignments(client, translator):
    answers = translate(client, SENTENCES[:2])
    for answer, expected in zip(answers, translator.translate(SENTENCES[:2]), strict=True):
        assert_same_translation(answer, expected)
        assert answer["source_tokens"] == expected.source_tokens and answer["source_tokens"][-1] == "</s>"
        matrix = np.array(answer["alignment"])
        assert matrix.shape == (len(answer["target_tokens"]), len(answer["source_tokens"]))
        assert np.allclose(matrix.sum(axis=1), 1.0, atol=1e-3)
        assert answer["alternatives"] == []


def test_nbest_lists_alternatives_best_first_each_with_its_alignment(client):
    [answer] = translate(client, SENTENCES[:1], beam_size=4, n_best=3)
    entries = [answer, *answer["alternatives"]]
    assert len(entries) == 3
    assert [e["score"] for e in entries] == sorted((e["score"] for e in entries), reverse=True)
    for entry in entries:
        matrix = np.array(entry["alignment"])
        assert matrix.shape == (len(entry["target_tokens"]), len(answer["source_tokens"]))
        assert np.allclose(matrix.sum(axis=1), 1.0, atol=1e-3)


def test_alignments_can_be_left_out(client):
    [answer] = translate(client, SENTENCES[:1], beam_size=3, n_best=2, alignments=False)
    assert answer["alignment"] is None and answer["alternatives"][0]["alignment"] is None
    assert answer["text"] and answer["target_tokens"]


def test_greedy_search_with_beam_size_one(client, translator):
    [answer] = translate(client, SENTENCES[2:], beam_size=1)
    assert_same_translation(answer, translator.translate(SENTENCES[2:], beam_size=1)[0])


def test_empty_texts_give_empty_translations(client):
    empty, blank, full = translate(client, ["", "   ", SENTENCES[0]])
    for answer in (empty, blank):
        assert answer["text"] == "" and answer["source_tokens"] == [] and answer["target_tokens"] == []
        assert answer["alignment"] == []
    assert full["text"]


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({"texts": ["Ein Hund."] * 5}, 413, "texts: List should have at most 4 items"),
        ({"texts": ["Hund", "x" * 1001]}, 413, "texts.1: String should have at most 1000 characters"),
        ({"texts": ["Hund", "a " * 300]}, 413, "texts.1: "),
        ({"texts": "Ein Hund."}, 422, "texts: Input should be a valid list"),
        ({"texts": [1, 2]}, 422, "texts.0: Input should be a valid string"),
        ({"texts": []}, 422, "texts: List should have at least 1 item"),
        ({}, 422, "texts: Field required"),
        ({"texts": ["Hund"], "beam_size": "3"}, 422, "beam_size: Input should be a valid integer"),
        ({"texts": ["Hund"], "beam_size": 0}, 422, "beam_size: Input should be greater than or equal to 1"),
        ({"texts": ["Hund"], "beam_size": 65}, 422, "beam_size: Input should be less than or equal to 64"),
        ({"texts": ["Hund"], "n_best": 4}, 422, "n_best: 4 is more than the beam size 3"),
        ({"texts": ["Hund"], "alignments": "yes"}, 422, "alignments: Input should be a valid boolean"),
        ({"texts": ["Hund"], "beam": 5}, 422, "beam: Extra inputs are not permitted"),
    ],
)
def test_requests_over_the_limits_or_invalid_get_a_json_error(client, body, status, fragment):
    assert_json_error(client.post("/v1/translate", json=body), status, fragment)


def test_a_text_over_the_models_source_length_is_refused(client, translator):
    limit = translator.search.max_source_length
    message = assert_json_error(client.post("/v1/translate", json={"texts": ["a " * 300]}), 413, "texts.0: ")
    assert f"more than the model's {limit}" in message


def test_malformed_or_non_json_bodies_get_422(client):
    headers = {"content-type": "application/json"}
    assert_json_error(client.post("/v1/translate", content=b'{"texts": [', headers=headers), 422, "malformed JSON")
    assert_json_error(client.post("/v1/translate", content=b"texts=Hund"), 422, "must be a JSON object")
    assert_json_error(client.post("/v1/translate"), 422, "the request has no body: send a JSON object with `texts`")
    empty = client.post("/v1/translate", content=b"", headers=headers)
    assert_json_error(empty, 422, "the request has no body: send a JSON object with `texts`")


def test_a_body_larger_than_any_valid_request_gets_413(client):
    headers = {"content-type": "application/json"}
    response = client.post("/v1/translate", content=b" " * 10_000_000, headers=headers)
    assert_json_error(response, 413, "request body larger than")


def test_a_request_within_every_bound_is_not_refused_for_its_size(client):
    """A glossary and an avoid list at their bounds, every character in JSON's longest
    escape (a surrogate pair, 12 bytes), fit the body limit: the answer is about what they
    hold, never a 413 about the body; /v1/model states both bounds."""
    from rnnsearch.text.glossary import MAX_TERM_CHARS

    limits = client.get("/v1/model").json()["limits"]
    assert (limits["max_glossary_terms"], limits["max_term_chars"]) == (LIMITS.max_glossary_terms, MAX_TERM_CHARS)
    wide = "\U0001f415"
    terms = [f"{k:04d}" + wide * (MAX_TERM_CHARS - 4) for k in range(LIMITS.max_glossary_terms)]
    body = {"texts": ["Ein Hund."], "glossary": dict.fromkeys(terms, wide * MAX_TERM_CHARS), "avoid": terms}
    encoded = json.dumps(body).encode()
    assert len(encoded) > 5_000_000
    response = client.post("/v1/translate", content=encoded, headers={"content-type": "application/json"})
    assert response.status_code == 200 and response.json()["translations"][0]["text"]


def test_unknown_paths_and_methods_get_json_errors(client):
    assert_json_error(client.get("/v1/nothing"), 404)
    assert_json_error(client.get("/v1/translate"), 405)


def test_a_request_slower_than_the_timeout_gets_504(translator, model_dir):
    limits = Limits(timeout=0.05, max_wait=10.0)  # the batcher waits for company longer than the timeout
    with TestClient(create_app(translator, model_dir, limits)) as client:
        response = client.post("/v1/translate", json={"texts": ["Ein Hund."]})
    assert_json_error(response, 504, "longer than the server's 0.05 s limit")


def test_an_unexpected_failure_gets_a_json_500_without_traceback(translator, model_dir):
    broken = copy.copy(translator)

    def fail(request, texts, owners=None):
        raise RuntimeError("secret internals")

    broken.translate_with = fail
    with TestClient(create_app(broken, model_dir), raise_server_exceptions=False) as client:
        message = assert_json_error(client.post("/v1/translate", json={"texts": ["Hund"]}), 500)
    assert "secret" not in message


def test_health(client):
    response = client.get("/v1/health")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_model_description(client, translator, model_dir):
    info = client.get("/v1/model").json()
    assert (info["source_language"], info["target_language"]) == ("de", "en")
    assert info["source_vocabulary"] == len(translator.src_subwords)
    assert info["target_vocabulary"] == len(translator.tgt_subwords)
    assert info["parameters"] == sum(p.numel() for p in translator.model.parameters())
    assert info["has_alignment"] is True
    assert info["architecture"]["attention"]["score"] == "additive"
    assert info["architecture"]["embedding_size"] == 16
    assert info["search"]["beam_size"] == 3
    rows = [json.loads(line) for line in (model_dir / "metrics.jsonl").read_text().splitlines()]
    validations = [row for row in rows if "valid_bleu" in row]
    assert info["training"] == {
        "steps": 20,
        "validations": len(validations),
        "valid_score": "valid_bleu",
        "valid_score_label": "validation BLEU",
        "best_valid_score": max(row["valid_bleu"] for row in validations),
        "best_valid_perplexity": min(row["valid_ppl"] for row in validations),
    }
    assert info["limits"]["max_texts"] == 4 and info["limits"]["max_chars"] == 1000


def test_openapi_schema_states_the_limits(client):
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    texts = schema["TranslateRequest"]["properties"]["texts"]
    assert (texts["maxItems"], texts["items"]["maxLength"]) == (4, 1000)
    beam = schema["TranslateRequest"]["properties"]["beam_size"]["anyOf"][0]
    assert (beam["minimum"], beam["maximum"]) == (1, 64)
    assert schema["ErrorBody"]["required"] == ["error"]


def test_openapi_schema_calls_valid_only_the_glossaries_the_server_takes(client):
    schema = client.get("/openapi.json").json()["components"]["schemas"]["TranslateRequest"]
    glossary = schema["properties"]["glossary"]
    for terms in ({"\r": "x"}, {"Hund": 3}, {"Hund": " "}, {"Hund": "hound"}):
        valid = jsonschema.Draft202012Validator(glossary).is_valid(terms)
        status = client.post("/v1/translate", json={"texts": ["Ein Hund."], "glossary": terms}).status_code
        assert (valid, status) == ((True, 200) if terms == {"Hund": "hound"} else (False, 422)), terms


def test_openapi_schema_reads_a_blank_term_as_the_server_does(client):
    """JSON Schema reads a pattern by ECMAScript's rules, whose white space is not Python's
    `str.strip`'s: the schema must still call a term blank exactly where the server does."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]["TranslateRequest"]
    terms = schema["properties"]["glossary"]["anyOf"][0]
    not_blank = regress.Regex(terms["propertyNames"]["pattern"])
    assert terms["additionalProperties"]["pattern"] == terms["propertyNames"]["pattern"]
    characters = [chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000]  # no lone surrogate is text
    differ = [hex(ord(c)) for c in characters if (not_blank.find(c) is not None) != bool(c.strip())]
    assert not differ
    for blank in ("\x1c", "\x85 "):
        response = client.post("/v1/translate", json={"texts": ["Ein Hund."], "glossary": {"Hund": blank}})
        assert response.status_code == 422 and "a term holds more than white space" in response.json()["error"]


def test_page_is_served_with_its_assets_and_no_outside_resources(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for marker in ('id="source"', 'id="translate-button"', 'id="heatmap"', 'id="beam-size"', 'id="n-best"'):
        assert marker in page.text
    assert "http://" not in page.text and "https://" not in page.text
    script = client.get("/static/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "highlight" in script.text and "data-t" in script.text and "data-s" in script.text
    assert client.get("/static/style.css").headers["content-type"].startswith("text/css")


def test_concurrent_requests_are_merged_and_answered_as_if_alone(translator, model_dir):
    requests = [
        (["Ein Hund läuft.", "Eine Frau singt."], 2),
        (["Zwei Männer spielen Fußball."], 1),
        (["Ein Kind lacht."], 2),
        (["Ein Mann fährt Fahrrad.", "Die Sonne scheint."], 1),
        (["Ein Vogel fliegt."], 2),
        (["Eine Katze schläft."], 1),
    ]
    expected = [translator.translate(texts, beam_size=beam) for texts, beam in requests]
    # Four sentences fill a batch; each beam size has exactly four, so each is one model call.
    limits = Limits(max_batch=4, max_wait=30.0)
    with TestClient(create_app(translator, model_dir, limits)) as client:
        with ThreadPoolExecutor(len(requests)) as pool:
            answers = list(pool.map(lambda r: translate(client, r[0], beam_size=r[1]), requests))
        batcher = client.app.state.batcher
        assert (batcher.requests, batcher.calls) == (len(requests), 2)
    for request_answers, request_expected in zip(answers, expected, strict=True):
        for answer, translation in zip(request_answers, request_expected, strict=True):
            assert_same_translation(answer, translation)


def test_requests_with_glossaries_of_their_own_are_merged_and_each_gets_its_own_terms(translator, model_dir):
    requests = [
        (["Ein Hund läuft.", "Eine Frau singt."], {"Hund": "puppy"}),
        (["Der Hund und die Frau."], {"Frau": "lady"}),
        (["Zwei Männer spielen."], None),
        (["Ein Hund schläft."], {"Hund": "hound", "schläft": "sleeps"}),
    ]
    expected = [translator.translate(texts, beam_size=2, glossary=terms) for texts, terms in requests]
    limits = Limits(max_batch=5, max_wait=30.0)  # all five sentences fill one batch
    with TestClient(create_app(translator, model_dir, limits)) as client:
        with ThreadPoolExecutor(len(requests)) as pool:
            asked = [{"beam_size": 2} | ({} if terms is None else {"glossary": terms}) for _, terms in requests]
            answers = list(pool.map(lambda r: translate(client, r[0][0], **r[1]), zip(requests, asked)))
        batcher = client.app.state.batcher
        assert (batcher.requests, batcher.calls) == (len(requests), 1)
    for request_answers, request_expected in zip(answers, expected, strict=True):
        for answer, translation in zip(request_answers, request_expected, strict=True):
            assert_same_translation(answer, translation)
    assert "hound" in answers[3][0]["text"] and "puppy" not in answers[3][0]["text"]


def run_batcher(scenario):
    """Run `scenario(batcher)` on an event loop with a started batcher that fails on the text 'bad'."""
    seen: list[list[str]] = []

    def fake_translate(texts: list[str], beam_size: int, n_best: int, cancelled) -> list[str]:
        seen.append(list(texts))
        if "bad" in texts:
            raise ValueError("bad text")
        return [text.upper() for text in texts]

    async def run():
        batcher = Batcher(fake_translate, max_batch=3, max_wait=30.0)
        await batcher.start()
        try:
            return await scenario(batcher)
        finally:
            await batcher.stop()

    return asyncio.run(run()), seen


def test_a_failing_request_does_not_fail_the_requests_merged_with_it():
    async def scenario(batcher):
        return await asyncio.gather(
            batcher.translate(["a", "b"], 2, 1), batcher.translate(["bad"], 2, 1), return_exceptions=True
        )

    (good, bad), seen = run_batcher(scenario)
    assert good == ["A", "B"] and isinstance(bad, ValueError)
    assert seen == [["a", "b", "bad"], ["a", "b"], ["bad"]]


def test_a_withdrawn_request_is_not_translated():
    async def scenario(batcher):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(batcher.translate(["gone"], 2, 1), 0.01)
        return await asyncio.gather(*(batcher.translate([text], 2, 1) for text in "xyz"))

    results, seen = run_batcher(scenario)
    assert results == [["X"], ["Y"], ["Z"]] and seen == [["x", "y", "z"]]


def test_a_request_waits_for_at_most_the_call_under_way_however_many_documents_are_translated():
    """Documents' batches are bulk: a plain request that arrives while three documents
    keep the model busy is in the very next call, not behind every document's batch."""
    calls: list[list[str]] = []
    started = threading.Event()

    def slow_translate(texts: list[str], beam_size: int, n_best: int, cancelled) -> list[str]:
        calls.append(list(texts))
        started.set()
        time.sleep(0.02)
        return [text.upper() for text in texts]

    async def document(batcher: Batcher, name: str) -> None:
        for k in range(4):
            await batcher.translate([f"{name}{k}"], 2, 1, bulk=True)

    async def run():
        batcher = Batcher(slow_translate, max_batch=1, max_wait=0.001)
        await batcher.start()
        try:
            documents = [asyncio.ensure_future(document(batcher, name)) for name in "abc"]
            while not started.is_set():
                await asyncio.sleep(0.001)
            plain = await batcher.translate(["plain"], 2, 1)
            await asyncio.gather(*documents)
            return plain
        finally:
            await batcher.stop()

    assert asyncio.run(run()) == ["PLAIN"]
    assert len(calls) == 13 and calls.index(["plain"]) == 1, calls


def test_a_text_request_is_answered_while_documents_wait_for_their_batches(translator, model_dir):
    """Documents wait for their batches in threads of their own: in the event loop's
    default pool (here of one thread) a document held the thread every text request
    reads its markup in, and a one-line request waited for the document to end."""
    from concurrent.futures import ThreadPoolExecutor as Pool

    app = create_app(translator, model_dir, Limits(max_batch=2, timeout=600.0))

    async def one_default_thread() -> None:
        asyncio.get_running_loop().set_default_executor(Pool(max_workers=1))

    page = "".join(f"<p>Ein Hund läuft Nummer {k}.</p>" for k in range(120)).encode()
    finished: dict[str, float] = {}
    with TestClient(app) as client:
        assert client.portal is not None
        client.portal.call(one_default_thread)

        def document() -> None:
            answer = client.post("/v1/documents", params={"name": "seite.html"}, content=page)
            finished["document"] = time.monotonic()
            assert answer.status_code == 200, answer.text

        with Pool(1) as pool:
            sent = pool.submit(document)
            wait_until(lambda: client.app.state.batcher.calls > 0, "the document's first batch")
            answer = client.post("/v1/translate", json={"texts": ["Ein <b>Hund</b>."], "markup": "html"})
            finished["text"] = time.monotonic()
            sent.result()
    assert answer.status_code == 200 and finished["text"] < finished["document"]


def test_a_document_has_the_timeout_for_each_batch_and_gets_504_only_once_one_stalls():
    """A document is not a sentence: its time limit moves on with each batch done, so a
    long document that keeps going is answered, and one that stops is a 504."""
    from fastapi import HTTPException

    from rnnsearch.server.documents import _Progress, _within

    def working(progress: _Progress, batches: int, pause: float) -> str:
        for _ in range(batches):
            time.sleep(pause)
            progress.at = time.monotonic()
        return "translated"

    async def run(batches: int, pause: float):
        progress = _Progress()
        return await _within(asyncio.ensure_future(asyncio.to_thread(working, progress, batches, pause)), progress, 0.3)

    assert asyncio.run(run(8, 0.1)) == "translated"  # 0.8 s in all, well past the 0.3 s for one batch
    with pytest.raises(HTTPException) as refused:
        asyncio.run(run(2, 0.6))
    assert refused.value.status_code == 504 and "within the server's 0.3 s limit" in refused.value.detail


def test_a_model_call_stops_once_every_request_in_it_has_given_up():
    """The model thread is told when nobody waits for its call any more, and is then free
    for the next request instead of finishing work whose answer would be thrown away."""
    gave_up = threading.Event()

    def translate_until_cancelled(texts: list[str], beam_size: int, n_best: int, cancelled) -> list[str]:
        if texts != ["slow"]:
            return [text.upper() for text in texts]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if cancelled():
                gave_up.set()
                raise SearchCancelled
            time.sleep(0.005)
        return ["never cancelled"]

    async def run():
        batcher = Batcher(translate_until_cancelled, max_batch=3, max_wait=0.001)
        await batcher.start()
        try:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(batcher.translate(["slow"], 2, 1), 0.05)
            return await asyncio.wait_for(batcher.translate(["quick"], 2, 1), 5.0)
        finally:
            await batcher.stop()

    assert asyncio.run(run()) == ["QUICK"]
    assert gave_up.is_set()


@contextmanager
def uvicorn_serving(app) -> Iterator[int]:
    """Serve `app` with uvicorn on a free loopback port, in a thread of this process so that the
    test can read the app's batcher; yield the port."""
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, "uvicorn to start")
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()


def wait_until(condition, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.001)


def test_a_model_call_stops_once_its_client_disconnects(translator, model_dir):
    """A client that closes its connection while its texts are decoded frees the model thread:
    the call stops early, as for a timeout, instead of finishing for nobody."""
    app = create_app(translator, model_dir, Limits(max_texts=64, timeout=600.0))
    batcher = app.state.batcher
    # long sources give the untrained model long outputs: a call far longer than noticing the disconnect
    texts = [" ".join([*SENTENCES, str(k)]) for k in range(64)]
    body = json.dumps({"texts": texts, "beam_size": 64}).encode()
    head = "POST /v1/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    with uvicorn_serving(app) as port:
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            wait_until(lambda: batcher.calls == 1, "the model call to start")
        # The next request's call runs only after the abandoned one has ended, one way or the other.
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/translate",
            data=json.dumps({"texts": ["Ein Hund."]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=600) as response:
            assert json.load(response)["translations"][0]["text"]
    assert (batcher.requests, batcher.calls, batcher.cancelled_calls) == (2, 2, 1)


def fixed_context_model_dir(model_dir: Path, folder: Path) -> tuple[Translator, Path]:
    """A fixed-context (attention: none) translator with random weights, and its model directory."""
    tree = load_config(model_dir / "config.yaml").model_dump(mode="json")
    tree["model"]["attention"] = "none"
    config = config_from_dict(tree)
    (folder / "config.yaml").write_text(config.to_yaml(), encoding="utf-8")
    for name in ("subwords.src.model", "subwords.tgt.model"):
        shutil.copy(model_dir / name, folder / name)
    trained = rnnsearch.load(model_dir, device="cpu")
    model = build_model(config.model, len(trained.src_subwords), len(trained.tgt_subwords)).eval()
    return Translator(model, trained.src_subwords, trained.tgt_subwords, config), folder


def test_fixed_context_model_answers_without_alignment(model_dir, tmp_path):
    translator, folder = fixed_context_model_dir(model_dir, tmp_path)
    with TestClient(create_app(translator, folder)) as client:
        info = client.get("/v1/model").json()
        [answer] = translate(client, ["Ein Hund läuft."], beam_size=2, n_best=2)
    assert info["has_alignment"] is False and info["architecture"]["attention"] == "none"
    assert info["training"] is None
    assert answer["alignment"] is None and answer["alternatives"][0]["alignment"] is None
    assert answer["target_tokens"][-1] == "</s>"


def test_serve_command_starts_uvicorn_and_stops_on_terminate(model_dir, tmp_path):
    log = (tmp_path / "server.log").open("w")
    command = [sys.executable, "-m", "rnnsearch", "serve", str(model_dir), "--port", "0", "--device", "cpu"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        url = read_served_url(server)
        with urllib.request.urlopen(url + "v1/health", timeout=60) as response:
            assert json.load(response) == {"status": "ok"}
    finally:
        server.terminate()
        status = server.wait(timeout=30)
        log.close()
    # uvicorn shuts down gracefully, then lets SIGTERM end the process as it would have
    assert status in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in (tmp_path / "server.log").read_text()


def read_served_url(server: subprocess.Popen, limit: float = 120.0) -> str:
    """The address from the server's 'serving … at http://host:port/' line."""
    selector = selectors.DefaultSelector()
    selector.register(server.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and server.poll() is None:
        if selector.select(timeout=1.0):
            line = server.stdout.readline()
            if " at http://127.0.0.1:" in line:
                return line.split(" at ")[1].split()[0]
    raise AssertionError(f"the server printed no address (exit status {server.poll()})")


def test_serve_reports_a_busy_port_in_one_line(model_dir, capsys):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        status = main(["serve", str(model_dir), "--port", str(port), "--device", "cpu"])
    err = capsys.readouterr().err
    assert status == 1 and len(err.splitlines()) == 1
    assert err.startswith(f"rnnsearch: error: cannot listen on 127.0.0.1:{port}: "), err


def test_serve_reports_a_missing_model_directory_in_one_line(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no such model directory" in err, err


def test_serve_refuses_limits_that_are_not_positive(model_dir, capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(["serve", str(model_dir), "--max-texts", "0"])
    assert exit_status.value.code == 2
    assert "--max-texts: must be greater than 0" in capsys.readouterr().err


MARKED = ['Ein <b>Hund</b> läuft durch <a href="schnee.html">den Schnee</a>.', "Zwei &amp; <i>drei</i>"]


@pytest.mark.parametrize("placement", [None, "weights", "links", "tempered"])
def test_a_marked_up_request_gets_the_api_s_marked_up_translations(client, translator, placement):
    asked = {} if placement is None else {"placement": placement}
    answers = translate(client, MARKED, markup="xml", beam_size=3, n_best=2, **asked)
    expected = translator.translate(MARKED, beam_size=3, n_best=2, markup="xml", **asked)
    for answer, result in zip(answers, expected, strict=True):
        assert answer["marked_up"] == result.marked_up and answer["text"] == result.text
        assert [a["marked_up"] for a in answer["alternatives"]] == [a.marked_up for a in result.alternatives]
    plain = translate(client, MARKED[:1])
    assert plain[0]["marked_up"] is None


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"texts": ["Ein Hund.", "Ein <b>Hund"], "markup": "xml"}, "texts.1: <b> is never closed"),
        ({"texts": ["Ein Hund."], "markup": "markdown"}, "markup: Input should be 'xml' or 'html'"),
        (
            {"texts": ["Ein Hund."], "markup": "xml", "placement": "hull"},
            "placement: Input should be 'links', 'weights'",
        ),
        ({"texts": ["Ein Hund."], "placement": "weights"}, "placement: it says how markup is placed; give markup too"),
    ],
)
def test_bad_markup_is_a_422_naming_the_text(client, body, fragment):
    assert_json_error(client.post("/v1/translate", json=body), 422, fragment)


def test_a_document_sent_as_bytes_comes_back_translated_with_its_structure(client, translator, model_dir, tmp_path):
    from urllib.parse import unquote

    from tests.unit.test_documents import HTML, SUBTITLES, _blocks

    answer = client.post("/v1/documents", params={"name": "seite.html", "beam_size": 2}, content=HTML.encode())
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-disposition"] == "attachment; filename*=UTF-8''seite.html"
    assert unquote(answer.headers["x-rnnsearch-summary"]).startswith("seite.html: 11 units (5 attributes)")
    page = answer.content.decode()
    assert _blocks(page) == _blocks(HTML) and "<pre>  kein   Text\n  hier </pre>" in page
    subtitles = client.post("/v1/documents", params={"name": "film.srt"}, content=SUBTITLES.encode())
    assert subtitles.status_code == 200 and subtitles.headers["content-type"] == "application/x-subrip"
    from openpyxl import load_workbook

    from tests.unit.test_workbooks import named_workbook

    asked = {"name": "b.xlsx", "sheet_names": "true", "notes": "false"}
    book = load_workbook(io.BytesIO(client.post("/v1/documents", params=asked, content=named_workbook()).content))
    assert book.sheetnames != ["Preise", "Date Übersicht"] and "Bitte" in book[book.sheetnames[0]]["A4"].comment.text

    secret = tmp_path / "secret.po"
    secret.write_text('msgid "Ein Geheimnis"\nmsgstr ""\n', encoding="utf-8")
    refusals = [
        ({"name": "x.po"}, str(secret).encode(), 422, "x.po: not a PO catalogue"),  # a body is bytes, never a path
        ({"name": ""}, b"<p>Ein Hund.</p>", 422, "bytes need a name"),
        ({"name": "kaputt.docx"}, b"PK\x03\x04 damaged", 422, "kaputt.docx: not a Word document"),
        ({"name": "x.xyz"}, b"text", 422, "x.xyz: no format reads .xyz files"),
        ({"name": "leer.md"}, b"```\ncode\n```\n", 422, "leer.md: it holds nothing to translate"),
        ({"name": "x.html", "placement": "nowhere"}, b"<p>Ein Hund.</p>", 422, "placement"),
        ({}, b"<p>Ein Hund.</p>", 422, "name"),
        ({"name": "x.html", "notes": "maybe"}, b"<p>Ein Hund.</p>", 422, "notes"),
        ({"name": "x.xlsx", "sheet_name": "true"}, b"PK", 422, "sheet_name: /v1/documents takes no such parameter"),
    ]
    for params, body, status, message in refusals:
        answer = client.post("/v1/documents", params=params, content=body)
        assert (answer.status_code, list(answer.json())) == (status, ["error"]), answer.text
        assert message in answer.json()["error"] and "\n" not in answer.json()["error"]
    small = Limits(max_document_bytes=100)
    with TestClient(create_app(translator, model_dir, small)) as limited:
        answer = limited.post("/v1/documents", params={"name": "seite.html"}, content=HTML.encode())
        assert answer.status_code == 413 and "larger than 100 bytes" in answer.json()["error"]
        assert limited.post("/v1/translate", json={"texts": ["Ein Hund."]}).status_code == 200


def test_documents_are_read_a_few_at_a_time_and_never_after_their_request_ended(monkeypatch):
    """Reading builds a document's whole tree: however many requests wait, at most
    READ_AT_ONCE documents are read at once (each reader here waits inside for another to
    be reading too), and one whose request ended before its turn is refused unread."""
    from rnnsearch.documents.document import ReadOptions
    from rnnsearch.server import documents

    state = {"reading": 0, "peak": 0, "read": 0}
    lock, together = threading.Lock(), threading.Barrier(2, timeout=30)
    real = documents.read_document

    def read_counted(*args, **kwargs):
        with lock:
            state["reading"] += 1
            state["read"] += 1
            state["peak"] = max(state["peak"], state["reading"])
        together.wait()
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                state["reading"] -= 1

    monkeypatch.setattr(documents, "read_document", read_counted)
    options = {"format": None, "name": "seite.html", "options": ReadOptions("en")}
    page = b"<p>Ein Hund.</p>"
    readers = [
        threading.Thread(target=documents.read_withdrawable, args=(page, threading.Event()), kwargs=options)
        for _ in range(6)
    ]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout=60)
    assert (state["peak"], state["read"]) == (documents.READ_AT_ONCE, 6)
    withdrawn = threading.Event()
    withdrawn.set()
    with pytest.raises(UserError, match="seite.html: withdrawn before it was read"):
        documents.read_withdrawable(page, withdrawn, **options)
    assert state["read"] == 6


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('{"texts": ["Ein Hund."], "texts": ["Eine Frau."]}', "texts"),
        ('{"texts": ["Ein Hund."], "glossary": {"Hund": "dog", "Hund": "hound"}}', "Hund"),
    ],
)
def test_a_key_given_twice_in_a_request_is_a_422_naming_it(client, body, key):
    """JSON keeps the last of a key given twice without a word: a request translated
    other texts, or with another term, than its sender read in it."""
    response = client.post("/v1/translate", content=body, headers={"Content-Type": "application/json"})
    assert_json_error(response, 422, f"body: '{key}' is given twice in one object")
