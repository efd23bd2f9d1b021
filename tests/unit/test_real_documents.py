"""OpenDocument files, WebVTT captions and EPUB books that the project did not write
(odfpy's, webvtt-py's and the EPUB 3 samples' own test files, tests/data/documents with
their licences) through translation: every paragraph, span, cell, note, cue and part
kept, every text translated or counted as kept, and each file given back byte for byte
where its translation changes nothing."""

from __future__ import annotations

import io
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import webvtt
from lxml import etree

from rnnsearch.documents.document import DocumentError, ReadOptions
from rnnsearch.documents.translating import copied, read_document, translate_read
from tests.unit.test_documents import uppercased

REAL = Path(__file__).resolve().parent.parent / "data" / "documents"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def translated(path: Path):
    data = path.read_bytes()
    read = read_document(data, name=path.name, options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de", unchanged_ok=True)
    [same] = translate_read(
        [read_document(data, name=path.name, options=ReadOptions("en"))], copied, language="de", unchanged_ok=True
    )
    assert same.data == data, "an identity translation changed the file"
    assert result.units == len(read[2].units), result.summary
    return data, result.data


def spaced(text: str) -> str:
    return " ".join(text.split())


def assert_translated(old: str, new: str) -> None:
    """A text uppercased by the translation (what has no lower case letter stays as it was)."""
    assert spaced(new) == spaced(old.upper()), (old, new)


OPEN_DOCUMENTS = [path for path in sorted(REAL.glob("odfpy-*.od?")) if path.stem != "odfpy-nasty"]


@pytest.mark.parametrize("path", OPEN_DOCUMENTS, ids=lambda path: path.stem)
def test_real_opendocument_files_keep_every_element_and_get_every_paragraph_translated(path):
    data, out = translated(path)
    before, after = (etree.fromstring(zipfile.ZipFile(io.BytesIO(d)).read("content.xml")) for d in (data, out))
    assert Counter(e.tag for e in after.iter()) == Counter(e.tag for e in before.iter())
    paragraphs = [
        (a, b) for a, b in zip(before.iter(f"{{{TEXT}}}p", f"{{{TEXT}}}h"), after.iter(f"{{{TEXT}}}p", f"{{{TEXT}}}h"))
    ]
    assert paragraphs or path.stem == "odfpy-empty"  # odfpy's empty spreadsheet holds none
    for old, new in paragraphs:
        assert_translated("".join(old.itertext()), "".join(new.itertext()))
    assert [m.filename for m in zipfile.ZipFile(io.BytesIO(out)).infolist()] == [
        m.filename for m in zipfile.ZipFile(io.BytesIO(data)).infolist()
    ]


@pytest.mark.parametrize("path", sorted(REAL.glob("webvtt-py-*.vtt")), ids=lambda path: path.stem)
def test_real_captions_keep_every_cue_its_timing_and_settings_and_get_their_text_translated(path):
    data, out = translated(path)
    before, after = (webvtt.from_buffer(io.StringIO(d.decode("utf-8-sig"))) for d in (data, out))
    assert len(after.captions) == len(before.captions) > 0
    for old, new in zip(before.captions, after.captions, strict=True):
        assert (new.identifier, new.start, new.end) == (old.identifier, old.start, old.end)
        assert new.raw_text.count("<") == old.raw_text.count("<"), (old.raw_text, new.raw_text)
    words = lambda captions: spaced(" ".join(c.text for c in captions))  # noqa: E731
    assert words(after.captions) == words(before.captions).upper()
    assert [s.text for s in after.styles] == [s.text for s in before.styles]


@pytest.mark.parametrize("path", sorted(REAL.glob("epub3-*.epub")), ids=lambda path: path.stem)
def test_real_books_keep_their_package_and_every_element_and_get_their_pages_translated(path):
    data, out = translated(path)
    source, written = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(out))
    assert [(m.filename, m.compress_type) for m in written.infolist()] == [
        (m.filename, m.compress_type) for m in source.infolist()
    ]
    pages = [name for name in source.namelist() if name.endswith(".xhtml")]
    changed = 0
    for name in pages:
        old, new = etree.fromstring(source.read(name)), etree.fromstring(written.read(name))
        assert Counter(e.tag for e in new.iter()) == Counter(e.tag for e in old.iter()), name
        changed += source.read(name) != written.read(name)
    assert changed == len(pages)


def test_a_real_opendocument_file_that_declares_an_external_entity_is_refused_unread():
    path = REAL / "odfpy-nasty.odt"  # odfpy's own test of an external entity in content.xml
    with pytest.raises(DocumentError, match="odfpy-nasty.odt: content.xml: declares a DTD"):
        read_document(path.read_bytes(), name=path.name, options=ReadOptions("en"))
