"""Excel workbooks (.xlsx), read with lxml: every text a cell shows is translated once,
however many cells show it, and nothing else unless the call asks.

The texts are the workbook's shared strings (`xl/sharedStrings.xml`: each `<si>` once)
that the cells of its visible sheets refer to, and the inline strings of those sheets
(`<is>`); with `hidden_sheets`, every shared string and the sheets Excel hides (hidden
or very hidden) too. A shared string that a visible and a hidden sheet both show is one
text, translated in both. A text with rich formatting keeps each run's look on its words
(runs.py: the look most of its text has given to words aligned to nothing); phonetic
guides (`rPh`), whose offsets the translation no longer has, are dropped. A text that is
only a number, a date, a code, a URL or an e-mail address (no letter, or one word holding
"://", "@", "/" or "\\" or a digit) is left alone.

Notes on cells (`xl/comments*.xml`: what Excel calls notes, once comments) are
translated with their sheets unless the call asks for no notes; the author's name Excel
writes in bold at a note's start is kept as written. Threaded comments (a discussion, not
a note) are left alone. With `sheet_names`, the names of the sheets translated are too,
each one Excel takes and every reference to it following it (sheet_names.py).

Formulas, their cached results, numbers, dates, truth values, data validation, defined
names, styles and every other part are never touched, and a workbook none of whose texts
changes comes back byte for byte. The package is checked as Word's is
(rnnsearch.documents.packages).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from functools import partial

from rnnsearch.documents.document import (
    Document,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    plain_markup,
    plain_text,
)
from rnnsearch.documents.packages import Element, Kind, PackageDocument, Writer, opened
from rnnsearch.documents.runs import RunParagraph, RunTags
from rnnsearch.documents.sheet_names import excel_names, follow

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"
SHARED, INLINE, CELL, VALUE = f"{{{S}}}si", f"{{{S}}}is", f"{{{S}}}c", f"{{{S}}}v"
CELLS = RunTags(
    f"{{{S}}}r", f"{{{S}}}rPr", f"{{{S}}}t", last=(f"{{{S}}}phoneticPr",), dropped=(f"{{{S}}}rPh",), preserve=True
)
"""SpreadsheetML's texts: plain `t`, or runs `r` of `rPr` and `t`, then phonetic guides."""

WORKBOOK, STRINGS = "xl/workbook.xml", "xl/sharedStrings.xml"
REFERRING = ("xl/worksheets/", "xl/comments", "xl/charts/chart", "xl/tables/", "xl/pivotCache/pivotCacheDefinition")
"""The parts read besides the workbook and its strings: sheets and their relationships,
notes, and what may refer to a sheet by its name (charts, tables, pivot caches)."""

EXCEL = Kind(
    "an Excel workbook",
    "Excel",
    WORKBOOK,
    lambda name: (
        name in (WORKBOOK, STRINGS, "xl/_rels/workbook.xml.rels", "docProps/app.xml")
        or (name.startswith(REFERRING) and name.endswith((".xml", ".rels")))
    ),
)


def _is_data(text: str) -> bool:
    """Whether a cell's text is data rather than words: no letter at all, or one word that
    holds a digit or the marks of a URL, an address or a path."""
    if not any(character.isalpha() for character in text):
        return True
    words = text.split()
    return len(words) == 1 and any(mark in words[0] for mark in ("://", "@", "/", "\\", *"0123456789"))


@dataclass(frozen=True)
class _Sheet:
    """A sheet as the workbook lists it: its `<sheet>`, its worksheet part (None for a
    chart sheet or one the package lacks) and whether Excel hides it."""

    element: Element
    part: str | None
    hidden: bool

    @property
    def name(self) -> str:
        return self.element.get("name", "")


def _sheets(parts: dict[str, Element]) -> list[_Sheet]:
    """The workbook's sheets, in its order, each with its part (by the workbook's
    relationships); a worksheet part no sheet names is listed as a visible sheet."""
    targets = _targets(parts, "xl/_rels/workbook.xml.rels", "xl")
    sheets = []
    for element in parts[WORKBOOK].iter(f"{{{S}}}sheet"):
        part = targets.get(element.get(f"{{{R}}}id", ""))
        sheets.append(
            _Sheet(element, part if part in parts else None, element.get("state") in ("hidden", "veryHidden"))
        )
    listed = {sheet.part for sheet in sheets}
    for name, root in parts.items():
        if root.tag == f"{{{S}}}worksheet" and name not in listed:
            sheets.append(_Sheet(root, name, hidden=False))
    return sheets


def _targets(parts: dict[str, Element], relationships: str, folder: str, kind: str = "") -> dict[str, str]:
    """A relationships part's targets, by id, as part names (`folder` is the source's);
    with `kind`, only those of that type (the last word of its URI: "comments")."""
    root = parts.get(relationships)
    if root is None:
        return {}
    found = {}
    for relationship in root.iter(f"{{{RELATIONSHIPS}}}Relationship"):
        target = relationship.get("Target", "")
        if kind and relationship.get("Type", "").rsplit("/", 1)[-1] != kind:
            continue
        if relationship.get("TargetMode") != "External" and target:
            path = target[1:] if target.startswith("/") else posixpath.join(folder, target)
            found[relationship.get("Id", "")] = posixpath.normpath(path)
    return found


