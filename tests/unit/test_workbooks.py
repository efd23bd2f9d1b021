"""Excel workbooks through translation: every text a cell shows translated once, rich
text keeping each run's look on its words, and numbers, formulas, codes, URLs, sheet names
and every other part left as they were."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.translating import copied, read_document, translate_read


def workbook() -> bytes:
    """Two sheets (one hidden): texts shared by several cells, rich text, a number, a date,
    a formula, a code, a URL."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Preise"
    sheet["A1"], sheet["B1"], sheet["C1"] = "Ein roter Hund", 42, "=B1*2"
    sheet["A2"] = "Ein roter Hund"
    sheet["A3"] = CellRichText(["Der Hund läuft ", TextBlock(InlineFont(b=True), "sehr schnell"), " nach Hause."])
    sheet["A4"], sheet["A5"], sheet["A6"] = "ABC-123", "https://example.org/a", "2024-01-05"
    hidden = book.create_sheet("Versteckt")
    hidden.sheet_state = "hidden"
    hidden["A1"] = "Eine versteckte Zeile."
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def uppercased(sentences):
    from tests.unit.test_documents import uppercased as changed

    return changed(sentences)


def test_a_workbook_has_each_text_translated_once_and_keeps_its_numbers_formulas_codes_and_looks():
    data = workbook()
    read = read_document(data, name="book.xlsx", options=ReadOptions("en"))
    assert len(read[2].units) == 3  # "Ein roter Hund" once, the rich text, the hidden sheet's
    [result] = translate_read([read], uppercased, language="de")
    book = load_workbook(io.BytesIO(result.data), rich_text=True)
    sheet = book["Preise"]
    assert (sheet["A1"].value, sheet["A2"].value, sheet["B1"].value, sheet["C1"].value) == (
        "EIN ROTER HUND",
        "EIN ROTER HUND",
        42,
        "=B1*2",
    )
    rich = sheet["A3"].value
    assert [(str(block.text), block.font.b) for block in rich if isinstance(block, TextBlock)] == [
        ("SEHR SCHNELL", True)
    ]
    assert str(rich) == "DER HUND LÄUFT SEHR SCHNELL NACH HAUSE."
    assert [sheet[c].value for c in ("A4", "A5", "A6")] == ["ABC-123", "https://example.org/a", "2024-01-05"]
    assert book["Versteckt"]["A1"].value == "EINE VERSTECKTE ZEILE." and book.sheetnames == ["Preise", "Versteckt"]
    source, written = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(result.data))
    changed = [n for n in source.namelist() if source.read(n) != written.read(n)]
    assert set(changed) <= {"xl/sharedStrings.xml", "xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"}


REAL = Path(__file__).resolve().parent.parent / "data" / "documents"


def _cells(data: bytes) -> list[tuple[str, str, object]]:
    book = load_workbook(io.BytesIO(data))
    value = lambda cell: (cell.value.ref, cell.value.text) if hasattr(cell.value, "ref") else cell.value  # noqa: E731
    return [(sheet.title, cell.coordinate, value(cell)) for sheet in book for row in sheet.iter_rows() for cell in row]


@pytest.mark.parametrize("path", sorted(REAL.glob("openpyxl-*.xlsx")), ids=lambda path: path.stem)
def test_real_workbooks_keep_every_cell_and_get_their_texts_translated(path):
    data = path.read_bytes()
    read = read_document(data, name=path.name, options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de")
    before, after = _cells(data), _cells(result.data)
    assert [(sheet, cell) for sheet, cell, _ in after] == [(sheet, cell) for sheet, cell, _ in before]
    for (_, cell, old), (_, _, new) in zip(before, after, strict=True):
        if isinstance(old, str) and not old.startswith("="):
            assert "".join(new.split()) in ("".join(old.upper().split()), "".join(old.split())), (cell, old, new)
        else:
            assert new == old, (cell, old, new)
    [same] = translate_read(
        [read_document(data, name=path.name, options=ReadOptions("en"))], copied, language="de", unchanged_ok=True
    )
    assert same.data == data
