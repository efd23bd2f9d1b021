"""The HTTP server: a JSON translation API and the web page that shows alignments.

    POST /v1/translate   texts (or, for a speech model, base64 WAV files in `audio`) →
                         translations, n-best lists and alignment matrices
    POST /v1/documents   a document's bytes (HTML, DOCX, PPTX, XLSX, ODT, ODP, ODS, EPUB, Markdown, SRT, WebVTT,
                         PO, JSON, YAML, XLIFF, text) → the translated document (documents.py)
    GET  /v1/model       input kind, languages, vocabularies, architecture, training figures, limits
    GET  /v1/health      {"status": "ok"}
    GET  /               the web page (static/), plain HTML, CSS, JavaScript and SVG
    GET  /docs           Swagger UI over /openapi.json (static/swagger/, no CDN)

Every error answer is JSON, {"error": "one line"} (refusals.py): 413 for a request over
the size limits, 422 for a malformed or invalid one, 504 when it takes longer than the timeout.
"""

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

import numpy as np
from fastapi import FastAPI, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from rnnsearch import __version__
from rnnsearch.decoding.results import TermReport
from rnnsearch.markup import MarkedUp, MarkupOptions
from rnnsearch.search.rules import Cancelled
from rnnsearch.server import cat_tools, documents, schemas
from rnnsearch.server.batcher import Batcher, TranslateFn
from rnnsearch.server.info import describe_model, max_audio_seconds
from rnnsearch.server.limits import Limits
from rnnsearch.server.recordings import read_audio
from rnnsearch.server.refusals import ERROR_RESPONSES, BodyLimit, add_error_handlers, max_body_bytes, refuse_twins
from rnnsearch.server.texts import text_items, texts_translator, translated, while_connected
from rnnsearch.text.glossary import Glossary
from rnnsearch.translation.request import Request as CallRequest
from rnnsearch.translation.translator import Translation, Translator

STATIC = Path(__file__).resolve().parent / "static"
TWINS_ON_LOOP_BYTES = 64 * 1024
"""A request body up to this size is checked for a key given twice on the event loop, a
larger one in a worker thread: below it, reading the body again costs less than the hop
to a thread (BENCHMARKS.md, "A key given twice")."""


def create_app(
    translator: Translator,
    model_dir: str | Path | Sequence[str | Path],
    limits: Limits | None = None,
    *,
    glossary: Glossary | Mapping[str, str] | str | Path | None = None,
) -> FastAPI:
    """The server for `translator`, the model loaded from `model_dir` (or the ensemble
    loaded from a list of them, described by the first), which writes the terms of
    `glossary` (`serve --glossary`: a glossary file's path, a mapping or a Glossary,
    checked once here, as a call's glossary is) in every translation, a request's own
    laid over them.

    Its batcher (app.state.batcher) starts and stops with the app's lifespan, so run
    the app under a server such as uvicorn, or in tests inside `with TestClient(app)`.
    limits: default Limits().
    """
    limits = limits or Limits()
    batcher = Batcher(_decoder(translator), limits.max_batch, limits.max_wait)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await batcher.start()
        try:
            yield
        finally:
            await batcher.stop()

    app = FastAPI(
        title="rnnsearch",
        version=__version__,
        summary="Translate with an attentional encoder–decoder and see the alignment it learned.",
        lifespan=lifespan,
        docs_url=None,  # served by _add_page, from local files instead of a CDN
        redoc_url=None,
    )
    app.state.batcher = batcher
    app.state.limits = limits
    app.add_middleware(
        BodyLimit,
        max_bytes=max_body_bytes(limits, _audio_chars(translator, limits)),
        paths={documents.PATH: limits.max_document_bytes},
    )
    api = INPUTS[translator.data.reads]
    add_error_handlers(
        app,
        field=api.field,
        wrong_field=api.wrong_field,
        wrong_input=api.wrong_input,
        audio_seconds=max_audio_seconds(translator, limits),
    )
    served = None if glossary is None else translator.request({"glossary": glossary}, searches=False).glossary
    _add_api(app, translator, batcher, describe_model(translator, model_dir, limits), limits, served)
    documents.add_documents(app, translator, batcher, limits, served)
    if api.texts:
        pair = cat_tools.Pair(translator.data.src_lang, translator.data.tgt_lang)
        cat_tools.add_cat_tools(app, pair, texts_translator(translator, batcher, limits, served))
    _add_page(app)
    return app


