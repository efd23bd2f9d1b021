"""What every format shares: a translation unit, the document a format reads, the format
itself (the registry is the package's `formats()`), and the few readers and writers of
plain text that several formats use."""

from __future__ import annotations

import codecs
import html
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from rnnsearch.errors import ArgumentTypeError, UserError
from rnnsearch.markup.dialects import DIALECTS, escape
from rnnsearch.markup.elements import MarkedUp
from rnnsearch.markup.events import events
from rnnsearch.markup.parsing import parse

MAX_DOCUMENT_BYTES = 256 * 2**20
"""The largest document read, in bytes (a zip's parts together, uncompressed, too): a
bound on what one call can make the reader hold."""

MAX_UNITS = 1_000_000
"""The most translation units one document may hold."""

KEPT = "k"
"""The element a format wraps around text it keeps untranslated inside a unit built from
plain text (a placeholder, a code span), marked translate="no" (`plain_markup`)."""


class DocumentError(UserError, ValueError):
    """A document that cannot be read, or written back: the message names the file and the place."""


@dataclass(frozen=True)
class Unit:
    """One thing to translate: `markup`, a line of inline markup in the format's dialect;
    `where` names it in messages ("word/document.xml, paragraph 4", "cue 12");
    `attribute`: whether it is an attribute's value rather than a block's text;
    `parsed`: the markup parsed in the format's dialect, where the reader has parsed it
    already (to check it), so that it is not parsed again."""

    markup: str
    where: str
    attribute: bool = False
    parsed: MarkedUp | None = field(default=None, repr=False, compare=False)


class Document(ABC):
    """A document read by a format: its units, how many spans it keeps untranslated
    (`protected`: code, scripts, placeholders, kept elements), and the document written
    back from their translations."""

    units: list[Unit]
    protected: int = 0
    untranslated: int = 0  # blocks the reader found but could not place a translation in, left as written
    notes: tuple[str, ...] = ()  # what writing found a reader should know (a shape whose text may overflow)

    @abstractmethod
    def write(self, translations: Sequence[str | None]) -> bytes:
        """The document with each unit replaced by its translation (a line of markup in the
        format's dialect), or kept as written where the translation is None."""


TRANSLATION_STATES = frozenset(
    {
        "new", "needs-translation", "needs-adaptation", "needs-l10n", "needs-review-translation",
        "needs-review-adaptation", "needs-review-l10n", "translated", "signed-off", "final",
        "initial", "reviewed", "approved",
    }
)  # fmt: skip
"""The states a translation in a file may be in (XLIFF 1.2's and 2.x's, and `approved`,
what a person approved), which a call may name for their translations to be written over."""


def checked_states(states: object, name: str = "overwrite") -> frozenset[str]:
    """`states` (names, or one string of them separated by commas) as a set, or a one-line
    error naming one that is not a state."""
    if isinstance(states, str):
        states = [part.strip() for part in states.split(",") if part.strip()]
    if isinstance(states, (bytes, Mapping)) or not isinstance(states, Iterable):
        raise DocumentError(f"{name}: expected state names, got {type(states).__name__}")
    states = list(states)
    for state in states:
        if not isinstance(state, str):
            raise DocumentError(f"{name}: expected state names, got a {type(state).__name__} among them")
    for state in states:
        if state not in TRANSLATION_STATES:
            raise DocumentError(
                f"{name}: {state!r} is not a state; give some of {', '.join(sorted(TRANSLATION_STATES))}"
            )
    return frozenset(states)


STATE_QUALIFIERS = ("leveraged-mt", "mt-suggestion")
"""What an XLIFF target written says it is (1.2's `state-qualifier`, a 2.x `subState`
"rnnsearch:…"): a translation by machine (`leveraged-mt`, the default), or a machine's
suggestion, which some CAT tools show apart (`mt-suggestion`)."""


@dataclass(frozen=True)
class ReadOptions:
    """What a call asks of a format as it reads a document: the language the translation
    is in (a page's `lang` says it), whether units that hold a translation already (a
    catalogue's translated entries) are translated again rather than kept, the language
    the model reads (None: not checked), which a file that declares its own source
    language must be in; for a file whose translations carry states (XLIFF), the states
    whose translations are written over (`approved` too: what a person approved), and
    whether a translation is offered beside its target as a proposal rather than written
    into it, and how a written one says it is machine translation (`state_qualifier`,
    STATE_QUALIFIERS); whether notes and comments are translated (a presentation's speaker notes, a
    workbook's notes on cells, a Word or OpenDocument file's comments), whether a
    workbook's hidden sheets are, and whether its sheet names are (the formulas, names,
    links and charts that refer to a sheet following it). A format reads what applies to
    it; a new option is a field here."""

    target_language: str
    retranslate: bool = False
    source_language: str | None = None
    overwrite: frozenset[str] | Iterable[str] | str = frozenset()
    proposals: bool = False
    notes: bool = True
    hidden_sheets: bool = False
    sheet_names: bool = False
    state_qualifier: str = "leveraged-mt"

    def __post_init__(self) -> None:
        """Each option checked as it is given, in one line naming it; `overwrite` read as
        `checked_states` reads it (names, or one string of them separated by commas)."""
        for name in ("retranslate", "proposals", "notes", "hidden_sheets", "sheet_names"):
            if not isinstance(getattr(self, name), bool):
                raise ArgumentTypeError(f"{name}: expected a bool, got {type(getattr(self, name)).__name__}")
        object.__setattr__(self, "overwrite", checked_states(self.overwrite))
        if self.state_qualifier not in STATE_QUALIFIERS:
            raise DocumentError(
                f"state_qualifier: {self.state_qualifier!r} is not one of {', '.join(STATE_QUALIFIERS)}"
            )


