"""The HTTP server for a speech model: base64 WAV files in, digits and time alignments out."""

from __future__ import annotations

import base64
import io
import re
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.server import Limits, create_app
from rnnsearch.speech.audio import read_wav_bytes
from rnnsearch.speech.digits import make_utterances
from rnnsearch.translation.translator import Translator
from tests.integration.conftest import wav_bytes
from tests.integration.test_server import assert_json_error

LIMITS = Limits(max_texts=3, max_audio_seconds=5.0)
GOOD = wav_bytes(np.zeros(100))
CORRUPT = GOOD[:16] + b"\x10\x00\x00K" + GOOD[20:]
"""A WAV file whose format chunk claims more bytes than the file holds."""


@pytest.fixture(scope="module")
def speech_translator(speech_model) -> Translator:
    return rnnsearch.load(speech_model, device="cpu")


@pytest.fixture(scope="module")
def speech_client(speech_translator, speech_model):
    with TestClient(create_app(speech_translator, speech_model, LIMITS)) as client:
        yield client


@pytest.fixture(scope="module")
def spoken():
    return make_utterances("customary", "test", 2, seed=7, max_digits=3)


def encoded(samples: np.ndarray, rate: int = 8000) -> str:
    return base64.b64encode(wav_bytes(samples, rate)).decode("ascii")


