"""Property-based fuzzing of the HTTP API from its own OpenAPI schema, with schemathesis.

Requests are generated from /openapi.json, schema-valid ones and (for the operation that
takes a body) schema-invalid ones, and sent in-process to the ASGI app serving the tiny
trained model. Every answer must be one the schema documents: no 5xx, a documented status,
a JSON body matching its schema. A schema-valid request must be translated, unless it breaks a
rule the schema cannot state (more hypotheses than its beam holds, a glossary target the
model cannot spell): then its 422 names one of them.

The schema is built inside a test rather than with schemathesis's pytest loader
(`schemathesis.pytest.from_fixture`), which does not run under pytest 9.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.schemas import APIOperation, BaseSchema

import rnnsearch
from rnnsearch.markup import MarkupError, parse
from rnnsearch.server import Limits, create_app
from rnnsearch.text.glossary import GlossaryError
from rnnsearch.translation.translator import Translator

LIMITS = Limits(max_texts=2, max_chars=16, timeout=30.0)
"""Small, so that the costliest request the schema allows decodes in about a second on an idle
machine: 2 texts of 16 rare characters (about 50 subword pieces each, so up to 110 output
steps) with beam size 64. Longer texts and more of them are still sent, as invalid requests."""

CALL_TIMEOUT = LIMITS.timeout + 10
"""Seconds the client waits for an answer: longer than the server's own timeout, which answers 504."""

EXAMPLES = 40
"""Generated requests per operation and mode, at most."""

BUDGET = 40.0
"""Seconds of requests per operation and mode: examples generated after it are not sent, so
that a slow machine tests fewer requests instead of taking minutes (hypothesis has no total
time limit of its own)."""

FUZZED = [
    ("POST /v1/translate", GenerationMode.POSITIVE),
    ("POST /v1/translate", GenerationMode.NEGATIVE),
    ("POST /v1/documents", GenerationMode.POSITIVE),
    ("POST /v1/documents", GenerationMode.NEGATIVE),
    ("GET /v1/model", GenerationMode.POSITIVE),
    ("GET /v1/health", GenerationMode.POSITIVE),
]
"""Every operation in the schema, with the kinds of request that exist for it: an operation
without parameters or body has no schema-invalid request."""

CHECKS = {
    "checks": {
        "negative_data_rejection": {"expected-statuses": [413, 422]},
        "positive_data_acceptance": {"enabled": False},
    }
}
"""schemathesis's configuration, given in full so that no schemathesis.toml nearby changes it. A
schema-invalid request must get one of the API's documented refusals, 413 (too large) or 422.
Schema-valid requests are checked by check_translation_answer instead, as n_best > beam_size
is valid by the schema and refused by the server."""

FUZZING = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=CALL_TIMEOUT),
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
"""Bounded in count and in time per request; no example database, so that runs do not depend on earlier ones."""


@pytest.fixture(scope="module")
def translator(model_dir) -> Translator:
    return rnnsearch.load(model_dir, device="cpu")


@pytest.fixture(scope="module")
def api_schema(translator, model_dir) -> BaseSchema:
    app = create_app(translator, model_dir, LIMITS)
    return schemathesis.openapi.from_asgi("/openapi.json", app, config=SchemathesisConfig.from_dict(CHECKS))


def operations(schema: BaseSchema) -> dict[str, APIOperation]:
    """The schema's operations by label ('POST /v1/translate'); a schema that does not load fails the test."""
    return {operation.label: operation for operation in (result.ok() for result in schema.get_all_operations())}


def test_every_operation_in_the_schema_is_fuzzed(api_schema):
    assert sorted(operations(api_schema)) == sorted({label for label, _ in FUZZED})


@pytest.mark.parametrize("label, mode", FUZZED, ids=[f"{label} {mode.value}" for label, mode in FUZZED])
def test_generated_requests_get_documented_answers(api_schema, translator, label, mode):
    operation = operations(api_schema)[label]
    deadline = time.monotonic() + BUDGET
    sent = []

    @FUZZING
    @given(case=operation.as_strategy(mode))
    def answers_as_documented(case: schemathesis.Case) -> None:
        if time.monotonic() > deadline:
            return
        sent.append(case)
        response = case.call(timeout=CALL_TIMEOUT)
        assert response.status_code < 500, response.text
        case.validate_response(response)
        if mode is GenerationMode.POSITIVE and case.operation.label == "POST /v1/translate":
            check_translation_answer(case.body, response.status_code, response.json(), translator)

    answers_as_documented()
    assert sent, "no request was sent within the time budget"


def check_translation_answer(request: dict, status: int, body: dict, translator: Translator) -> None:
    """A schema-valid translation request gets one translation per text, each with an alignment
    of the shape its tokens give, read from the attention; or, if it breaks rules the schema
    cannot state (`refusals`), a 422 that names one of them."""
    refused = refusals(request, translator)
    if refused:
        assert status == 422 and body["error"].startswith(refused), (refused, body)
        return
    markup = request.get("markup")
    n_best = request.get("n_best", 1)
    assert status == 200, body
    translations = body["translations"]
    assert len(translations) == len(request["texts"])
    for translation in translations:
        hypotheses = [translation, *translation["alternatives"]]
        assert 1 <= len(hypotheses) <= n_best
        for hypothesis in hypotheses:
            assert (hypothesis["marked_up"] is None) == (markup is None), hypothesis
            if request.get("alignments", True) and translation["source_tokens"]:
                shape = (len(hypothesis["alignment"]), len(hypothesis["alignment"][0]))
                assert shape == (len(hypothesis["target_tokens"]), len(translation["source_tokens"]))
                assert hypothesis["alignment_from"] == "attention"


def refusals(request: dict, translator: Translator) -> tuple[str, ...]:
    """How the 422 of each rule the request breaks begins, rules the schema cannot state: n_best
    more than the beam size, the alignment module asked of a model without one, a placement
    without markup, a glossary whose terms disagree or whose target the model cannot spell,
    prefixes that are not one per text, a text whose markup is not well-formed. The server
    names the first it finds, its order not the API's to state."""
    found = []
    beam_size = request.get("beam_size") or translator.search.beam_size
    if request.get("n_best", 1) > beam_size:
        found.append(f"n_best: {int(request['n_best'])} is more than the beam size")  # 4.0 is an integer in JSON
    if request.get("alignment_from") == "aligner":  # the served model has no alignment module
        found.append("alignment_from: 'aligner': ")
    if request.get("placement") is not None and request.get("markup") is None:
        found.append("placement: it says how markup is placed")
    if request.get("glossary") is not None:
        try:
            translator.request({"glossary": request["glossary"]})
        except GlossaryError as error:
            found.append(str(error))
    prefixes = request.get("prefixes")
    if prefixes is not None and len(prefixes) != len(request["texts"]):
        found.append(f"prefixes: {len(prefixes)} prefixes for")
    markup = request.get("markup")
    found += [f"texts.{k}: " for k, text in enumerate(request["texts"]) if markup and not well_formed(text, markup)]
    return tuple(found)


def well_formed(text: str, markup: str) -> bool:
    try:
        parse(text, markup)
    except MarkupError:
        return False
    return True
