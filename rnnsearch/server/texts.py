"""Texts through the server: the one path every shape that asks for translations of
texts takes (/v1/translate and the CAT tools' shapes): the texts read, their markup parsed
off the event loop, each checked against the model's longest source, decoded by the
batcher within the server's timeout while the client stays connected, and their markup put
back by the alignment."""

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from fastapi import HTTPException, Request

from rnnsearch.errors import UserError
from rnnsearch.markup import MarkedUp, MarkupOptions, Placement
from rnnsearch.server.batcher import Batcher
from rnnsearch.server.limits import Limits
from rnnsearch.text.glossary import Glossary
from rnnsearch.translation.request import Request as CallRequest
from rnnsearch.translation.text_translation import put_markup_back
from rnnsearch.translation.translator import Translation, Translator

T = TypeVar("T")

Translate = Callable[[list[str], str | None, Request], Awaitable[list[str]]]
"""Texts translated through the server's one path: the texts, the markup they are read in
(None: plain text), and the connection (its request withdrawn when it goes)."""


class TextsAsked(Protocol):
    """A text model's request, as the model made for the server's limits has it
    (`schemas.translate_request_model`)."""

    texts: list[str]
    prefixes: list[str] | None


@dataclass
class _Texts:
    """Texts asked for by another shape than /v1/translate's, as `text_items` reads them."""

    texts: list[str]
    prefixes: list[str] | None = None


def texts_translator(translator: Translator, batcher: Batcher, limits: Limits, served: Glossary | None) -> Translate:
    """Texts translated as /v1/translate translates them (the batcher, the server's bounds,
    timeout and glossary, `served`), for the shapes of cat_tools.py: each answer the
    translation's line with its markup placed, or its text."""
    calls = {shown: translator.request({"glossary": served}, shown=shown) for shown in (False, True)}

    async def translate(texts: list[str], markup: str | None, connection: Request) -> list[str]:
        if len(texts) > limits.max_texts:
            raise HTTPException(413, f"q: {len(texts)} texts, more than the server's {limits.max_texts}")
        for k, text in enumerate(texts):
            if len(text) > limits.max_chars:
                raise HTTPException(
                    413, f"q.{k}: {len(text):,} characters, more than the server's {limits.max_chars:,}"
                )
        options = MarkupOptions.of(markup, False)
        options = None if options is None else dataclasses.replace(options, max_chars=None)
        items, marked = await text_items(translator, _Texts(texts), None, options)
        work = asyncio.wait_for(translated(batcher, items, marked, calls[options is not None], options), limits.timeout)
        try:
            results = await while_connected(connection, work)
        except TimeoutError:
            raise HTTPException(504, f"translation took longer than the server's {limits.timeout:g} s limit") from None
        return [result.text if result.marked_up is None else result.marked_up for result in results]

    return translate


async def text_items(
    translator: Translator, request: TextsAsked, max_seconds: float | None, markup: MarkupOptions | None
) -> tuple[list[tuple[str, str]], list[MarkedUp | None] | None]:
    """The request's texts (their markup parsed as `markup` says) with their prefixes, and
    the parsed markup; `request` is of the model made with the server's limits
    (`schemas.translate_request_model`)."""
    marked = await asyncio.to_thread(_marked_up, translator, request.texts, markup)
    texts = request.texts
    if marked is not None:
        texts = [text if parsed is None else parsed.source_text for text, parsed in zip(texts, marked, strict=True)]
    check_source_lengths(translator, texts)
    return list(zip(texts, prefixes_of(texts, request))), marked


def check_source_lengths(translator: Translator, texts: list[str]) -> None:
    """Refuse a text the model would refuse, before it joins a batch of other requests."""
    limit = translator.search.max_source_length
    for index, pieces in enumerate(translator.source_pieces(texts)):
        if pieces > limit:
            raise HTTPException(413, f"texts.{index}: {pieces} subword pieces, more than the model's {limit}")


def _marked_up(translator: Translator, texts: list[str], markup: MarkupOptions | None) -> list[MarkedUp | None] | None:
    """The texts read by `markup` (None: no markup), each one that is not well-formed a
    422 naming it; markup is put back by the alignment, which the model must have."""
    if markup is None:
        return None
    translator.require_alignment()
    return markup.lines(texts, items="texts")


async def translated(
    batcher: Batcher,
    items: list,
    marked: list[MarkedUp | None] | None,
    call: CallRequest,
    markup: MarkupOptions | None,
) -> list[Translation]:
    """The items translated by the batcher, with their markup, if any, put back off the
    event loop as the request asks: placing the tags of a long line holds up no other
    request, and counts towards the request's timeout. Each text goes with its request,
    whose glossary finds its terms, so that requests with glossaries of their own join the
    batches of the requests they share all else with (Request.shared)."""
    owned = [(*item, call) if isinstance(item, tuple) else item for item in items]
    results = await batcher.translate(owned, call.shared())
    if marked is not None and markup is not None:
        await asyncio.to_thread(_put_back, marked, results, call.reading, markup.placement)
    return results


def _put_back(
    marked: list[MarkedUp | None], results: list[Translation], reading: str, placement: Placement | None
) -> None:
    for parsed, result in zip(marked, results, strict=True):
        put_markup_back(parsed, result, reading=reading, placement=placement)


async def while_connected(connection: Request, work: Awaitable[T]) -> T:
    """Await `work`, withdrawing it if the client disconnects first.

    Starlette does not stop an endpoint whose client has gone, so without this a closed
    connection would keep its model call decoding for nobody; withdrawn like a timed-out
    request, the call stops at its next decoder step. The answer, 499, reaches no one.
    """
    answer = asyncio.ensure_future(work)
    disconnect = asyncio.create_task(_disconnected(connection))
    try:
        await asyncio.wait((answer, disconnect), return_when=asyncio.FIRST_COMPLETED)
    finally:
        answer.cancel()
        disconnect.cancel()
    if answer.done():
        return answer.result()
    disconnect.result()
    raise HTTPException(499, "the client disconnected")


async def _disconnected(connection: Request) -> None:
    """Return once the client has disconnected; the request body must have been read already."""
    while (await connection.receive())["type"] != "http.disconnect":
        pass


def prefixes_of(texts: list[str], asked: TextsAsked) -> list[str]:
    """The prefixes a request asks, one per text ("" for none), or a one-line error when
    they are not as many."""
    prefixes = asked.prefixes
    if prefixes is None:
        return [""] * len(texts)
    if len(prefixes) != len(texts):
        raise UserError(f'prefixes: {len(prefixes)} prefixes for {len(texts)} texts; give one per text ("" for none)')
    return prefixes
