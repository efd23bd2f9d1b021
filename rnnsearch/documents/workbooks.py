"""Excel workbooks (.xlsx), read with lxml: every text a cell shows is translated once,
however many cells show it, and nothing else.

The texts are the workbook's shared strings (`xl/sharedStrings.xml`: each `<si>` once,
whichever cells of whichever sheets, hidden ones too, refer to it) and the inline strings
of its sheets (`<is>`). A text with rich formatting keeps each run's look on its words
(runs.py: the look most of its text has given to words aligned to nothing); phonetic
guides (`rPh`), whose offsets the translation no longer has, are dropped. A text that is
only a number, a date, a code, a URL or an e-mail address (no letter, or one word holding
"://", "@", "/" or "\\" or a digit) is left alone. Formulas, their cached results,
numbers, dates, truth values, data validation, defined names, sheet names, styles and
every other part are never touched, and a workbook none of whose texts changes comes back
byte for byte. The package is checked as Word's is (rnnsearch.documents.packages).
"""

from __future__ import annotations

from functools import partial

from rnnsearch.documents.document import Document, ReadOptions, Unit, checked_size, checked_units
from rnnsearch.documents.packages import Kind, PackageDocument, Writer, opened
from rnnsearch.documents.runs import RunParagraph, RunTags

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHARED, INLINE = f"{{{S}}}si", f"{{{S}}}is"
CELLS = RunTags(
    f"{{{S}}}r", f"{{{S}}}rPr", f"{{{S}}}t", last=(f"{{{S}}}phoneticPr",), dropped=(f"{{{S}}}rPh",), preserve=True
)
"""SpreadsheetML's texts: plain `t`, or runs `r` of `rPr` and `t`, then phonetic guides."""

EXCEL = Kind(
    "an Excel workbook",
    "Excel",
    "xl/workbook.xml",
    lambda name: name == "xl/sharedStrings.xml" or (name.startswith("xl/worksheets/sheet") and name.endswith(".xml")),
)


def _is_data(text: str) -> bool:
    """Whether a cell's text is data rather than words: no letter at all, or one word that
    holds a digit or the marks of a URL, an address or a path."""
    if not any(character.isalpha() for character in text):
        return True
    words = text.split()
    return len(words) == 1 and any(mark in words[0] for mark in ("://", "@", "/", "\\", *"0123456789"))


class ExcelWorkbook:
    """An Excel (.xlsx) workbook."""

    name = "xlsx"
    extensions: tuple[str, ...] = ("xlsx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package, parts = opened(checked_size(data, origin), origin, EXCEL)
        texts: dict[str, list[tuple[str, RunParagraph]]] = {}  # by markup: each text translated once
        units = []
        for name, root in parts.items():
            tag, kind = (SHARED, "string") if name == "xl/sharedStrings.xml" else (INLINE, "inline string")
            for number, element in enumerate(root.iter(tag), start=1):
                read = RunParagraph.of(element, CELLS)
                if read is None or _is_data("".join(str(text) for text in element.itertext())):
                    continue
                if read.markup not in texts:
                    units.append(Unit(read.markup, f"{name}, {kind} {number}"))
                texts.setdefault(read.markup, []).append((name, read))
        writers: list[Writer] = [(tuple(name for name, _ in same), partial(_written, same)) for same in texts.values()]
        return PackageDocument(data, package, parts, writers, checked_units(units, origin))


def _written(same: list[tuple[str, RunParagraph]], translation: str) -> None:
    """One text's translation written into every place that shows it."""
    for _, text in same:
        text.write(translation)