def _notes_of(parts: dict[str, Element], sheet: str) -> list[str]:
    """The notes parts of the sheet in part `sheet`, by its relationships."""
    folder, base = posixpath.split(sheet)
    notes = _targets(parts, f"{folder}/_rels/{base}.rels", folder, "comments").values()
    return [target for target in notes if target in parts]


@dataclass
class _Texts:
    """The workbook's texts read so far: each distinct text's unit and every place that
    shows it, so that it is translated once."""

    origin: str
    units: list[Unit] = field(default_factory=list)
    places: dict[str, list[tuple[str, RunParagraph]]] = field(default_factory=dict)

    def add(self, part: str, element: Element, where: str, *, author: frozenset[str] = frozenset()) -> None:
        keep = (lambda run: _text(run).strip().removesuffix(":") in author) if author else None
        read = RunParagraph.of(element, CELLS, keep=keep)
        if read is None or _is_data(_text(element)):
            return
        if read.markup not in self.places:
            self.units.append(Unit(read.markup, f"{part}, {where}"))
        self.places.setdefault(read.markup, []).append((part, read))

    def writers(self) -> list[Writer]:
        return [(tuple(part for part, _ in same), partial(_written, same)) for same in self.places.values()]


def _text(element: Element) -> str:
    return "".join(str(text) for text in element.itertext())


def _written(same: list[tuple[str, RunParagraph]], translation: str) -> None:
    """One text's translation written into every place that shows it."""
    for _, text in same:
        text.write(translation)


class ExcelWorkbook:
    """An Excel (.xlsx) workbook."""

    name = "xlsx"
    extensions: tuple[str, ...] = ("xlsx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package = opened(checked_size(data, origin), origin, EXCEL)
        parts = package.parts
        every = _sheets(parts)
        sheets = [sheet for sheet in every if options.hidden_sheets or not sheet.hidden]
        texts = _Texts(origin)
        _read_shared(texts, parts, sheets, every=options.hidden_sheets)
        for sheet in sheets:
            if sheet.part is None:
                continue
            for number, element in enumerate(parts[sheet.part].iter(INLINE), start=1):
                texts.add(sheet.part, element, f"inline string {number}")
            for notes in _notes_of(parts, sheet.part) if options.notes else ():
                _read_notes(texts, notes, parts[notes])
        writers = texts.writers()
        names = _SheetNames(parts, every, sheets) if options.sheet_names else None
        if names is not None:
            names.read(texts.units, writers)
        finish = None if names is None else names.finish
        return PackageDocument(package, writers, checked_units(texts.units, origin), finish=finish)


def _read_shared(texts: _Texts, parts: dict[str, Element], sheets: list[_Sheet], *, every: bool) -> None:
    """The shared strings the `sheets`' cells show (`every`: all of them) read into `texts`."""
    strings = parts.get(STRINGS)
    if strings is None:
        return
    shown: set[int] | None = None if every else _shown(parts, sheets)
    for number, element in enumerate(strings.iter(SHARED), start=1):
        if shown is None or number - 1 in shown:
            texts.add(STRINGS, element, f"string {number}")


def _shown(parts: dict[str, Element], sheets: list[_Sheet]) -> set[int]:
    """The indices of the shared strings that the cells of `sheets` show."""
    shown = set()
    for sheet in sheets:
        for cell in parts[sheet.part].iter(CELL) if sheet.part is not None else ():
            value = cell.find(VALUE) if cell.get("t") == "s" else None
            if value is not None and (value.text or "").strip().isdigit():
                shown.add(int(value.text or ""))
    return shown


def _read_notes(texts: _Texts, part: str, root: Element) -> None:
    """A notes part's notes read into `texts`, their authors' names kept."""
    authors = frozenset((author.text or "").strip() for author in root.iter(f"{{{S}}}author")) - {""}
    for note in root.iter(f"{{{S}}}comment"):
        text = note.find(f"{{{S}}}text")
        if text is not None:
            texts.add(part, text, f"note on {note.get('ref', '?')}", author=authors)


@dataclass
class _SheetNames:
    """The names of the sheets translated, as units, and what renames them: each
    translation kept until all are in, then the names made ones Excel takes and every
    reference made to follow (sheet_names.py)."""

    parts: dict[str, Element]
    every: list[_Sheet]  # every sheet, whose names a new one must differ from
    chosen: list[_Sheet]  # those whose names are translated
    translated: dict[int, str] = field(default_factory=dict)  # by index in `every`

    def read(self, units: list[Unit], writers: list[Writer]) -> None:
        for number, sheet in enumerate(self.every, start=1):
            if sheet in self.chosen and any(character.isalpha() for character in sheet.name):
                units.append(Unit(plain_markup(sheet.name), f"{WORKBOOK}, the name of sheet {number}", attribute=True))
                writers.append(((), partial(self.translated.__setitem__, number - 1)))

    def finish(self) -> set[str]:
        """The sheets renamed and the references made to follow; the parts changed."""
        names = [sheet.name for sheet in self.every]
        renamed = excel_names(names, {k: plain_text(line) for k, line in self.translated.items()})
        if not renamed:
            return set()
        for sheet in self.every:
            if sheet.name in renamed:
                sheet.element.set("name", renamed[sheet.name])
        return {WORKBOOK} | follow(self.parts.items(), renamed)