def silence_8_bit(seconds: float) -> str:
    """An 8-bit WAV file of silence, base64-encoded: half the size of 16-bit audio as long."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(bytes([128]) * int(seconds * 8000))
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def received(utterances) -> list[np.ndarray]:
    """The samples the server reads from the WAV files of `utterances`: quantised to 16 bits."""
    return [read_wav_bytes(wav_bytes(u.samples), "test")[0] for u in utterances]


def test_audio_is_transcribed_with_time_alignments(speech_client, speech_translator, spoken):
    response = speech_client.post(
        "/v1/translate", json={"audio": [encoded(u.samples) for u in spoken], "beam_size": 2, "n_best": 2}
    )
    assert response.status_code == 200, response.text
    answers = response.json()["translations"]
    expected = speech_translator.transcribe(received(spoken), ["a", "b"], 2, 2)
    assert len(answers) == len(spoken)
    step = speech_translator.seconds_per_vector
    for answer, utterance, translation in zip(answers, spoken, expected, strict=True):
        assert re.fullmatch(r"[0-9 ]*", answer["text"])
        assert answer["text"] == translation.text and answer["target_tokens"] == translation.target_tokens
        assert answer["source_tokens"] == [f"{j * step:.2f}s" for j in range(len(answer["source_tokens"]))]
        assert len(answer["source_tokens"]) * step <= len(utterance.samples) / 8000 + step
        for hypothesis in (answer, *answer["alternatives"]):
            matrix = np.array(hypothesis["alignment"])
            assert matrix.shape == (len(hypothesis["target_tokens"]), len(answer["source_tokens"]))
            assert np.allclose(matrix.sum(axis=1), 1.0, atol=1e-3)
        assert len(answer["alternatives"]) == 1


def test_a_data_url_is_read_as_its_base64(speech_client, spoken):
    plain = speech_client.post("/v1/translate", json={"audio": [encoded(spoken[0].samples)]}).json()
    url = "data:audio/wav;base64," + encoded(spoken[0].samples)
    assert speech_client.post("/v1/translate", json={"audio": [url]}).json() == plain


def test_the_model_description_says_the_input_is_audio(speech_client, speech_translator):
    info = speech_client.get("/v1/model").json()
    assert info["input"] == "audio" and info["source_vocabulary"] is None
    assert (info["source_language"], info["target_language"]) == ("audio", "digits")
    assert info["sample_rate"] == 8000 and info["seconds_per_vector"] == pytest.approx(0.03)
    assert info["limits"]["max_audio_seconds"] == 5.0 and info["limits"]["max_texts"] == 3
    schema = speech_client.get("/openapi.json").json()["components"]["schemas"]["TranslateRequest"]
    assert schema["required"] == ["audio"] and "texts" not in schema["properties"]
    assert schema["properties"]["audio"]["maxItems"] == 3


def test_a_text_model_says_its_input_is_text_and_refuses_audio(model_dir, spoken):
    translator = rnnsearch.load(model_dir, device="cpu")
    with TestClient(create_app(translator, model_dir, Limits(max_texts=4))) as client:
        info = client.get("/v1/model").json()
        assert info["input"] == "text" and info["source_vocabulary"] == len(translator.src_subwords)
        assert info["sample_rate"] is None and info["limits"]["max_audio_seconds"] is None
        response = client.post("/v1/translate", json={"audio": [encoded(spoken[0].samples)]})
        assert_json_error(response, 422, "audio: this model reads text: send sentences in `texts`")
        response = client.post("/v1/translate", json={"texts": ["Hund"], "audio": ["UklGRg=="]})
        assert_json_error(response, 422, "this model reads text")


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({"texts": ["eins zwei"]}, 422, "texts: this model reads audio: send WAV files in `audio`"),
        ({"audio": ["not base64!"]}, 422, "audio.0: not base64"),
        ({"audio": [base64.b64encode(b"just words, no audio").decode()]}, 422, "audio.0: not a PCM WAV file"),
        ({"audio": [""]}, 422, "audio.0: not a WAV file"),
        ({"audio": [base64.b64encode(CORRUPT).decode()]}, 422, "audio.0: not a PCM WAV file"),
        ({"audio": [encoded(np.zeros(1600), rate=16000)]}, 422, "audio.0: sample rate 16000 Hz, expected 8000 Hz"),
        ({"audio": [encoded(np.zeros(0))]}, 422, "audio.0: no audio samples"),
        (
            {"audio": [encoded(np.zeros(800)), silence_8_bit(6)]},
            413,
            "audio.1: 6.00 s of audio, more than the server's 5 s",
        ),
        ({"audio": [encoded(np.zeros(6 * 8000))]}, 413, "the size of a WAV file of 5 s (16-bit mono)"),
        ({"audio": [encoded(np.zeros(800))] * 4}, 413, "audio: List should have at most 3 items"),
        ({"audio": ["A" * 200_000]}, 413, "audio.0: String should have at most"),
        ({"audio": []}, 422, "audio: List should have at least 1 item"),
        ({}, 422, "audio: Field required"),
        ({"audio": [encoded(np.zeros(800))], "n_best": 9}, 422, "n_best: 9 is more than the beam size"),
    ],
)
def test_bad_audio_requests_get_a_json_error_naming_the_item(speech_client, body, status, fragment):
    assert_json_error(speech_client.post("/v1/translate", json=body), status, fragment)


def test_a_request_without_a_body_names_the_field_a_speech_model_takes(speech_client):
    response = speech_client.post("/v1/translate")
    assert_json_error(response, 422, "the request has no body: send a JSON object with `audio`")


def test_the_body_limit_leaves_room_for_the_longest_recordings(speech_client, spoken):
    longest = np.resize(spoken[0].samples, 5 * 8000)
    response = speech_client.post("/v1/translate", json={"audio": [encoded(longest)] * 3, "beam_size": 1})
    assert response.status_code == 200, response.text
    assert len(response.json()["translations"]) == 3
    too_big = b'{"audio": ["' + b"A" * 2_000_000 + b'"]}'
    response = speech_client.post("/v1/translate", content=too_big, headers={"content-type": "application/json"})
    assert_json_error(response, 413, "request body larger than")


def test_concurrent_audio_requests_are_merged_and_answered_as_if_alone(speech_translator, speech_model, spoken):
    expected = speech_translator.transcribe(received(spoken), ["a", "b"], beam_size=2)
    with TestClient(create_app(speech_translator, speech_model, Limits(max_batch=2, max_wait=30.0))) as client:
        bodies = [{"audio": [encoded(u.samples)], "beam_size": 2} for u in spoken]
        with ThreadPoolExecutor(len(bodies)) as pool:
            responses = list(pool.map(lambda body: client.post("/v1/translate", json=body), bodies))
        batcher = client.app.state.batcher
        assert (batcher.requests, batcher.calls) == (2, 1)
    for response, translation in zip(responses, expected, strict=True):
        assert response.status_code == 200, response.text
        [answer] = response.json()["translations"]
        assert answer["text"] == translation.text
        assert np.allclose(np.array(answer["alignment"]), translation.alignment, atol=1e-4)
