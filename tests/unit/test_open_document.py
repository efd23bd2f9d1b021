"""OpenDocument files through translation: every paragraph and heading wherever it stands
(the body, tables, frames, slides, presenter notes, notes), spans and links placed over
their words, notes, spaces and fields kept, numbers, formulas and tracked deletions left
alone."""

# ruff: noqa: E501  (the documents below keep their XML on few lines)
from __future__ import annotations

import io
import zipfile

from lxml import etree

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.translating import read_document, translate_read

NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'
)

TEXT_BODY = """<office:text>
<text:tracked-changes><text:changed-region text:id="c1"><text:deletion><text:p>Gelöschter Satz.</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:h text:outline-level="1">Ein roter Hund</text:h>
<text:p>Der Hund läuft <text:span text:style-name="T1">sehr schnell</text:span> durch den<text:s/> <text:a xlink:href="https://x.org">Schnee</text:a>.<text:note text:id="n1" text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Eine Fußnote.</text:p></text:note-body></text:note></text:p>
<table:table table:name="T"><table:table-row><table:table-cell office:value-type="string"><text:p>Eine Zelle</text:p></table:table-cell></table:table-row></table:table>
</office:text>"""

SHEET_BODY = """<office:spreadsheet><table:table table:name="Preise"><table:table-row>
<table:table-cell office:value-type="string"><text:p>Ein roter Hund</text:p></table:table-cell>
<table:table-cell office:value-type="float" office:value="42"><text:p>42</text:p></table:table-cell>
<table:table-cell table:formula="of:=[.B1]*2" office:value-type="float" office:value="84"><text:p>84</text:p></table:table-cell>
<table:table-cell office:value-type="string" table:formula="of:=&quot;Ein Text&quot;"><text:p>Ein Text</text:p></table:table-cell>
</table:table-row></table:table></office:spreadsheet>"""

SLIDES_BODY = """<office:presentation><draw:page draw:name="Folie 1">
<draw:frame><draw:text-box><text:p>Ein Titel für die Folie</text:p></draw:text-box></draw:frame>
<presentation:notes><draw:frame><draw:text-box><text:p>Eine Notiz für den Redner.</text:p></draw:text-box></draw:frame></presentation:notes>
</draw:page></office:presentation>"""


def open_document(body: str, media_type: str, *, styles: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("mimetype", media_type, compress_type=zipfile.ZIP_STORED)
        entries = "".join(
            f'<manifest:file-entry manifest:full-path="{path}" manifest:media-type="{kind}"/>'
            for path, kind in (("/", media_type), ("content.xml", "text/xml"), ("styles.xml", "text/xml"))
        )
        package.writestr(
            "META-INF/manifest.xml",
            '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" '
            f'manifest:version="1.3">{entries}</manifest:manifest>',
        )
        content = f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {NAMESPACES} office:version="1.3"><office:automatic-styles>{styles}</office:automatic-styles><office:body>{body}</office:body></office:document-content>'
        package.writestr("content.xml", content)
        package.writestr("styles.xml", f'<?xml version="1.0"?><office:document-styles {NAMESPACES}/>')
    return buffer.getvalue()


def text_document() -> bytes:
    return open_document(TEXT_BODY, "application/vnd.oasis.opendocument.text")


def uppercased(sentences):
    from tests.unit.test_documents import uppercased as changed

    return changed(sentences)


def translated_content(data: bytes, name: str) -> etree._Element:
    [result] = translate_read([read_document(data, name=name, options=ReadOptions("en"))], uppercased, language="de")
    written = zipfile.ZipFile(io.BytesIO(result.data))
    assert written.infolist()[0].filename == "mimetype" and written.read("styles.xml") == zipfile.ZipFile(
        io.BytesIO(data)
    ).read("styles.xml")
    return etree.fromstring(written.read("content.xml"))


def test_a_text_document_has_its_headings_paragraphs_cells_and_notes_translated_and_its_spans_kept():
    content = translated_content(text_document(), "brief.odt")
    text = etree.tostring(content, encoding="unicode")
    assert '<text:h text:outline-level="1">EIN ROTER HUND</text:h>' in text
    assert '<text:span text:style-name="T1">SEHR SCHNELL</text:span>' in text and ">SCHNEE</text:a>" in text
    assert "<text:s/>" in text and text.count("<text:note ") == 1 and "<text:p>EINE FUSSNOTE.</text:p>" in text
    assert "<text:p>EINE ZELLE</text:p>" in text and "<text:p>Gelöschter Satz.</text:p>" in text


def test_a_spreadsheet_keeps_its_numbers_and_formulas_and_a_presentation_its_notes_translated():
    sheet = etree.tostring(
        translated_content(open_document(SHEET_BODY, "application/vnd.oasis.opendocument.spreadsheet"), "p.ods"),
        encoding="unicode",
    )
    assert (
        "<text:p>EIN ROTER HUND</text:p>" in sheet
        and "<text:p>42</text:p>" in sheet
        and "<text:p>Ein Text</text:p>" in sheet
    )
    slides = etree.tostring(
        translated_content(open_document(SLIDES_BODY, "application/vnd.oasis.opendocument.presentation"), "f.odp"),
        encoding="unicode",
    )
    assert "EIN TITEL FÜR DIE FOLIE" in slides and "EINE NOTIZ FÜR DEN REDNER." in slides


HIDDEN = (
    '<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style>'
)
HIDDEN_SHEET_BODY = """<office:spreadsheet>
<table:table table:name="Preise"><table:table-row><table:table-cell office:value-type="string"><text:p>Ein roter Hund</text:p>
<office:annotation><text:p>Bitte prüfen.</text:p></office:annotation></table:table-cell></table:table-row></table:table>
<table:table table:name="Versteckt" table:style-name="ta2"><table:table-row><table:table-cell office:value-type="string">
<text:p>Eine versteckte Zeile.</text:p></table:table-cell></table:table-row></table:table>
</office:spreadsheet>"""


def test_notes_comments_and_hidden_sheets_are_translated_as_the_call_asks_in_every_office_format():
    import docx

    from tests.unit.test_slides import presentation

    sheet = open_document(HIDDEN_SHEET_BODY, "application/vnd.oasis.opendocument.spreadsheet", styles=HIDDEN)
    slides = open_document(SLIDES_BODY, "application/vnd.oasis.opendocument.presentation")
    word = docx.Document()
    word.add_paragraph("Ein Satz im Text.")
    word.add_comment(word.paragraphs[0].runs, text="Ein Kommentar dazu.", author="Anna")
    buffer = io.BytesIO()
    word.save(buffer)
    files = {"p.ods": sheet, "f.odp": slides, "deck.pptx": presentation(), "brief.docx": buffer.getvalue()}
    notes = ("Bitte prüfen.", "Eine Notiz für den Redner.", "Ein Kommentar dazu.")

    def texts(name, **asked):
        return [
            unit.markup for unit in read_document(files[name], name=name, options=ReadOptions("en", **asked))[2].units
        ]

    assert texts("p.ods") == ["Ein roter Hund", "Bitte prüfen."]
    assert texts("p.ods", hidden_sheets=True, notes=False) == ["Ein roter Hund", "Eine versteckte Zeile."]
    for name in files:
        assert any(note in text for text in texts(name) for note in notes), name
        assert not any(note in text for text in texts(name, notes=False) for note in notes), name
    assert texts("deck.pptx", notes=False) == [t for t in texts("deck.pptx") if "Redner" not in t]
