"""The server's limits: the `rnnsearch serve` options that bound requests and batches."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one request may ask of the server, and how requests are merged into model calls.

    max_texts: texts (or recordings) per request. max_chars: characters per text.
    max_audio_seconds: seconds per recording, for a speech model. timeout: seconds a
    request may take, waiting for its batch included. max_batch: sentences per merged
    model call. max_wait: seconds a request waits for others to join its batch.
    max_document_bytes: bytes of a document sent to /v1/documents.
    max_glossary_terms: entries of a request's own glossary, and of its avoid list (each
    term at most rnnsearch.text.glossary.MAX_TERM_CHARS characters).
    """

    max_texts: int = 64
    max_chars: int = 2000
    max_audio_seconds: float = 30.0
    timeout: float = 30.0
    max_batch: int = 64
    max_wait: float = 0.005
    max_document_bytes: int = 10 * 2**20
    max_glossary_terms: int = 1000
