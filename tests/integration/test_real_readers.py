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
from tests.unit.test_workbooks import workbook

pytestmark = pytest.mark.slow

OFFICE = {
    "letter.docx": word_document,
    "deck.pptx": presentation,
    "book.xlsx": workbook,
    "brief.odt": text_document,
    "prices.ods": lambda: open_document(SHEET_BODY, "application/vnd.oasis.opendocument.spreadsheet"),
    "slides.odp": lambda: open_document(SLIDES_BODY, "application/vnd.oasis.opendocument.presentation"),
}


def translated(name: str, data: bytes, folder: Path) -> Path:
    read = read_document(data, name=name, options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de")
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


EPUBCHECK = Path("/usr/share/java/epubcheck.jar")
"""Debian's epubcheck, a jar its command runs with Java."""


@pytest.mark.skipif(not EPUBCHECK.exists(), reason="epubcheck is not installed (make check-formats)")
def test_epubcheck_finds_no_error_in_a_translated_book(tmp_path):
    source = tmp_path / "source.epub"
    source.write_bytes(book())
    path = translated("novel.epub", book(), tmp_path / "out")
    for checked in (source, path):
        done = subprocess.run(
            ["java", "-jar", str(EPUBCHECK), str(checked)], capture_output=True, text=True, timeout=300
        )
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "ERROR" not in said and "FATAL" not in said, (checked.name, said)
