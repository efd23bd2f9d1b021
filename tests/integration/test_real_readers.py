"""The documents' outputs opened by the programs people open them with, outside `make
test`'s time (`make check-formats` installs them): LibreOffice, headless, converts every
Word, PowerPoint, Excel and OpenDocument output to PDF, and epubcheck finds no error in
an EPUB output. A file a reader refuses, or converts to nothing, fails."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.translating import read_document, translate_read
from tests.unit.test_books import book
from tests.unit.test_documents import uppercased, word_document
from tests.unit.test_open_document import SHEET_BODY, SLIDES_BODY, open_document, text_document
from tests.unit.test_slides import presentation
from tests.unit.test_workbooks import named_workbook, workbook

pytestmark = pytest.mark.slow

REAL = Path(__file__).resolve().parent.parent / "data" / "documents"
"""Real files the project did not write (tests/data/documents, with their licences)."""

OFFICE = {
    **{
        path.name: path.read_bytes
        for path in sorted(REAL.glob("*.*"))
        if path.suffix in (".pptx", ".xlsx", ".odt", ".odp", ".ods") and path.stem != "odfpy-nasty"
    },
    "letter.docx": word_document,
    "deck.pptx": presentation,
    "book.xlsx": workbook,
    "brief.odt": text_document,
    "prices.ods": lambda: open_document(SHEET_BODY, "application/vnd.oasis.opendocument.spreadsheet"),
    "slides.odp": lambda: open_document(SLIDES_BODY, "application/vnd.oasis.opendocument.presentation"),
}


def translated(name: str, data: bytes, folder: Path) -> Path:
    read = read_document(data, name=name, options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de", unchanged_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(result.data)
    return path


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (make check-formats)")
@pytest.mark.parametrize("name", sorted(OFFICE))
def test_libreoffice_converts_every_office_output_to_pdf(name, tmp_path):
    path = translated(name, OFFICE[name](), tmp_path / "out")
    profile = f"-env:UserInstallation=file://{tmp_path / 'profile'}"
    done = subprocess.run(
        ["soffice", profile, "--headless", "--convert-to", "pdf", "--outdir", str(tmp_path / "pdf"), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    pdf = tmp_path / "pdf" / (path.stem + ".pdf")
    assert done.returncode == 0 and pdf.exists() and pdf.stat().st_size > 1000, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (make check-formats)")
def test_libreoffice_computes_formulas_through_sheets_renamed_by_translation(tmp_path):
    read = read_document(named_workbook(), name="named.xlsx", options=ReadOptions("en", sheet_names=True))
    [result] = translate_read([read], uppercased, language="de")
    path = tmp_path / "named.xlsx"
    path.write_bytes(result.data)
    profile = f"-env:UserInstallation=file://{tmp_path / 'profile'}"
    every_sheet = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"
    done = subprocess.run(
        ["soffice", profile, "--headless", "--convert-to", every_sheet, "--outdir", str(tmp_path), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    prices = tmp_path / "named-PREISE.csv"
    assert done.returncode == 0 and prices.exists(), done.stdout + done.stderr
    rows = prices.read_text(encoding="utf-8").splitlines()
    assert rows[:2] == ["EIN ROTER HUND (Date Übersicht!A1),1", "5,2"]  # the text and the sum through the renamed sheet


EPUBCHECK = Path("/usr/share/java/epubcheck.jar")
"""Debian's epubcheck, a jar its command runs with Java."""


@pytest.mark.skipif(not EPUBCHECK.exists(), reason="epubcheck is not installed (make check-formats)")
@pytest.mark.parametrize("name", ["novel.epub", *(path.name for path in sorted(REAL.glob("epub3-*.epub")))])
def test_epubcheck_finds_no_error_in_a_translated_book(name, tmp_path):
    data = (REAL / name).read_bytes() if (REAL / name).exists() else book()
    source = tmp_path / "source.epub"
    source.write_bytes(data)
    path = translated(name, data, tmp_path / "out")
    for checked in (source, path):
        done = subprocess.run(
            ["java", "-jar", str(EPUBCHECK), str(checked)], capture_output=True, text=True, timeout=300
        )
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "ERROR" not in said and "FATAL" not in said, (checked.name, said)
