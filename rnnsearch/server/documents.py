"""The server's documents endpoint: a document's bytes in, the translated document's out.

    POST /v1/documents?name=page.html[&format=html][&beam_size=5][&placement=links]
                      [&alignment_from=aligner][&unchanged_ok=true][&retranslate=true]
                      [&overwrite=translated,final][&proposals=true]
                      [&state_qualifier=mt-suggestion]   (XLIFF)
                      [&notes=false][&hidden_sheets=true][&sheet_names=true]   (Office)
                      [&glossary={"Hund": "hound"}]   (the request's own terms, JSON)
         body: the document's bytes, as they are (no JSON, no form)
         answer: the translated document, with its media type, a Content-Disposition
                 naming it, and X-Rnnsearch-Summary (percent-encoded): what was done

The document is read and written by rnnsearch.documents, as `translate-document`
reads and writes it; its sentences go to the server's batcher `max_batch` at a time, as
bulk requests, served after every other request waiting: however many documents are
being translated, a request waits for at most the model call under way. The body is
bounded by the server's `max_document_bytes`. A document is not a sentence, so its time
limit grows with it: the server's timeout for its reading and first batch, and again for
each batch after one is done; past it (no batch done in `timeout` seconds) the answer is
504 and no further batch of its sentences is decoded. A document that cannot be read, or
comes back unchanged, is a 422 with the same one line the command gives, and so is a
query parameter the endpoint does not take.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from rnnsearch.arguments import unique_members
from rnnsearch.documents import formats
from rnnsearch.documents.document import Document, Format, ReadOptions
from rnnsearch.documents.translating import TranslatedDocument, read_document, translate_read
from rnnsearch.errors import UserError
from rnnsearch.markup import Placement
from rnnsearch.server.batcher import Batcher, Item
from rnnsearch.server.limits import Limits
from rnnsearch.server.refusals import ERROR_RESPONSES
from rnnsearch.text.glossary import Glossary
from rnnsearch.translation.document_translation import document_request, fitting, sentence_translator
from rnnsearch.translation.request import Request as CallRequest
from rnnsearch.translation.translator import Translation, Translator

PATH = "/v1/documents"

BYTES = {"schema": {"type": "string", "format": "binary"}}
ANSWERED = {entry.media_type: BYTES for entry in formats().values()}
"""The answer's media types, one per format, each a document's bytes."""


DOCUMENT_THREADS = 64
"""Documents read and translated at once; a document past them waits for a thread, its
time limit running."""


READ_AT_ONCE = 2
"""Documents parsed at once: reading a document builds its whole tree in memory (a small
DOCX of many empty paragraphs, a large one), so the threads above wait their turn to read,
and a document whose request ended while it waited is never read."""

READING = threading.BoundedSemaphore(READ_AT_ONCE)


class _Withdrawn(UserError):
    """A document request given up on (timed out, or its client gone): no more batches."""


class _Progress:
    """When a document's last batch was done (time.monotonic), read by the request's
    deadline, which each batch done moves on by the server's timeout."""

    def __init__(self) -> None:
        self.at = time.monotonic()


class DocumentQuery(BaseModel):
    """What a document request asks, from its query string: `name`, the document's file
    name, whose extension says its format unless `format` does; the search, placement and
    alignment as /v1/translate's; whether a document that comes back unchanged is
    answered (`unchanged_ok`); how the document is read (ReadOptions: `retranslate`,
    `overwrite`, `proposals`, `state_qualifier`, `notes`, `hidden_sheets`, `sheet_names`); and `glossary`,
    the request's own terms as a JSON object (as /v1/translate's), laid over the server's."""

    model_config = ConfigDict(frozen=True)

    name: str
    format: str | None = None
    beam_size: int | None = None
    placement: str | None = None
    alignment_from: str | None = None
    unchanged_ok: bool = False
    retranslate: bool = False
    overwrite: str = ""
    proposals: bool = False
    state_qualifier: str = "leveraged-mt"
    notes: bool = True
    hidden_sheets: bool = False
    sheet_names: bool = False
    glossary: str | None = None

    def read_options(self, translator: Translator) -> ReadOptions:
        """How the request's document is read, for the served model's languages."""
        return ReadOptions(
            translator.data.tgt_lang,
            source_language=translator.data.src_lang,
            retranslate=self.retranslate,
            overwrite=self.overwrite,
            proposals=self.proposals,
            state_qualifier=self.state_qualifier,
            notes=self.notes,
            hidden_sheets=self.hidden_sheets,
            sheet_names=self.sheet_names,
        )


