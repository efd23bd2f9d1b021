"""EPUB books through translation: every content document through the HTML reader, the
table of contents and the title translated, the language set, and the package's order,
ids, manifest, spine and `mimetype` entry kept."""

from __future__ import annotations

import io
import zipfile

import pytest
from lxml import etree

from rnnsearch.documents.document import DocumentError, ReadOptions
from rnnsearch.documents.translating import read_document, translate_read

OPF = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:9b2a1e0c-4c1f-4e53-9c5e-2f7a0b6d8e11</dc:identifier>
    <meta property="dcterms:modified">2026-12-06T00:00:00Z</meta>
    <dc:title>Der rote Hund</dc:title>
    <dc:description>Ein Buch über einen Hund.</dc:description>
    <dc:language>de</dc:language>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="c1" href="text/kapitel%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="img" href="bild.png" media-type="image/png"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/></spine>
</package>
"""

CHAPTER = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="de" xml:lang="de">
<head><title>Kapitel eins</title><link rel="stylesheet" href="../style.css"/></head>
<body><h1 id="k1">Kapitel eins</h1>
<p>Ein Hund läuft <em>schnell</em> durch den Schnee.<br/>Er ist rot.</p>
<p translate="no">Bleibt so.</p><img src="../bild.png" alt="Ein Bild"/></body></html>
"""

NAV = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="de">
<head><title>Inhalt</title></head>
<body><nav epub:type="toc"><ol><li><a href="text/kapitel%201.xhtml#k1">Kapitel eins</a></li></ol></nav></body></html>
"""

NCX_DOCTYPE = '<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">\n'
"""What an EPUB 2 book's NCX declares (EPUB 3 forbids it): an external DTD, never loaded."""

NCX = """<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head><meta name="dtb:uid" content="urn:uuid:9b2a1e0c-4c1f-4e53-9c5e-2f7a0b6d8e11"/></head>
<docTitle><text>Der rote Hund</text></docTitle>
<navMap><navPoint id="p1" playOrder="1"><navLabel><text>Kapitel eins</text></navLabel>
<content src="text/kapitel%201.xhtml#k1"/></navPoint></navMap></ncx>
"""

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
"""


PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000b49444154789c636000020000"
    "0500017a5eab3f0000000049454e44ae426082"
)
"""A PNG of one pixel."""


def book(opf: str = OPF, ncx: str = NCX) -> bytes:
    """A small EPUB 3 book with an EPUB 2 table of contents too."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/container.xml", CONTAINER)
        package.writestr("OEBPS/content.opf", opf)
        package.writestr("OEBPS/nav.xhtml", NAV)
        package.writestr("OEBPS/toc.ncx", ncx)
        package.writestr("OEBPS/bild.png", PIXEL)
        package.writestr("OEBPS/text/kapitel 1.xhtml", CHAPTER)
        package.writestr("OEBPS/style.css", "p { color: red }")
    return buffer.getvalue()


def uppercased(sentences):
    from tests.unit.test_documents import uppercased as changed

    return changed(sentences)


def test_a_book_has_its_pages_contents_and_title_translated_and_its_package_kept():
    data = book()
    [result] = translate_read(
        [read_document(data, name="b.epub", options=ReadOptions("en"))], uppercased, language="de"
    )
    source, written = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(result.data))
    assert written.infolist()[0].filename == "mimetype" and written.infolist()[0].compress_type == zipfile.ZIP_STORED
    assert [m.filename for m in written.infolist()] == [m.filename for m in source.infolist()]
    chapter = written.read("OEBPS/text/kapitel 1.xhtml").decode()
    assert "EIN HUND LÄUFT <em>SCHNELL</em> DURCH DEN SCHNEE.<br/>ER IST ROT." in chapter
    assert 'lang="en" xml:lang="en"' in chapter and "Bleibt so." in chapter and 'alt="EIN BILD"' in chapter
    etree.fromstring(written.read("OEBPS/text/kapitel 1.xhtml"))  # still well-formed XHTML
    assert ">KAPITEL EINS</a>" in written.read("OEBPS/nav.xhtml").decode()
    ncx = etree.fromstring(written.read("OEBPS/toc.ncx"))
    assert [t.text for t in ncx.iter("{http://www.daisy.org/z3986/2005/ncx/}text")] == ["DER ROTE HUND", "KAPITEL EINS"]
    opf = etree.fromstring(written.read("OEBPS/content.opf"))
    dc = "{http://purl.org/dc/elements/1.1/}"
    assert [opf.find(f".//{dc}{name}").text for name in ("title", "description", "language", "identifier")] == [
        "DER ROTE HUND",
        "EIN BUCH ÜBER EINEN HUND.",
        "en",
        "urn:uuid:9b2a1e0c-4c1f-4e53-9c5e-2f7a0b6d8e11",
    ]
    assert written.read("OEBPS/style.css") == source.read("OEBPS/style.css")


def test_a_book_whose_container_names_no_package_document_is_refused_in_one_line():
    with pytest.raises(DocumentError, match=r"^lost.epub: its container names no package document it holds"):
        read_document(
            book().replace(b"OEBPS/content.opf", b"OEBPS/missing.opf"), name="lost.epub", options=ReadOptions("en")
        )


def test_an_epub_2_table_of_contents_that_names_its_dtd_is_read_and_one_that_declares_entities_refused():
    named = book(ncx=NCX.replace("<ncx ", NCX_DOCTYPE + "<ncx ", 1))
    [result] = translate_read(
        [read_document(named, name="b.epub", options=ReadOptions("en"))], uppercased, language="de"
    )
    assert b"KAPITEL EINS" in zipfile.ZipFile(io.BytesIO(result.data)).read("OEBPS/toc.ncx")
    laughs = book(ncx=NCX.replace("<ncx ", '<!DOCTYPE ncx [<!ENTITY a "ha">]><ncx ', 1))
    with pytest.raises(DocumentError, match=r"^l.epub: OEBPS/toc.ncx: declares a DTD"):
        read_document(laughs, name="l.epub", options=ReadOptions("en"))