def _decoder(translator: Translator) -> TranslateFn:
    """The batcher's model call: translate texts, or transcribe a speech model's recordings."""
    return INPUTS[translator.data.reads].decoder(translator)


def _translating(translator: Translator) -> TranslateFn:
    def translate(
        items: list[tuple[str, str, CallRequest]], shared: CallRequest, cancelled: Cancelled
    ) -> list[Translation]:
        """The items' texts decoded in one search: as their one request asks where they
        share a glossary, else each text's terms found by its own request's."""
        texts, prefixes, owners = [text for text, _, _ in items], [p for _, p, _ in items], [o for _, _, o in items]
        given = prefixes if any(prefixes) else None
        if all(owner.glossary is owners[0].glossary for owner in owners):
            return translator.translate_with(owners[0].cancelled_by(cancelled).prefixed(given), texts)
        request = shared.cancelled_by(cancelled).prefixed(given)
        return translator.translate_with(request, texts, owners=owners)

    return translate


def _transcribing(translator: Translator) -> TranslateFn:
    def transcribe(audio: list[np.ndarray], request: CallRequest, cancelled: Cancelled) -> list[Translation]:
        search = request.searched
        names = [f"audio.{k}" for k in range(len(audio))]
        return translator.transcribe(audio, names, search.beam_size, search.n_best, cancelled)

    return transcribe


class _RecordingsAsked(Protocol):
    """A speech model's request: base64 WAV files."""

    audio: list[str]


async def _audio_items(
    translator: Translator, request: _RecordingsAsked, max_seconds: float | None, markup: MarkupOptions | None
) -> tuple[list[np.ndarray], None]:
    """The request's recordings, decoded off the event loop; `request` as for `text_items`,
    `max_seconds` and the sample rate a speech model's (a recording has no markup)."""
    rate = translator.data.sample_rate
    if max_seconds is None or rate is None:
        raise ValueError("recordings are read for a speech model, which has a sample rate and a longest recording")
    return await asyncio.to_thread(read_audio, request.audio, max_seconds, rate), None


@dataclass(frozen=True)
class InputApi:
    """How the API takes one kind of input: the request's field that holds it, the field
    it does not take and what to say when that is sent, how a request's inputs are read,
    and the batcher's model call; `texts`: whether it reads texts, which the CAT tools'
    shapes (cat_tools.py) send."""

    field: str
    wrong_field: str
    wrong_input: str
    items: Callable[..., Awaitable[tuple[list, list[MarkedUp | None] | None]]]
    decoder: Callable[[Translator], TranslateFn]
    texts: bool = False


INPUTS = {
    "text": InputApi(
        "texts",
        "audio",
        "audio: this model reads text: send sentences in `texts`",
        text_items,
        _translating,
        texts=True,
    ),
    "audio": InputApi(
        "audio",
        "texts",
        "texts: this model reads audio: send WAV files in `audio`, base64-encoded",
        _audio_items,
        _transcribing,
    ),
}
"""The API of a model reading text, and of one reading audio (the model's data section
says which it reads): the request's fields are the API's own, one per input a model reads."""


def _call_request(translator: Translator, options: schemas.TranslateOptions, served: Glossary | None) -> CallRequest:
    """A request's settings, checked once (rnnsearch.translation.request): its search, and
    what its alignments come from: its `alignment_from`, or the model's alignment module
    where it has one and the alignments are shown (as matrices, or to put markup back);
    search's own α otherwise, which costs nothing more. Its terms are its own glossary
    laid over the server's (`served`); its avoid list, words no translation writes. The
    server reads markup itself (`text_items`), and a text's prefix goes with the text,
    so that requests with and without them are decoded together."""
    shown = bool(options.alignments or getattr(options, "markup", None))
    own = getattr(options, "glossary", None)
    asked = {
        "alignment_from": options.alignment_from,
        "beam_size": options.beam_size,
        "n_best": options.n_best,
        "glossary": served if own is None else Glossary.of(own).over(served),
        "avoid": getattr(options, "avoid", None),
    }
    return translator.request(asked, shown=shown)