def add_documents(
    app: FastAPI, translator: Translator, batcher: Batcher, limits: Limits, served: Glossary | None = None
) -> None:
    """Add the documents endpoint to `app`, whose batcher decodes its sentences, writing
    the terms of the server's glossary (`served`) in each document's translation. Each
    document is read, waited for and written in a thread of the endpoint's own
    (`DOCUMENT_THREADS`), never of the event loop's default pool, which every text
    request uses to read its markup: documents waiting for their batches filled that
    pool, and a one-line request waited for a document to end."""
    documents_pool = ThreadPoolExecutor(max_workers=DOCUMENT_THREADS, thread_name_prefix="rnnsearch-document")

    @app.post(
        PATH,
        response_class=Response,
        responses={200: {"description": "the translated document", "content": ANSWERED}, **ERROR_RESPONSES},
        openapi_extra={"requestBody": {"required": True, "content": {"application/octet-stream": BYTES}}},
        summary="Translate a document (HTML, Office, EPUB, Markdown, subtitles, PO, JSON, YAML, XLIFF, text)",
    )
    async def documents(connection: Request, query: Annotated[DocumentQuery, Query()]) -> Response:
        """Translate the document sent as the body, as `query` asks (DocumentQuery)."""
        _refuse_unknown(connection, parameters)
        own = _query_glossary(query.glossary, limits.max_glossary_terms)
        asked = {
            "alignment_from": query.alignment_from,
            "beam_size": query.beam_size,
            "placement": query.placement,
            "glossary": served if own is None else own.over(served),
        }
        call, placed = document_request(translator, "send its recordings to /v1/translate", asked)
        data = await connection.body()
        loop = asyncio.get_running_loop()
        options = query.read_options(translator)
        job = _Job(
            translator, batcher, loop, call, placed, options, unchanged_ok=query.unchanged_ok, batch=limits.max_batch
        )
        work = loop.run_in_executor(documents_pool, partial(job.translated, data, query.name, query.format))
        try:
            document = await _within(work, job.progress, limits.timeout)
        finally:
            job.withdrawn.set()
        return _answer(document)

    parameters = tuple(DocumentQuery.model_fields)


def _refuse_unknown(connection: Request, parameters: tuple[str, ...]) -> None:
    """A 422 naming the first query parameter the endpoint does not take, which would
    otherwise be ignored (a misspelt option, an option of another endpoint)."""
    unknown = sorted(set(connection.query_params) - set(parameters))
    if unknown:
        raise HTTPException(422, f"{unknown[0]}: {PATH} takes no such parameter (it takes {', '.join(parameters)})")


def _query_glossary(text: str | None, most: int) -> Glossary | None:
    """The request's own terms from `glossary=`: a JSON object of source terms to their
    targets, at most `most` of them, none given twice; refused in one line naming what
    is wrong (a blank or too long term as /v1/translate refuses it)."""
    if text is None:
        return None
    try:
        mapping = json.loads(text, object_pairs_hook=unique_members)
    except json.JSONDecodeError as error:
        raise HTTPException(422, f"glossary: not JSON ({error.msg} at character {error.pos})") from None
    except ValueError as error:
        raise HTTPException(422, f"glossary: {error}") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise HTTPException(422, 'glossary: a JSON object of source terms to their targets, such as {"Hund": "hound"}')
    if len(mapping) > most:
        raise HTTPException(413, f"glossary: {len(mapping)} terms, more than the {most} a request may have")
    return Glossary.of(mapping)


async def _within(work: asyncio.Future[TranslatedDocument], progress: _Progress, timeout: float) -> TranslatedDocument:
    """The document `work` makes, awaited until `timeout` seconds pass with no batch of
    its sentences done (each one done moves the deadline on); then a 504."""
    while (left := progress.at + timeout - time.monotonic()) > 0:
        done, _ = await asyncio.wait({work}, timeout=left)
        if done:
            return work.result()
    work.cancel()
    raise HTTPException(504, f"no batch of the document's sentences was done within the server's {timeout:g} s limit")


def read_withdrawable(
    data: bytes,
    withdrawn: threading.Event,
    *,
    format: str | None,
    name: str,
    options: ReadOptions,
) -> tuple[str, Format, Document]:
    """`read_document`, READ_AT_ONCE documents at a time; a request withdrawn (timed out,
    its client gone) before its turn is refused unread."""
    with READING:
        if withdrawn.is_set():
            raise _Withdrawn(f"{name}: withdrawn before it was read")
        return read_document(data, format=format, name=name, options=options)


@dataclass
class _Job:
    """One document request's work: the model and batcher it is decoded by (from a worker
    thread, through the event `loop`), its request's settings, how it is read and placed,
    and what the endpoint watches: whether it was withdrawn, and when a batch was last done."""

    translator: Translator
    batcher: Batcher
    loop: asyncio.AbstractEventLoop
    call: CallRequest
    placement: Placement
    options: ReadOptions
    unchanged_ok: bool = False
    batch: int = 64
    withdrawn: threading.Event = field(default_factory=threading.Event)
    progress: _Progress = field(default_factory=_Progress)

    def translated(self, data: bytes, name: str, format: str | None) -> TranslatedDocument:
        """The document read, its sentences decoded by the batcher (one batch at a time,
        each noted in `progress`, until the request is withdrawn) and written back."""
        read = read_withdrawable(data, self.withdrawn, format=format, name=name, options=self.options)
        [document] = translate_read(
            [read],
            sentence_translator(
                self._decoded(name), reading=self.call.reading, placement=self.placement, batch=self.batch
            ),
            language=self.translator.data.src_lang,
            unchanged_ok=self.unchanged_ok,
            fits=lambda sentences: fitting(self.translator, sentences),
        )
        return document

    def _decoded(self, name: str) -> Callable[[list[str]], list[Translation]]:
        def decoded(texts: list[str]) -> list[Translation]:
            if self.withdrawn.is_set():
                raise _Withdrawn(f"{name}: withdrawn")
            items: list[Item] = [(t, "", self.call) for t in texts]
            work = self.batcher.translate(items, self.call.shared(), bulk=True)
            translations = asyncio.run_coroutine_threadsafe(work, self.loop).result()
            self.progress.at = time.monotonic()
            return translations

        return decoded


def _answer(document: TranslatedDocument) -> Response:
    """The translated document as the answer, named and described in its headers."""
    filename = quote(document.name.rsplit("/", 1)[-1])
    return Response(
        document.data,
        media_type=document.media_type,
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{filename}",
            "X-Rnnsearch-Summary": quote(document.summary),
        },
    )
