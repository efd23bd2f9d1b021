"""The HTTP shapes that CAT tools and translation clients already call, beside the server's
own API, so that OmegaT, Okapi, Weblate, the OPUS-CAT plug-ins and LibreTranslate's
clients reach the model with no plug-in of their own:

    GET  /translate?langpair=en|fr&q=…[&format=html]          Apertium APy: {"responseData":
                                                              {"translatedText": …}, …}
    GET  /listPairs                                           Apertium APy
    POST /translate {q, source, target, format, api_key}      LibreTranslate (JSON or a form;
                                                              q one text or a list)
    GET  /languages                                           LibreTranslate
    GET  /MTRestService/TranslateJson?input=…&srcLangCode=…   OPUS-CAT: {"translation": …}
         &trgLangCode=…
    GET  /MTRestService/ListSupportedLanguagePairs            OPUS-CAT

They are the peers' shapes, documented in the serving guide rather than in this server's
OpenAPI schema. Each is a thin adapter over the one path /v1/translate takes (the batcher, the server's
bounds, timeout and glossary), given as `Translate`. A language is named as clients name
it: two letters, three (`eng`, `fra`, `deu`), or a locale (`pt_BR`, `de-DE`); another
pair than the model's gets the shape's own error body. Tags in a text are placed by the
alignment, each exactly once: with `format=html` read as HTML; otherwise a text whose tags
are well-formed XML (OmegaT's short tags `<b0>…</b0>`, `<x1/>`; Okapi's coded HTML
`<u id='1'>…</u>`, `<br id='p3'/>`) is read as text with tags, its `&` a character, and
answered as it came, its words unescaped; any other text as plain text.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from rnnsearch.errors import UserError
from rnnsearch.markup import MarkupError, parse
from rnnsearch.server.texts import Translate
from rnnsearch.text.sentences import language_of

TEXT_WITH_TAGS = "text with tags"
"""How a text whose tags are well-formed XML, with no `format=html`, is read (`_read_as`)."""


@dataclass(frozen=True)
class Pair:
    """The model's languages, as its config names them."""

    source: str
    target: str

    def matches(self, source: str | None, target: str | None) -> bool:
        """Whether codes as a client sends them name this pair (`auto`: the model's source)."""
        given_source = self.source if source in (None, "", "auto") else source
        if not given_source or not target:
            return False
        return language_of(given_source) == language_of(self.source) and language_of(target) == language_of(self.target)

    def refusal(self, source: str | None, target: str | None) -> str:
        return f"{source or '?'} → {target or '?'} is not served; this server translates {self.source} → {self.target}"


def _read_as(text: str, format: str | None) -> tuple[str, str | None]:
    """A text as it is translated, and the markup it is read in (see the module docstring)."""
    if format == "html":
        return text, "html"
    if "<" not in text:
        return text, None
    escaped = text.replace("&", "&amp;")
    try:
        return (escaped, TEXT_WITH_TAGS) if parse(escaped, "xml").elements else (text, None)
    except MarkupError:
        return text, None


def _answered(line: str, read_as: str | None) -> str:
    """A translated line as the client sent its text: a text with tags gets its words unescaped."""
    if read_as != TEXT_WITH_TAGS:
        return line
    return "".join(s if s.startswith("<") else html.unescape(s) for s in parse(line, "xml").segments)


async def translated(translate: Translate, texts: list[str], format: str | None, connection: Request) -> list[str]:
    """`texts` through `translate`, each read as `_read_as` says, in their order."""
    read = [_read_as(text, format) for text in texts]
    answers: list[str] = [""] * len(texts)
    for markup in dict.fromkeys(kind for _, kind in read):
        chosen = [k for k, (_, kind) in enumerate(read) if kind == markup]
        dialect = "xml" if markup == TEXT_WITH_TAGS else markup
        lines = await translate([read[k][0] for k in chosen], dialect, connection)
        for k, line in zip(chosen, lines, strict=True):
            answers[k] = _answered(line, markup)
    return answers


def _refused(error: Exception) -> tuple[int, str]:
    """A refusal's status and its one line."""
    if isinstance(error, HTTPException):
        return error.status_code, str(error.detail)
    return 400, str(error)


def add_cat_tools(app: FastAPI, pair: Pair, translate: Translate) -> None:
    """The three shapes' endpoints, on `app`, over `translate`."""
    _add_apertium(app, pair, translate)
    _add_libretranslate(app, pair, translate)
    _add_opus_cat(app, pair, translate)