def _audio_chars(translator: Translator, limits: Limits) -> int | None:
    """The longest base64 WAV file a speech model's server takes; None for a text model."""
    seconds, rate = max_audio_seconds(translator, limits), translator.data.sample_rate
    return None if seconds is None or rate is None else schemas.audio_base64_chars(seconds, rate)


def _add_api(
    app: FastAPI,
    translator: Translator,
    batcher: Batcher,
    info: schemas.ModelInfo,
    limits: Limits,
    served: Glossary | None,
) -> None:
    TranslateRequest = schemas.translate_request_model(
        limits, _audio_chars(translator, limits), sample_rate=translator.data.sample_rate
    )
    max_seconds = max_audio_seconds(translator, limits)

    @app.post("/v1/translate", responses=ERROR_RESPONSES, summary="Translate texts or recordings")
    async def translate(
        request: TranslateRequest,  # type: ignore[valid-type]  # a model made for the server's limits
        connection: Request,
    ) -> schemas.TranslateResponse:
        """Translate every text (or transcribe every recording); requests arriving together are decoded together."""
        body = await connection.body()
        if len(body) > TWINS_ON_LOOP_BYTES:  # read again off the event loop, as a large body takes a while
            await asyncio.to_thread(refuse_twins, body)
        else:
            refuse_twins(body)
        options = cast(schemas.TranslateOptions, request)
        call = _call_request(translator, options, served)
        markup = _markup_options(request)
        items, marked = await INPUTS[translator.data.reads].items(translator, request, max_seconds, markup)
        try:
            work = asyncio.wait_for(translated(batcher, items, marked, call, markup), limits.timeout)
            results = await while_connected(connection, work)
        except TimeoutError:
            raise HTTPException(504, f"translation took longer than the server's {limits.timeout:g} s limit") from None
        alignments = options.alignments and bool(translator.model.has_alignment)
        terms = call.glossary is not None
        return schemas.TranslateResponse(translations=[_translation(t, alignments, terms) for t in results])

    @app.get("/v1/model", summary="Describe the served model")
    async def model() -> schemas.ModelInfo:
        return info

    @app.get("/v1/health", summary="Check that the server is up")
    async def health() -> schemas.Health:
        return schemas.Health(status="ok")


def _markup_options(request: schemas.TranslateOptions) -> MarkupOptions | None:
    """How a request's texts are read and their markup put back (None: as plain text),
    checked as the API checks them; the server's --max-chars bounds every text already."""
    options = MarkupOptions.of(getattr(request, "markup", None), False, None, getattr(request, "placement", None))
    return None if options is None else dataclasses.replace(options, max_chars=None)


def _hypothesis(result: Translation, alignments: bool, terms: bool) -> dict:
    alignment = None
    if alignments and result.alignment is not None:
        alignment = result.alignment.astype(np.float64).round(5).tolist()
    return {
        "text": result.text,
        "score": result.score,
        "target_tokens": result.target_tokens,
        "alignment": alignment,
        "alignment_from": result.alignment_from if alignment is not None else None,
        "marked_up": result.marked_up,
        "terms": _terms(result.terms) if terms else None,
    }


def _terms(report: TermReport) -> schemas.Terms:
    return schemas.Terms(
        found=report.found,
        written=report.written,
        terms=[
            schemas.Term(source=t.source, target=t.target, found=t.found, where=[list(w) for w in t.where])
            for t in report.terms
        ],
    )


def _translation(result: Translation, alignments: bool, terms: bool) -> schemas.Translation:
    return schemas.Translation(
        **_hypothesis(result, alignments, terms),
        source_tokens=result.source_tokens,
        alternatives=[schemas.Hypothesis(**_hypothesis(a, alignments, terms)) for a in result.alternatives],
    )


def _add_page(app: FastAPI) -> None:
    """The web page at /, and the API's Swagger UI at /docs, both from files shipped with
    the package, so neither needs a network."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="rnnsearch API",
            swagger_js_url="/static/swagger/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger/swagger-ui.css",
            swagger_favicon_url="/static/swagger/favicon-32x32.png",
        )
