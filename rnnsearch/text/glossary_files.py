"""A user's glossary and avoid list read from their files (the terms themselves, and how
they are found in a text, are glossary.py's).

Glossaries (`read_glossary`):

- TSV (`.tsv`, `.tab`, `.txt`) or CSV (`.csv`), read with the `csv` module: a header
  naming the source and target columns, by the model's language codes (`de`, `en`) or as
  `source` and `target`; optionally a `case` column (`sensitive` or `insensitive`, per
  entry; empty: the file's setting, `case_sensitive=`), and any other column (a note) is
  ignored. A tab-separated file has no quoting (a `"` is text, as in the IANA TSV
  format); in a CSV file a quoted field may not run over a line's end (no term does: an
  unclosed quote would swallow the entries after it).
- TBX-Basic (`.tbx`), read with lxml (no external DTD or entity, no network; entities the
  file declares itself are read, within libxml2's bound on their expansion): each
  `termEntry` (TBX 2) or `conceptEntry` (TBX 3) gives every term of its source language
  (synonyms, and deprecated ones: a text that uses one still gets the preferred target)
  the first term of its target language not marked deprecated or superseded (its
  `administrativeStatus`), a preferred one first.

An entry whose target is its source is a term kept as written (a name, a brand: not
translated). Terms are read in Unicode's compatibility composition (NFKC), as the model's
pieces write text. Bad files are refused in one line naming the file and the line: no
header, a missing column, an empty source or target, a term over MAX_TERM_CHARS
characters, one source given two targets, a case that is neither, bytes that are not
UTF-8 (a byte order mark is read as none), a TBX entry without a usable term in one of
the two languages; a file over MAX_FILE_BYTES is refused before it is read whole. A file
is read in time linear in its size.

An avoid list (`read_avoided`) holds words and phrases no translation may contain,
one a line, each at most MAX_TERM_CHARS characters.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rnnsearch.text.glossary import MAX_TERM_CHARS, Glossary, GlossaryError, Term, checked_term, composed

TABLE_DELIMITERS = {".tsv": "\t", ".tab": "\t", ".txt": "\t", ".csv": ","}
"""The field delimiter of each table file's extension."""

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest glossary or avoid list read, in bytes: a million entries fit in well under
it, and a link to an endless file (/dev/zero) is refused, not read into memory."""

CASES = {"sensitive": True, "insensitive": False, "": None}
"""The values of a table's `case` column: whether the entry matches as written (None:
the file's setting)."""


def read_glossary(
    path: str | Path, *, source_language: str, target_language: str, case_sensitive: bool = False
) -> Glossary:
    """The glossary in the file `path`, its format by its extension (the module
    docstring), for a model from `source_language` to `target_language`."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix != ".tbx" and suffix not in TABLE_DELIMITERS:
        raise GlossaryError(f"{path}: a glossary is a .tsv, .csv or .tbx file")
    data = _read_bounded(path)
    if suffix == ".tbx":
        return Glossary(_tbx_terms(data, path, (source_language, target_language), case_sensitive))
    text = _decoded(data, path)
    return Glossary(
        _table_terms(text, path, TABLE_DELIMITERS[suffix], (source_language, target_language), case_sensitive)
    )


def read_avoided(path: str | Path) -> tuple[str, ...]:
    """The words and phrases of an avoid list, one a line (blank lines skipped), its
    white space collapsed and in Unicode's compatibility form (as the model's pieces
    write text); a file that cannot be read, or is not UTF-8, is refused naming its line."""
    path = Path(path)
    lines = _decoded(_read_bounded(path), path).splitlines()
    phrases = (_phrase(line, f"{path}:{k}") for k, line in enumerate(lines, 1))
    return tuple(dict.fromkeys(phrase for phrase in phrases if phrase))


def avoided_phrases(phrases: Iterable[object], name: str = "avoid") -> tuple[str, ...]:
    """Avoided words and phrases, checked to be text, as `read_avoided` reads them."""
    checked = []
    for k, phrase in enumerate(phrases):
        if not isinstance(phrase, str):
            raise GlossaryError(f"{name}.{k}: a word or phrase to avoid is text, not {type(phrase).__name__}")
        if phrase := _phrase(phrase, f"{name}.{k}"):
            checked.append(phrase)
    return tuple(dict.fromkeys(checked))


def _phrase(phrase: str, where: str) -> str:
    """An avoided phrase as `_composed` reads it ("" for a blank one); one over
    MAX_TERM_CHARS characters refused, naming `where` it was given."""
    phrase = composed(phrase)
    if len(phrase) > MAX_TERM_CHARS:
        raise GlossaryError(
            f"{where}: a phrase of {len(phrase):,} characters, more than the {MAX_TERM_CHARS} one may have"
        )
    return phrase


def _read_bounded(path: Path) -> bytes:
    """The bytes of a glossary or avoid list, refused in one line where it cannot be read or
    holds more than MAX_FILE_BYTES (read no further than that)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise GlossaryError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise GlossaryError(f"{path}: larger than the {MAX_FILE_BYTES // 2**20} MiB a glossary or avoid list may be")
    return data