def _apertium_error(status: int, message: str) -> JSONResponse:
    body = {"responseData": None, "responseDetails": message, "responseStatus": status}
    return JSONResponse({**body, "status": "error", "code": status, "message": message, "explanation": message}, status)


def _add_apertium(app: FastAPI, pair: Pair, translate: Translate) -> None:
    @app.get("/translate", include_in_schema=False, summary="Apertium APy: translate q (OmegaT, Okapi, Weblate)")
    async def apertium(connection: Request, q: str = "", langpair: str = "", format: str | None = None) -> JSONResponse:
        source, _, target = langpair.partition("|")
        if not pair.matches(source, target):
            return _apertium_error(400, pair.refusal(source, target))
        try:
            [text] = await translated(translate, [q], format, connection)
        except (HTTPException, UserError) as error:
            return _apertium_error(*_refused(error))
        return JSONResponse({"responseData": {"translatedText": text}, "responseDetails": None, "responseStatus": 200})

    @app.get("/listPairs", include_in_schema=False, summary="Apertium APy: the language pairs served")
    async def pairs() -> JSONResponse:
        data = [{"sourceLanguage": pair.source, "targetLanguage": pair.target}]
        return JSONResponse({"responseData": data, "responseDetails": None, "responseStatus": 200})


async def _fields(connection: Request) -> Mapping[str, object]:
    """A LibreTranslate request's fields, sent as JSON or as a form."""
    body = await connection.body()
    if connection.headers.get("content-type", "").startswith("application/json"):
        fields = json.loads(body or b"{}")
        if not isinstance(fields, dict):
            raise UserError("the body is not a JSON object")
        return fields
    form = parse_qs(body.decode("utf-8"), keep_blank_values=True, errors="strict")
    return {key: values if key == "q" and len(values) > 1 else values[-1] for key, values in form.items()}


def _add_libretranslate(app: FastAPI, pair: Pair, translate: Translate) -> None:
    @app.post("/translate", include_in_schema=False, summary="LibreTranslate: translate q (Weblate, its clients)")
    async def libretranslate(connection: Request) -> JSONResponse:
        try:
            fields = await _fields(connection)
        except (ValueError, UserError) as error:
            return JSONResponse({"error": f"the body is not JSON or a form: {error}"}, 400)
        source, target, q = fields.get("source"), fields.get("target"), fields.get("q")
        if not pair.matches(_text(source), _text(target)):
            return JSONResponse({"error": pair.refusal(_text(source), _text(target))}, 400)
        texts = [q] if isinstance(q, str) else q
        if not isinstance(texts, list) or not texts or not all(isinstance(text, str) for text in texts):
            return JSONResponse({"error": "q: expected a text or a list of texts"}, 400)
        try:
            answers = await translated(translate, texts, _text(fields.get("format")), connection)
        except (HTTPException, UserError) as error:
            status, message = _refused(error)
            return JSONResponse({"error": message}, status)
        body: dict[str, object] = {"translatedText": answers[0] if isinstance(q, str) else answers}
        if source == "auto":
            body["detectedLanguage"] = {"confidence": 100, "language": pair.source}
        return JSONResponse(body)

    @app.get(
        "/languages", include_in_schema=False, summary="LibreTranslate: the languages served, named by their codes"
    )
    async def languages() -> JSONResponse:
        return JSONResponse(
            [
                {"code": pair.source, "name": pair.source, "targets": [pair.target]},
                {"code": pair.target, "name": pair.target, "targets": []},
            ]
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _add_opus_cat(app: FastAPI, pair: Pair, translate: Translate) -> None:
    @app.get(
        "/MTRestService/TranslateJson", include_in_schema=False, summary="OPUS-CAT: translate input (OmegaT, Wordfast)"
    )
    async def opus_cat(
        connection: Request, input: str = "", srcLangCode: str = "", trgLangCode: str = ""
    ) -> JSONResponse:
        if not pair.matches(srcLangCode, trgLangCode):
            return JSONResponse({"error": pair.refusal(srcLangCode, trgLangCode)}, 400)
        try:
            [text] = await translated(translate, [input], None, connection)
        except (HTTPException, UserError) as error:
            status, message = _refused(error)
            return JSONResponse({"error": message}, status)
        return JSONResponse({"translation": text})

    @app.get("/MTRestService/ListSupportedLanguagePairs", include_in_schema=False, summary="OPUS-CAT: the pairs served")
    async def opus_pairs() -> JSONResponse:
        return JSONResponse([f"{pair.source}-{pair.target}"])
