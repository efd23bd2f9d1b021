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
    assert len(read[2].units) == 2  # "Ein roter Hund" once, the rich text; not the hidden sheet's
    [shown] = translate_read([read], uppercased, language="de")
    assert load_workbook(io.BytesIO(shown.data))["Versteckt"]["A1"].value == "Eine versteckte Zeile."
    read = read_document(data, name="book.xlsx", options=ReadOptions("en", hidden_sheets=True))
    assert len(read[2].units) == 3
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


NOTE = (
    '<text><r><rPr><b/><sz val="9"/></rPr><t>Anna Weber:</t></r>'
    '<r><rPr><sz val="9"/></rPr><t xml:space="preserve">\nBitte den Preis prüfen.</t></r></text>'
)


def named_workbook() -> bytes:
    """Sheets referred to by name from formulas, a defined name, a validation list and a
    link within the workbook, with a note in Excel's own shape (its author in bold)."""
    from openpyxl.comments import Comment
    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.datavalidation import DataValidation

    book = Workbook()
    prices = book.active
    prices.title = "Preise"
    data = book.create_sheet("Daten/Übersicht"[:4] + " Übersicht")  # "Date Übersicht"
    data["A1"], data["A2"] = "Ein roter Hund", "Eine Katze"
    prices["A1"] = "='Date Übersicht'!A1&\" (Date Übersicht!A1)\""
    prices["A2"] = "=SUM(Preise!B1:B2)+COUNTA('Date Übersicht'!A1:A2)"
    prices["B1"], prices["B2"] = 1, 2
    prices["A3"] = "Zur Übersicht"
    prices["A3"].hyperlink = "#'Date Übersicht'!A1"
    prices["A3"].hyperlink.location, prices["A3"].hyperlink.target = "'Date Übersicht'!A1", None
    prices["A4"] = "Der Preis ist hoch."
    prices["A4"].comment = Comment("placeholder", "Anna Weber")
    validation = DataValidation(type="list", formula1="'Date Übersicht'!$A$1:$A$2")
    prices.add_data_validation(validation)
    validation.add("C1")
    book.defined_names["Tiere"] = DefinedName("Tiere", attr_text="'Date Übersicht'!$A$1:$A$2")
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w") as out:
        for member in source.infolist():
            part = source.read(member.filename)
            if member.filename.startswith("xl/comments"):
                start, end = part.index(b"<text>"), part.index(b"</text>") + len(b"</text>")
                part = part[:start] + NOTE.encode() + part[end:]
            out.writestr(member, part)
    return written.getvalue()


def test_notes_are_translated_with_their_author_kept_and_sheet_names_on_asking_with_every_reference():
    data = named_workbook()
    plain = read_document(data, name="book.xlsx", options=ReadOptions("en"))
    assert sum("note on A4" in unit.where for unit in plain[2].units) == 1
    assert not any("name of sheet" in unit.where for unit in plain[2].units)
    quiet = read_document(data, name="book.xlsx", options=ReadOptions("en", notes=False))
    assert not any("note" in unit.where for unit in quiet[2].units)
    read = read_document(data, name="book.xlsx", options=ReadOptions("en", sheet_names=True))
    [result] = translate_read([read], uppercased, language="de")
    book = load_workbook(io.BytesIO(result.data))
    assert book.sheetnames == ["PREISE", "DATE ÜBERSICHT"]
    prices = book["PREISE"]
    assert prices["A1"].value == "='DATE ÜBERSICHT'!A1&\" (Date Übersicht!A1)\""  # a string stays text
    assert prices["A2"].value == "=SUM('PREISE'!B1:B2)+COUNTA('DATE ÜBERSICHT'!A1:A2)"
    assert prices["A3"].hyperlink.location == "'DATE ÜBERSICHT'!A1"
    assert prices.data_validations.dataValidation[0].formula1 == "'DATE ÜBERSICHT'!$A$1:$A$2"
    assert book.defined_names["Tiere"].attr_text == "'DATE ÜBERSICHT'!$A$1:$A$2"
    note = prices["A4"].comment.text
    assert note.startswith("Anna Weber:") and "BITTE DEN PREIS PRÜFEN." in note, note


def test_excel_s_own_workbooks_follow_a_renamed_sheet_and_keep_their_notes_authors():
    data = (REAL / "openpyxl-empty.xlsx").read_bytes()
    read = read_document(data, name="empty.xlsx", options=ReadOptions("en", sheet_names=True))
    [result] = translate_read([read], uppercased, language="de")
    book = load_workbook(io.BytesIO(result.data))
    assert book.sheetnames == ["SHEET1 - TEXT", "SHEET2 - NUMBERS", "SHEET3 - FORMULAS", "SHEET4 - DATES"]
    assert book["SHEET3 - FORMULAS"]["D2"].value == "='SHEET2 - NUMBERS'!D5"
    app = zipfile.ZipFile(io.BytesIO(result.data)).read("docProps/app.xml").decode()
    assert "<vt:lpstr>SHEET2 - NUMBERS</vt:lpstr>" in app and "Sheet2 - Numbers" not in app
    data = (REAL / "openpyxl-comments.xlsx").read_bytes()
    [result] = translate_read(
        [read_document(data, name="comments.xlsx", options=ReadOptions("en"))], uppercased, language="de"
    )
    notes = [cell.comment.text for sheet in load_workbook(io.BytesIO(result.data)) for row in sheet.iter_rows()
             for cell in row if cell.comment is not None]  # fmt: skip
    assert sum(note.startswith(("Cuke:", "Not Cuke:")) for note in notes) == 6, notes  # the seventh has no author
    assert any("FIRST COMMENT" in note for note in notes), notes


def test_a_translated_sheet_name_is_made_one_excel_takes():
    from rnnsearch.documents.sheet_names import excel_names, renamed_reference

    names = ["Preise", "Daten", "Kosten", "Notizen", "Alt"]
    translated = {0: "Prices: net/gross", 1: "Costs", 2: "Costs", 3: "'" + "x" * 40 + "'", 4: "?*"}
    assert excel_names(names, translated) == {
        "Preise": "Prices net gross",
        "Daten": "Costs",
        "Kosten": "Costs (2)",
        "Notizen": "x" * 31,
    }
    assert excel_names(["Verlauf"], {0: "History"}) == {"Verlauf": "History (2)"}
    by_name = {"preise": "Prices", "it's": "Its"}
    assert renamed_reference("Preise:Kosten!A1", by_name) == "'Prices:Kosten'!A1"
    assert renamed_reference("'It''s'!A1", {"it's": "O'Neil"}) == "'O''Neil'!A1"
    assert renamed_reference("[1]Preise!A1", by_name) == "[1]Preise!A1"
    assert renamed_reference("Kosten!A1", by_name) == "Kosten!A1"