def _decoded(data: bytes, path: Path) -> str:
    """The file's text (a UTF-8 byte order mark dropped), or an error naming the line of
    the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise GlossaryError(f"{path}:{line}: not UTF-8 ({error.reason})") from None


def _table_terms(text: str, path: Path, delimiter: str, languages: tuple[str, str], case_sensitive: bool) -> list[Term]:
    given = io.StringIO(text, newline="")
    if delimiter == "\t":
        rows = csv.reader(given, delimiter=delimiter, quoting=csv.QUOTE_NONE)
    else:
        rows = csv.reader(given, delimiter=delimiter)
    try:
        return _rows_terms(rows, path, languages, case_sensitive)
    except csv.Error as error:
        raise GlossaryError(f"{path}:{rows.line_num}: {error}") from None


def _rows_terms(rows: Any, path: Path, languages: tuple[str, str], case_sensitive: bool) -> list[Term]:
    """The terms of a table's rows (`csv.reader`'s), under a header naming its columns."""
    header = next(rows, None)
    names = [name.strip().lower() for name in header or []]
    columns = [_column(names, (language, side)) for language, side in zip(languages, ("source", "target"))]
    if header is None or None in columns:
        raise GlossaryError(
            f"{path}:1: no header naming the source and target columns ({languages[0]} and {languages[1]}, or "
            f"source and target){'; it names ' + ', '.join(names) if names else ''}"
        )
    source, target = (column for column in columns if column is not None)
    case = names.index("case") if "case" in names else None
    terms = []
    line = rows.line_num
    for row in rows:
        where, first = f"{path}:{rows.line_num}", line + 1
        line = rows.line_num
        if line > first:
            raise GlossaryError(
                f"{path}:{first}: a quoted field runs on to line {line} (an unclosed quote?): no term holds a "
                "line break"
            )
        if not any(field.strip() for field in row):
            continue
        if len(row) < len(names):
            raise GlossaryError(f"{where}: {len(row)} fields, where the header names {len(names)}")
        sensitive = case_sensitive if case is None else _case(row[case], where, case_sensitive)
        terms.append(checked_term(row[source], row[target], sensitive, where))
    return terms


def _column(names: list[str], wanted: tuple[str, str]) -> int | None:
    """The index of the first of the header's names that is one of `wanted`."""
    return next((k for k, name in enumerate(names) if name in wanted), None)


def _case(value: str, where: str, default: bool) -> bool:
    if value.strip().lower() not in CASES:
        raise GlossaryError(f"{where}: case {value!r} is not sensitive, insensitive or empty")
    chosen = CASES[value.strip().lower()]
    return default if chosen is None else chosen


def _tbx_terms(data: bytes, path: Path, languages: tuple[str, str], case_sensitive: bool) -> list[Term]:
    """Each entry of a TBX file as terms: each source-language term to the entry's target
    (`_target_term`). Entities the file declares are read (`&brand;` is its text); an
    external one is not, and is refused as undefined."""
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities="internal",  # type: ignore[arg-type]  # lxml 5 takes "internal"; its stubs predate it
        no_network=True,
        load_dtd=False,
        huge_tree=False,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        raise GlossaryError(f"{path}:{error.lineno}: not well-formed XML ({error.msg})") from None
    terms = []
    for entry in root.iter():
        if _local_name(entry) not in ("termEntry", "conceptEntry"):
            continue
        found: dict[str, list[tuple[str, str]]] = {}
        for section in entry:
            if _local_name(section) in ("langSet", "langSec"):
                language = (section.get(XML_LANG) or "").split("-")[0].lower()
                for term in (node for node in section.iter() if _local_name(node) == "term"):
                    text = "".join(str(piece) for piece in term.itertext())
                    found.setdefault(language, []).append((text, _status(term)))
        where = f"{path}:{entry.sourceline}"
        missing = [language for language in languages if not found.get(language)]
        if missing:
            raise GlossaryError(f"{where}: an entry without a {missing[0]} term")
        target = _target_term(found[languages[1]], where, languages[1])
        sources = dict.fromkeys(text for text, _ in found[languages[0]] if text.strip())
        terms += [checked_term(source, target, case_sensitive, where) for source in sources]
    return terms


NOT_WRITTEN = ("deprecated", "superseded")
"""TBX administrative statuses (`deprecatedTerm-admn-sts`, `supersededTerm-admn-sts`, or as
TBX 3 writes them) of terms never written as a target."""


def _status(term: Any) -> str:
    """A TBX term's administrative status, lower case ("" where none is given): the
    `termNote` beside it, in its `tig`, `ntig` or `termSec`."""
    holder = term.getparent()
    for ancestor in term.iterancestors():
        if _local_name(ancestor) in ("tig", "ntig", "termSec"):
            holder = ancestor
            break
    for note in holder.iter():
        if _local_name(note) == "termNote" and note.get("type") == "administrativeStatus":
            return "".join(note.itertext()).strip().lower()
    return ""


def _target_term(candidates: list[tuple[str, str]], where: str, language: str) -> str:
    """The term an entry is written as: its first preferred one, else its first not marked
    deprecated or superseded."""
    usable = [(text, status) for text, status in candidates if text.strip() and not status.startswith(NOT_WRITTEN)]
    if not usable:
        raise GlossaryError(f"{where}: every {language} term is marked deprecated or superseded")
    preferred = [text for text, status in usable if status.startswith("preferred")]
    return (preferred or [usable[0][0]])[0]


def _local_name(node: object) -> str:
    """An element's name without its namespace (TBX 3 has one, TBX 2 none); "" for a
    comment or a processing instruction."""
    tag = getattr(node, "tag", None)
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
