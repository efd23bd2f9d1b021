"""PO catalogues (gettext), read with polib: each entry's `msgid` (and `msgid_plural`)
whose translation is empty a unit, its translation written into `msgstr` (`msgid` into
`msgstr[0]`, `msgid_plural` into every other `msgstr[n]`) and the entry flagged `fuzzy`,
for a person to review. Entries already translated are kept as they are unless the call
asks to translate them again (`ReadOptions.retranslate`); obsolete ones and the header
always are.

Placeholders (`%(name)s`, `%s`, `%1$s`, `%d`, `{name}`, `{0}`) are kept whole,
untranslated, in the unit, and so come back exactly; a message with inline HTML (`<b>`,
`<a href>`) is read as HTML, its tags placed by the alignment. Only the entries that get
a translation are written again (by polib, with their comments and flags); every other
line of the catalogue stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import polib

from rnnsearch.markup.formats.document import (
    KEPT,
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    decoded,
    plain_markup,
    plain_text,
)
from rnnsearch.markup.parsing import MarkupError, parse

PLACEHOLDER = re.compile(r"%(?:\d+\$|\([^()\s]+\))?[-+ #0]*\d*(?:\.\d+)?[sdifFgGeExXocrua]|\{[^{}\s]*\}")
"""printf's conversions (`%s`, `%(name)s`, `%1$s`, `%.2f`) and Python's and ICU's braces
(`{name}`, `{0}`): what a message's code fills in, never translated."""

WRAP_WIDTH = 78
"""polib's (and xgettext's) line width for the entries written again."""


class PoCatalogue:
    """A gettext PO catalogue."""

    name = "po"
    extensions: tuple[str, ...] = ("po", "pot")
    dialect = "html"
    media_type = "text/x-gettext-translation"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        text = decoded(checked_size(data, origin), origin)
        try:
            catalogue = polib.pofile(_Contents(text), encoding="utf-8", wrapwidth=WRAP_WIDTH)
        except (OSError, ValueError) as error:
            raise DocumentError(f"{origin}: not a PO catalogue: {error}") from None
        units: list[Unit] = []
        slots: list[tuple[polib.POEntry, int | None, Callable[[str], str]]] = []  # entry, plural form, writer
        protected = 0
        for entry in catalogue:
            if entry.obsolete or not entry.msgid or (_has_translation(entry) and not options.retranslate):
                continue
            where = f"line {entry.linenum}"
            messages = [(entry.msgid, None if not entry.msgid_plural else 0)]
            if entry.msgid_plural:
                messages.append((entry.msgid_plural, 1))
            for message, form in messages:
                markup, writer, kept = _unit(message)
                protected += kept
                units.append(Unit(markup, where))
                slots.append((entry, form, writer))
        return _Catalogue(text, catalogue, checked_units(units, origin), slots, protected)


class _Contents:
    """A catalogue's text as polib reads it, never as a file name: polib.pofile opens a
    string that names an existing file instead of reading it, so a document whose bytes
    are a path (`/srv/app/secret.po`) would have that file read and translated. polib
    asks whether this is a file (a TypeError, so no), then takes its lines."""

    def __init__(self, text: str):
        self.text = text

    def splitlines(self) -> list[str]:
        return self.text.splitlines()


def _has_translation(entry: polib.POEntry) -> bool:
    return bool(entry.msgstr) or any(entry.msgstr_plural.values())


def _unit(message: str) -> tuple[str, Callable[[str], str], int]:
    """A message as a unit: its line of markup, how its translation is written back, and
    how many placeholders it keeps. A message with tags is HTML, its placeholders
    wrapped; any other is plain text."""
    spans = [match.span() for match in PLACEHOLDER.finditer(message)]
    try:
        marked = parse(message, "html")
    except MarkupError:
        marked = None
    if marked is not None and marked.elements:
        pieces, position = [], 0
        for start, end in spans:
            pieces += [message[position:start], f'<{KEPT} translate="no">{message[start:end]}</{KEPT}>']
            position = end
        pieces.append(message[position:])
        return "".join(pieces), _unwrapped, len(spans)
    return plain_markup(message, spans), plain_text, len(spans)


def _unwrapped(translation: str) -> str:
    """A translated HTML message with the placeholders' wrappers taken off."""
    return translation.replace(f'<{KEPT} translate="no">', "").replace(f"</{KEPT}>", "")


class _Catalogue(Document):
    """The catalogue, its translated entries written again in their place."""

    def __init__(
        self,
        text: str,
        catalogue: polib.POFile,
        units: list[Unit],
        slots: list[tuple[polib.POEntry, int | None, Callable[[str], str]]],
        protected: int,
    ):
        self.text, self.catalogue, self.units, self.slots, self.protected = text, catalogue, units, slots, protected

    def write(self, translations: Sequence[str | None]) -> bytes:
        changed: dict[int, polib.POEntry] = {}
        for (entry, form, writer), translation in zip(self.slots, translations, strict=True):
            if translation is None:
                continue
            message = writer(translation)
            if form is None:
                entry.msgstr = message
            else:
                forms = max(2, _plural_forms(self.catalogue), len(entry.msgstr_plural))
                for n in range(forms):
                    if (n == 0) == (form == 0):
                        entry.msgstr_plural[n] = message
            if "fuzzy" not in entry.flags:
                entry.flags.append("fuzzy")
            changed[entry.linenum] = entry
        lines = self.text.splitlines(keepends=True)
        for linenum in sorted(changed, reverse=True):
            first = linenum - 1
            last = first
            while last < len(lines) and lines[last].strip():
                last += 1
            ending = "\r\n" if lines[first].endswith("\r\n") else "\n"
            written = changed[linenum].__unicode__(WRAP_WIDTH).rstrip("\n").replace("\n", ending) + ending
            lines[first:last] = [written]
        return "".join(lines).encode("utf-8")


def _plural_forms(catalogue: polib.POFile) -> int:
    """How many plural forms the header's Plural-Forms names (nplurals), 2 without one."""
    header = catalogue.metadata.get("Plural-Forms", "")
    for part in header.split(";"):
        name, _, value = part.partition("=")
        if name.strip() == "nplurals" and value.strip().isdigit():
            return int(value.strip())
    return 2