class ReadKeywords(TypedDict, total=False):
    """ReadOptions's options as the API's keywords (`translate_documents`): all but the
    languages, which the model gives."""

    retranslate: bool
    overwrite: Iterable[str] | str
    proposals: bool
    notes: bool
    hidden_sheets: bool
    sheet_names: bool
    state_qualifier: str


class Format(Protocol):
    """A document format: its name (`--format`), the file name extensions it is taken
    from, the dialect its units' markup is read in, the media type it is served as, and
    its reader."""

    name: str
    extensions: tuple[str, ...]
    dialect: str
    media_type: str

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        """The document in `data`, read as `options` ask; `origin` names it in errors,
        which are DocumentErrors."""
        ...


def checked_size(data: bytes, origin: str) -> bytes:
    """`data`, refused when it is larger than MAX_DOCUMENT_BYTES."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError(
            f"{origin}: {len(data):,} bytes is more than the {MAX_DOCUMENT_BYTES:,} a document may have"
        )
    return data


def checked_units(units: list[Unit], origin: str) -> list[Unit]:
    """`units`, refused when there are more than MAX_UNITS."""
    if len(units) > MAX_UNITS:
        raise DocumentError(f"{origin}: {len(units):,} units is more than the {MAX_UNITS:,} a document may have")
    return units


def decoded(data: bytes, origin: str, encoding: str = "utf-8") -> str:
    """`data` as text in `encoding` (a UTF-8 byte order mark dropped), or a DocumentError
    naming the byte offset that is not."""
    try:
        return data.decode("utf-8-sig" if encoding.lower().replace("_", "-") == "utf-8" else encoding)
    except UnicodeDecodeError as error:
        raise DocumentError(f"{origin}: byte {error.start:,} is not {encoding} ({error.reason})") from None


def plain_markup(text: str, kept: Sequence[tuple[int, int]] = ()) -> str:
    """Plain `text` as a line of xml markup: escaped, with each (start, end) span of `kept`
    (sorted, apart) an element kept whole, untranslated (KEPT); `plain_text` reads it back."""
    pieces, position = [], 0
    for start, end in kept:
        pieces.append(escape(text[position:start]))
        pieces.append(f'<{KEPT} translate="no">{escape(text[start:end])}</{KEPT}>')
        position = end
    pieces.append(escape(text[position:]))
    return "".join(pieces)


def plain_text(markup: str) -> str:
    """The text of a line of xml markup that `plain_markup` made, or its translation: its
    text and what KEPT elements hold, every tag left out and every reference decoded."""
    return "".join(html.unescape(segment) for segment in parse(markup, "xml").segments if not segment.startswith("<"))


@dataclass(frozen=True)
class Span:
    """Where a unit's text lies in a document read as text, (start, end) characters, and
    how its translation is written there: `render` turns the translated line of markup
    into the text that replaces the span."""

    start: int
    end: int
    render: Callable[[str], str]


class SplicedText(Document):
    """A document read as text whose units lie at known spans of it: written back by
    putting each translation in its unit's span, every character outside the spans as it
    was, in the encoding it was read in (its byte order mark too)."""

    def __init__(
        self,
        text: str,
        units: list[Unit],
        spans: list[Span],
        *,
        encoding: str = "utf-8",
        bom: bool = False,
        protected: int = 0,
        untranslated: int = 0,
    ):
        self.text, self.units, self.spans = text, units, spans
        self.encoding, self.bom, self.protected, self.untranslated = encoding, bom, protected, untranslated

    def write(self, translations: Sequence[str | None]) -> bytes:
        pieces, position = [], 0
        for span, translation in sorted(zip(self.spans, translations, strict=True), key=lambda pair: pair[0].start):
            if translation is None:
                continue
            pieces.append(self.text[position : span.start])
            pieces.append(span.render(translation))
            position = span.end
        pieces.append(self.text[position:])
        written = "".join(pieces).encode(self.encoding, errors="xmlcharrefreplace")
        return codecs.BOM_UTF8 + written if self.bom else written


def bom_and_text(data: bytes, origin: str) -> tuple[bool, str]:
    """Whether UTF-8 `data` starts with a byte order mark, and its text without it."""
    return data.startswith(codecs.BOM_UTF8), decoded(data, origin)


@dataclass(frozen=True)
class Piece:
    """One piece of a translated line whose elements stand for a format's codes, each
    with its number as `n`: text (`role` "text", its references decoded in `text`), or a
    code's "start", "end" or "standalone" tag (`tag`, `number`). An element kept whole
    (`translate="no"`) is one standalone piece, its content with it; a void element
    (`<br>`) is standalone too."""

    role: str
    text: str = ""
    tag: str = ""
    number: int = 0


def code_pieces(line: str, dialect: str) -> Iterator[Piece]:
    """The pieces of a translated line of markup in `dialect` (see Piece), in order: how
    the formats that number their codes in a unit's markup read its translation back."""
    kept = 0  # depth inside an element kept whole, which its code holds all of
    void = DIALECTS[dialect].void_elements
    for segment in parse(line, dialect).segments:
        event = events(segment)[0] if segment.startswith("<") else None
        if kept:
            kept += 0 if event is None else {"start": 1, "end": -1}.get(event.kind, 0)
        elif event is None:
            yield Piece("text", html.unescape(segment))
        elif event.kind == "end":
            yield Piece("end", tag=event.tag)
        else:
            attributes = dict(event.attrs)
            number = int(attributes.get("n") or 0)
            whole = event.kind == "start" and attributes.get("translate") == "no"
            kept = 1 if whole else 0
            opens = event.kind == "start" and not whole and event.tag not in void
            yield Piece("start" if opens else "standalone", tag=event.tag, number=number)
