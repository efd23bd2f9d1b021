"""How the server refuses a request: every error answered as JSON, {"error": "one line"},
413 for a request over the size limits (a body too large refused before it is read
whole), 422 for a malformed or invalid one, 500 for a fault of the server's own."""

import json
from collections.abc import Mapping

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rnnsearch.arguments import unique_members
from rnnsearch.errors import UserError
from rnnsearch.server import schemas
from rnnsearch.server.limits import Limits
from rnnsearch.text.glossary import MAX_TERM_CHARS

ERRORS_SHOWN = 3
"""A request with many invalid fields is told about the first few, to keep the message one line."""

ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    413: {"model": schemas.ErrorBody, "description": "too many texts or recordings, or one too long"},
    422: {"model": schemas.ErrorBody, "description": "malformed JSON or an invalid field"},
    504: {"model": schemas.ErrorBody, "description": "the translation took longer than the server's timeout"},
}


def max_body_bytes(limits: Limits, audio_chars: int | None = None) -> int:
    """The largest body a request within the limits can need: every character JSON-escaped as a
    surrogate pair (12 bytes), plus room for quotes, separators, whitespace and the options;
    for a text model, a glossary and an avoid list at their bounds too. For a speech model,
    `audio_chars` characters of base64 (which JSON needs not escape) per item."""
    if audio_chars is not None:
        return limits.max_texts * (audio_chars + 64) + 4096
    texts = limits.max_texts * (12 * limits.max_chars + 64)
    terms = 3 * limits.max_glossary_terms * (12 * MAX_TERM_CHARS + 16)  # a source and a target, an avoided phrase
    return texts + terms + 4096


class BodyLimit:
    """ASGI middleware: refuse a request body over `max_bytes` (or, on a path of `paths`,
    over its own bound) with a JSON 413, before reading it all.

    A declared Content-Length is checked up front; a chunked body is counted as it
    arrives. (Starlette's own limit answers in plain text, not the API's JSON errors.)
    """

    def __init__(self, app: ASGIApp, max_bytes: int, paths: Mapping[str, int] | None = None):
        self.app = app
        self.max_bytes = max_bytes
        self.paths = dict(paths or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.paths.get(scope["path"], self.max_bytes)
        message = f"request body larger than {limit} bytes"
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await error_response(413, message)(scope, receive, send)
            return
        received = 0

        async def receive_within_limit() -> Message:
            nonlocal received
            event = await receive()
            received += len(event.get("body", b""))
            if received > limit:
                raise HTTPException(413, message)
            return event

        await self.app(scope, receive_within_limit, send)


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The one shape of every error answer."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def add_error_handlers(
    app: FastAPI, *, field: str, wrong_field: str, wrong_input: str, audio_seconds: float | None
) -> None:
    """Answer every error as JSON: a request sending `wrong_field` (texts to a speech model, or
    recordings to a text model) gets `wrong_input`, a request with no body is told to send `field`."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        if any(problem["loc"] == ("body", wrong_field) for problem in problems):
            return error_response(422, wrong_input)
        if any(problem["loc"] == ("body",) and problem["type"] == "missing" for problem in problems):
            return error_response(422, f"the request has no body: send a JSON object with `{field}`")
        too_large = any(_is_size_error(problem) for problem in problems)
        message = "; ".join(_describe(problem, audio_seconds) for problem in problems[:ERRORS_SHOWN])
        if len(problems) > ERRORS_SHOWN:
            message += f"; and {len(problems) - ERRORS_SHOWN} more"
        return error_response(413 if too_large else 422, message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 400:
            return error_response(422, f"malformed JSON: {_unparsable(error.__cause__)}")
        return error_response(error.status_code, str(error.detail), error.headers)

    @app.exception_handler(UserError)
    async def user_error(request: Request, error: UserError) -> JSONResponse:
        return error_response(422, str(error))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> JSONResponse:
        return error_response(500, f"internal error ({type(error).__name__}); the server log has the details")


def _unparsable(cause: BaseException | None) -> str:
    """Why a body that is not a JSON syntax error could not be parsed.

    FastAPI answers 400 when reading the body fails with anything but a JSONDecodeError:
    bytes that are not UTF-8, or arrays and objects nested deeper than the parser's
    recursion limit. For the client that is malformed JSON as much as a syntax error,
    so it gets the same 422 as one, as the API's schema documents.
    """
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not UTF-8 text (byte {cause.start})"
    if isinstance(cause, RecursionError):
        return "nested too deeply"
    return "the body could not be parsed"


def _is_size_error(problem: dict) -> bool:
    """Too many texts or recordings, or one too long: the request is too large (413), not malformed (422)."""
    return problem["type"] in ("too_long", "string_too_long") and problem["loc"][:2] in (
        ("body", "texts"),
        ("body", "audio"),
    )


def _describe(problem: dict, audio_seconds: float | None = None) -> str:
    """One validation problem as 'field: what is wrong'."""
    if problem["type"] == "json_invalid":
        return f"malformed JSON: {problem.get('ctx', {}).get('error', problem['msg'])}"
    if problem["loc"] == ("body",) and problem["type"] == "model_attributes_type":
        return "the body must be a JSON object, sent with Content-Type: application/json"
    location = ".".join(str(part) for part in problem["loc"] if part != "body")
    if problem["type"] == "string_too_long" and problem["loc"][:2] == ("body", "audio"):
        return (
            f"{location}: {problem['msg']}, the size of a WAV file of {audio_seconds:g} s (16-bit mono), "
            "the server's limit"
        )
    return f"{location}: {problem['msg']}" if location else problem["msg"]


def refuse_twins(body: bytes) -> None:
    """A 422 for a JSON body one of whose objects gives a key twice (`{"texts": …,
    "texts": …}`, a glossary's term twice), of which a parser would keep the last
    without a word; the body has been read as JSON already."""
    try:
        json.loads(body, object_pairs_hook=unique_members)
    except ValueError as error:
        raise HTTPException(422, f"body: {error}") from None
