"""The shapes CAT tools call (Apertium APy, LibreTranslate, OPUS-CAT), called as OmegaT,
Okapi, the OPUS-CAT plug-in and LibreTranslate's own client call them, against the tiny
trained model: the answers are /v1/translate's, every tag comes back exactly once, and a
pair the model does not serve gets the shape's own error."""

from __future__ import annotations

from collections import Counter

import pytest
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.markup import parse
from rnnsearch.server import Limits, create_app
from tests.integration.test_server import uvicorn_serving

LIMITS = Limits(max_texts=4, max_chars=200)


@pytest.fixture(scope="module")
def translator(model_dir):
    return rnnsearch.load(model_dir, device="cpu")


@pytest.fixture(scope="module")
def client(translator, model_dir):
    with TestClient(create_app(translator, model_dir, LIMITS)) as client:
        yield client


def v1(client: TestClient, text: str, markup: str | None = None) -> str:
    body = {"texts": [text]} | ({"markup": markup} if markup else {})
    [answer] = client.post("/v1/translate", json=body).json()["translations"]
    return answer["marked_up"] or answer["text"]


def tags(line: str, dialect: str = "xml") -> Counter:
    return Counter(segment for segment in parse(line, dialect).segments if segment.startswith("<"))


def test_omegat_s_apertium_call_gets_its_short_tags_placed_each_once(client):
    text = "Ein <b0>Hund</b0> läuft durch den <i1>Schnee</i1><x2/>."
    response = client.get("/translate", params={"markUnknown": "no", "langpair": "deu|eng", "q": text})
    assert response.status_code == 200
    body = response.json()
    assert (body["responseStatus"], body["responseDetails"]) == (200, None)
    answer = body["responseData"]["translatedText"]
    assert tags(answer) == tags(text)
    assert answer == v1(client, text, "xml")


def test_okapi_s_coded_html_comes_back_with_every_code_once(client):
    text = "Ein <u id='1'>Hund</u> läuft<br id='b2'/> durch den Schnee<br id='e2'/>.<br id='p3'/>"
    response = client.get("/translate", params={"langpair": "de|en", "q": text, "format": "html"})
    answer = response.json()["responseData"]["translatedText"]
    assert tags(answer, "html") == tags(text, "html")
    assert client.get("/listPairs").json()["responseData"] == [{"sourceLanguage": "de", "targetLanguage": "en"}]


def test_a_text_with_tags_and_an_ampersand_is_answered_as_text(client):
    text = "Hund & <b0>Katze</b0>"
    answer = client.get("/translate", params={"langpair": "de|en", "q": text}).json()["responseData"]["translatedText"]
    assert tags(answer.replace("&", "&amp;")) == tags("<b0></b0>") and "&amp;" not in answer


def test_the_opus_cat_plug_in_s_call_is_answered_in_its_shape(client):
    params = {"input": "Ein Hund läuft.", "srcLangCode": "de", "trgLangCode": "en", "tokenCode": "0", "modelTag": ""}
    response = client.get("/MTRestService/TranslateJson", params=params)
    assert response.json() == {"translation": v1(client, "Ein Hund läuft.")}
    assert client.get("/MTRestService/ListSupportedLanguagePairs").json() == ["de-en"]


def test_libretranslate_s_own_client_and_json_calls_get_the_same_translations(translator, model_dir, client):
    from libretranslatepy import LibreTranslateAPI

    with uvicorn_serving(create_app(translator, model_dir, LIMITS)) as port:
        api = LibreTranslateAPI(f"http://127.0.0.1:{port}")
        assert api.translate("Eine Frau singt.", "de", "en") == v1(client, "Eine Frau singt.")
        assert api.languages()[0]["code"] == "de" and api.languages()[0]["targets"] == ["en"]
    body = {"q": ["Ein <b>Hund</b>.", "Eine Frau singt."], "source": "auto", "target": "en", "format": "html"}
    answer = client.post("/translate", json=body).json()
    assert answer["translatedText"] == [v1(client, "Ein <b>Hund</b>.", "html"), v1(client, "Eine Frau singt.")]
    assert answer["detectedLanguage"]["language"] == "de"


@pytest.mark.parametrize(
    ("call", "status", "error"),
    [
        (lambda c: c.get("/translate", params={"langpair": "fr|en", "q": "x"}), 400, "responseDetails"),
        (lambda c: c.post("/translate", json={"q": "x", "source": "de", "target": "pt_BR"}), 400, "error"),
        (
            lambda c: c.get(
                "/MTRestService/TranslateJson", params={"input": "x", "srcLangCode": "eng", "trgLangCode": "deu"}
            ),
            400,
            "error",
        ),
        (lambda c: c.get("/translate", params={"langpair": "de|en", "q": "Hund " * 60}), 413, "responseDetails"),
        (lambda c: c.post("/translate", json={"q": ["a"] * 5, "source": "de", "target": "en"}), 413, "error"),
        (lambda c: c.post("/translate", json={"q": 3, "source": "de", "target": "en"}), 400, "error"),
        (lambda c: c.post("/translate", content=b"{", headers={"content-type": "application/json"}), 400, "error"),
        (lambda c: c.post("/translate", content=b"q=%FF&source=de&target=en"), 400, "error"),
    ],
)
def test_a_call_the_server_cannot_answer_gets_the_shape_s_own_error(client, call, status, error):
    response = call(client)
    assert response.status_code == status
    message = response.json()[error]
    assert isinstance(message, str) and "\n" not in message and message


def test_language_codes_are_read_as_clients_send_them(client):
    for source, target in (("deu", "eng"), ("de-DE", "en_GB"), ("ger", "en-US")):
        response = client.get("/translate", params={"langpair": f"{source}|{target}", "q": "Ein Hund."})
        assert response.status_code == 200, (source, target)
