"""PowerPoint presentations through translation: every slide's and notes page's
paragraphs translated whatever shape holds them, each run's look on the words it held,
breaks and fields kept, and every paragraph, run look and cell counted the same after."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from lxml import etree
from pptx import Presentation
from pptx.util import Inches

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.translating import SentenceTranslation, copied, read_document, translate_read

A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def presentation() -> bytes:
    """A deck of two slides: a title, a body with a bold run and a line break, a table, a
    group of shapes, a slide number field and speaker notes."""
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Ein roter Hund"
    body = slide.placeholders[1].text_frame
    paragraph = body.paragraphs[0]
    for text, bold in (("Der Hund läuft ", None), ("sehr schnell", True), (" durch den Schnee.", None)):
        run = paragraph.add_run()
        run.text, run.font.bold = text, bold
    body.add_paragraph().text = "Erste Zeile\vzweite Zeile."
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(1, 1).text = "Eine Zelle", "Noch eine Zelle"
    slide.notes_slide.notes_text_frame.text = "Eine Notiz für den Redner."
    second = deck.slides.add_slide(deck.slide_layouts[6])
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text_frame.text = "Im Kasten steht ein Satz."
    box = second.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1)).text_frame.paragraphs[0]
    box.add_run().text = "Seite "
    field = etree.SubElement(box._p, f"{{{A}}}fld", id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}", type="slidenum")
    etree.SubElement(field, f"{{{A}}}t").text = "2"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def uppercased(sentences):
    from tests.unit.test_documents import uppercased as changed

    return changed(sentences)


def _texts(data: bytes) -> list[tuple[str, list[list[tuple[str, bool | None]]]]]:
    """Each shape's paragraphs, as (text, bold) runs, slide by slide, notes after each slide."""
    deck, shapes = Presentation(io.BytesIO(data)), []
    for slide in deck.slides:
        for shape in [*slide.shapes, *(s for g in slide.shapes if g.shape_type == 6 for s in g.shapes)]:
            if shape.has_text_frame:
                shapes.append(
                    (shape.name, [[(r.text, r.font.bold) for r in p.runs] for p in shape.text_frame.paragraphs])
                )
            if getattr(shape, "has_table", False):
                shapes.append((shape.name, [[(c.text, None)] for row in shape.table.rows for c in row.cells]))
        shapes.append(("notes", [[(slide.notes_slide.notes_text_frame.text, None)]] if slide.has_notes_slide else []))
    return shapes


def test_a_presentation_has_every_paragraph_translated_and_keeps_its_looks_breaks_fields_and_shapes():
    data = presentation()
    read = read_document(data, name="deck.pptx", options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de")
    before, after = _texts(data), _texts(result.data)
    assert [(name, len(paragraphs)) for name, paragraphs in after] == [(n, len(p)) for n, p in before]
    flat = {text for _, paragraphs in after for runs in paragraphs for text, _ in runs}
    assert {"EIN ROTER HUND", "SEHR SCHNELL", "EINE ZELLE", "NOCH EINE ZELLE", "EINE NOTIZ FÜR DEN REDNER."} <= flat
    assert "IM KASTEN STEHT EIN SATZ." in flat
    body = dict(after)["Content Placeholder 2"]
    assert body[0] == [("DER HUND LÄUFT ", None), ("SEHR SCHNELL", True), (" DURCH DEN SCHNEE.", None)]
    slide = Presentation(io.BytesIO(result.data)).slides
    xml = etree.tostring(slide[0].shapes[1].text_frame._txBody).decode()
    assert xml.count("<a:br") == 1 and "ERSTE ZEILE" in xml and "ZWEITE ZEILE." in xml
    field = slide[1].shapes[1].text_frame.paragraphs[0]._p
    assert [etree.QName(c).localname for c in field if etree.QName(c).localname in ("r", "fld")] == ["r", "fld"]
    assert field.find(f"{{{A}}}fld").get("type") == "slidenum" and result.protected == 1


def test_a_presentation_s_layouts_masters_and_other_parts_stay_as_they_were():
    import zipfile

    data = presentation()
    [result] = translate_read(
        [read_document(data, name="d.pptx", options=ReadOptions("en"))], uppercased, language="de"
    )
    source, written = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(result.data))
    assert [m.filename for m in written.infolist()] == [m.filename for m in source.infolist()]
    for name in source.namelist():
        if not name.startswith(("ppt/slides/slide", "ppt/notesSlides/notesSlide")):
            assert written.read(name) == source.read(name), name
    assert result.units == 8


REAL = Path(__file__).resolve().parent.parent / "data" / "documents"


def _paragraphs(data: bytes) -> list[tuple[str, list[bytes], str]]:
    """Each paragraph of each slide's and notes page's shapes, tables and groups: where it
    is, the looks of its runs (each run's properties as written), its text."""
    deck, found = Presentation(io.BytesIO(data)), []
    for number, slide in enumerate(deck.slides):
        pages = [slide, *([slide.notes_slide] if slide.has_notes_slide else [])]
        for part in pages:
            for element in part._element.iter(f"{{{A}}}p"):
                looks = sorted(
                    {
                        etree.tostring(r.find(f"{{{A}}}rPr")) if r.find(f"{{{A}}}rPr") is not None else b""
                        for r in element.iter(f"{{{A}}}r")
                    }
                )
                found.append((f"slide {number}", looks, "".join(t.text or "" for t in element.iter(f"{{{A}}}t"))))
    return found


@pytest.mark.parametrize("path", sorted(REAL.glob("python-pptx-*.pptx")), ids=lambda path: path.stem)
def test_real_presentations_keep_every_paragraph_and_look_and_get_their_text_translated(path):
    data = path.read_bytes()
    read = read_document(data, name=path.name, options=ReadOptions("en"))
    [result] = translate_read([read], uppercased, language="de")
    before, after = _paragraphs(data), _paragraphs(result.data)
    assert [(where, looks) for where, looks, _ in after] == [(where, looks) for where, looks, _ in before]
    for (_, _, old), (_, _, new) in zip(before, after, strict=True):
        # words spaced as the source spaced them, across line breaks too ("a<br/>b"), white space runs as one
        assert " ".join(new.split()) == " ".join(old.upper().split()) or not any(c.isalpha() for c in old), (old, new)
    assert result.units == len(read[2].units) and result.kept == 0
    [same] = translate_read(
        [read_document(data, name=path.name, options=ReadOptions("en"))], copied, language="de", unchanged_ok=True
    )
    assert same.data == data


def test_the_summary_names_the_shapes_whose_text_grew_past_their_box_and_not_those_that_fit_it():
    def doubled(sentences):
        return [
            SentenceTranslation(
                [w for word in s.split() for w in (word, word)], [(k, 2 * k) for k in range(len(s.split()))]
            )
            for s in sentences
        ]

    read = read_document(presentation(), name="deck.pptx", options=ReadOptions("en"))
    [result] = translate_read([read], doubled, language="de")
    assert "text grew by more than 30% in" in result.summary and "'Title 1'" in result.summary
    assert "'TextBox" not in result.summary  # a text box that fits itself to its text (spAutoFit) is not named
    [same] = translate_read(
        [read_document(presentation(), name="d.pptx", options=ReadOptions("en"))], uppercased, language="de"
    )
    assert "grew" not in same.summary
