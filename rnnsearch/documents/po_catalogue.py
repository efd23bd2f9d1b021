"""PO catalogues (gettext), read with polib: each entry's `msgid` (and `msgid_plural`)
whose translation is empty a unit, its translation written into `msgstr` (`msgid` into
`msgstr[0]`, `msgid_plural` into every other `msgstr[n]`) and the entry flagged `fuzzy`,
for a person to review. Entries already translated are kept as they are unless the call
asks to translate them again (`ReadOptions.retranslate`); obsolete ones and the header
always are.

Placeholders (`%(name)s`, `%s`, `%1$s`, `%ld`, `%zu`, `%*d`, `%%`, `{name}`, `{0}`)
are kept whole, untranslated, in the unit, and so come back exactly; a message with
inline HTML (`<b>`, `<a href>`) is read as HTML, its tags placed by the alignment (a
placeholder inside a tag, `<a href="%(url)s">`, stays in the tag as written). A
translation begins and ends with the white space its message does (a `\n`, a `\t`), as
`msgfmt -c` asks; a plural is given as many forms as the header's `nplurals`. Only the
entries that get a translation are written again (by polib, with their comments and
flags), each in place of its own lines, from its first comment to the next entry;
every other line of the catalogue stays as it was.

The catalogue is read in the charset its header names (UTF-8 without one, or for a
template's `CHARSET`) and written back in it; lines end at `\n`, `\r\n` or `\r` only, as
gettext reads them (a U+2028 is a character of its message). A string not closed by its
quote is refused in one line naming its line, as msgfmt refuses it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import polib
import webencodings

from rnnsearch.documents.document import (
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    decoded,
)
from rnnsearch.documents.messages import PLACEHOLDER, message_unit, with_ends

WRAP_WIDTH = 78
"""polib's (and xgettext's) line width for the entries written again."""

KEYWORDS = ("msgctxt", "msgid", "msgid_plural", "msgstr")
"""The keywords a line of strings starts with (`msgstr[n]` too)."""


class PoCatalogue:
    """A gettext PO catalogue."""

    name = "po"
    extensions: tuple[str, ...] = ("po", "pot")
    dialect = "html"
    media_type = "text/x-gettext-translation"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        checked_size(data, origin)
        charset = _charset(_parsed(data.decode("latin-1"), origin), origin)
        text = decoded(data, origin, charset)
        lines = _lines(text)
        _check_strings(lines, origin)
        catalogue = _parsed(text, origin)
        units: list[Unit] = []
        slots: list[tuple[polib.POEntry, int | None, Callable[[str], str]]] = []  # entry, plural form, writer
        protected = 0
        for entry in catalogue:
            if entry.obsolete or not entry.msgid or (_has_translation(entry) and not options.retranslate):
                continue
            where = f"line {_first_line(entry, lines) + 1}"
            messages = [(entry.msgid, None if not entry.msgid_plural else 0)]
            if entry.msgid_plural:
                messages.append((entry.msgid_plural, 1))
            for message, form in messages:
                markup, writer, kept = message_unit(message, PLACEHOLDER)
                protected += kept
                units.append(Unit(markup, where))
                slots.append((entry, form, with_ends(message, writer)))
        units = checked_units(units, origin)
        return _Catalogue(lines, catalogue, units, slots, protected, charset=charset, origin=origin)


def _lines(text: str) -> list[str]:
    """The catalogue's lines, each with its end, cut where gettext cuts them: at "\n",
    "\r\n" or "\r", never at the other characters str.splitlines takes for line ends."""
    lines, start = [], 0
    for position, character in enumerate(text):
        if character == "\n" or (character == "\r" and text[position + 1 : position + 2] != "\n"):
            lines.append(text[start : position + 1])
            start = position + 1
    if start < len(text):
        lines.append(text[start:])
    return lines


class _Contents:
    """A catalogue's text as polib reads it, never as a file name: polib.pofile opens a
    string that names an existing file instead of reading it, so a document whose bytes
    are a path (`/srv/app/secret.po`) would have that file read and translated. polib
    asks whether this is a file (a TypeError, so no), then takes its lines (`_lines`)."""

    def __init__(self, text: str):
        self.text = text

    def splitlines(self) -> list[str]:
        return [line.rstrip("\r\n") for line in _lines(self.text)]


def _parsed(text: str, origin: str) -> polib.POFile:
    try:
        return polib.pofile(_Contents(text), encoding="utf-8", wrapwidth=WRAP_WIDTH)
    except (OSError, ValueError) as error:
        raise DocumentError(f"{origin}: not a PO catalogue: {error}") from None


def _charset(catalogue: polib.POFile, origin: str) -> str:
    """The Python codec of the charset the header's Content-Type names: UTF-8 where it
    names none, or a template's placeholder `CHARSET`; one that is not a text encoding
    (a label of the WHATWG Encoding standard) is a DocumentError."""
    content_type = catalogue.metadata.get("Content-Type", "")
    named = content_type.lower().partition("charset=")[2].split(";")[0].strip()
    if not named or named == "charset":
        return "utf-8"
    encoding = webencodings.lookup(named)
    if encoding is None:
        raise DocumentError(f"{origin}: its header's charset {named!r} is not a text encoding")
    return str(encoding.codec_info.name)


def _check_strings(lines: list[str], origin: str) -> None:
    """Each line of strings (`msgid "…"`, `"…"`, obsolete `#~` ones too) holds one string
    closed by its quote; else a DocumentError naming the line (polib would take the
    string less its last character)."""
    for number, line in enumerate(lines, start=1):
        content = line.strip()
        if content.startswith("#~"):
            content = content[2:].strip()
        elif content.startswith("#"):
            continue
        keyword, _, rest = content.partition(" ")
        if keyword.split("[")[0] in KEYWORDS:
            content = rest.strip()
        if content and not _closed_string(content):
            raise DocumentError(f"{origin}: line {number}: not a string closed by its quote: {content[:40]!r}")


def _closed_string(content: str) -> bool:
    """Whether `content` is one string, opened and closed by an unescaped quote."""
    if len(content) < 2 or content[0] != '"' or content[-1] != '"':
        return False
    inside = content[1:-1]
    return (len(inside) - len(inside.rstrip("\\"))) % 2 == 0


def _has_translation(entry: polib.POEntry) -> bool:
    return bool(entry.msgstr) or any(entry.msgstr_plural.values())


class _Catalogue(Document):
    """The catalogue, its translated entries written again in their place."""

    def __init__(
        self,
        lines: list[str],
        catalogue: polib.POFile,
        units: list[Unit],
        slots: list[tuple[polib.POEntry, int | None, Callable[[str], str]]],
        protected: int,
        *,
        charset: str,
        origin: str,
    ):
        self.lines, self.catalogue, self.units, self.slots, self.protected = lines, catalogue, units, slots, protected
        self.charset, self.origin = charset, origin

    def write(self, translations: Sequence[str | None]) -> bytes:
        changed: dict[int, polib.POEntry] = {}
        forms = _plural_forms(self.catalogue)
        for (entry, form, writer), translation in zip(self.slots, translations, strict=True):
            if translation is None:
                continue
            message = writer(translation)
            if form is None:
                entry.msgstr = message
            else:
                for n in range(forms or max(2, len(entry.msgstr_plural))):
                    if (n == 0) == (form == 0):
                        entry.msgstr_plural[n] = message
            if "fuzzy" not in entry.flags:
                entry.flags.append("fuzzy")
            changed[_first_line(entry, self.lines)] = entry
        return self._encoded(self._spliced(changed))

    def _spliced(self, changed: dict[int, polib.POEntry]) -> list[str]:
        """The catalogue's lines, each changed entry's own (from its first line to the
        next entry's, less the blank lines before that one) written again."""
        lines = list(self.lines)
        starts = sorted({_first_line(entry, self.lines) for entry in self.catalogue} | {len(lines)})
        for first in sorted(changed, reverse=True):
            stop = starts[bisect.bisect_right(starts, first)]  # the next entry's first line
            while stop > first + 1 and not lines[stop - 1].strip():
                stop -= 1
            ending = "\r\n" if lines[first].endswith("\r\n") else "\n"
            written = changed[first].__unicode__(WRAP_WIDTH).rstrip("\n").replace("\n", ending) + ending
            lines[first:stop] = [written]
        return lines

    def _encoded(self, lines: list[str]) -> bytes:
        try:
            return "".join(lines).encode(self.charset)
        except UnicodeEncodeError as error:
            raise DocumentError(
                f"{self.origin}: a translation holds {error.object[error.start]!r}, which its charset "
                f"{self.charset} cannot; convert the catalogue to UTF-8 (msgconv -t UTF-8)"
            ) from None


def _first_line(entry: polib.POEntry, lines: list[str]) -> int:
    """The index of an entry's first line (its first comment, else its msgctxt or
    msgid): polib's line number less one or, for the first entry of a catalogue without
    a header, which polib numbers 0, the first line that is not blank."""
    if entry.linenum > 0:
        return int(entry.linenum) - 1
    return next((k for k, line in enumerate(lines) if line.strip()), 0)


def _plural_forms(catalogue: polib.POFile) -> int | None:
    """How many plural forms the header's Plural-Forms names (nplurals), None without one."""
    header = catalogue.metadata.get("Plural-Forms", "")
    for part in header.split(";"):
        name, _, value = part.partition("=")
        if name.strip() == "nplurals" and value.strip().isdigit():
            return int(value.strip())
    return None
