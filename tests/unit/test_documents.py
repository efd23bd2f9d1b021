"""Documents through translation: every format's documents come back byte for byte under
the identity translation, keep what is not translated and their structure under a
translation that changes every word, cut units into whole sentences, and refuse bad
documents in one line naming the file and the place."""

from __future__ import annotations

import codecs
import html.parser
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import srt
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from rnnsearch.documents import format_of, formats
from rnnsearch.documents.document import DocumentError, ReadOptions
from rnnsearch.documents.translating import (
    SentenceTranslation,
    copied,
    read_document,
    translate_read,
)
from tests.unit.test_books import book
from tests.unit.test_open_document import text_document
from tests.unit.test_slides import presentation
from tests.unit.test_workbooks import workbook

HTML = """<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><title>Ein  Titel</title>
<meta name="description" content="Eine Seite über Hunde">
<script>var s = "<b>nicht</b> übersetzen";</script><style>p { color: red }</style></head>
<body>
<!-- ein Kommentar -->
<p>Ein Mann mit <b>rotem</b> Hut.   Er <a href="x.html?a=1&amp;b=2" title="Ein Link">geht</a>
   nach Hause.</p>
<ul><li>Erstens &amp; so&nbsp;weiter</li><li>Zweitens<img src="a.png" alt="Ein Bild"></li></ul>
<pre>  kein   Text
  hier </pre>
<p>Mit <code>rm -rf</code>, <kbd>Strg</kbd> und <span translate="no">Rudi Völler</span>.</p>
<div class="notranslate">Bleibt so.</div>
<input type="submit" value="Senden"> <input type="text" value="bleibt"> <input placeholder="Suche">
<p><b>kaputt</p>
</body></html>
"""

MARKDOWN = """---
title: Ein Haus
---
# Das *rote* Haus

Ein Absatz, der über
zwei Zeilen geht, mit `code` und [einem Link](http://x.org "Titel").

> Ein Zitat
> geht weiter.

| Hund | Katze |
|------|-------|
| ist **rot** | läuft |

- Erstens\\* mit Stern
- Zweitens ![Bild](b.png) und <http://a.b>

```python
print("nicht übersetzen")
```

    eingerückter Code

<div>HTML-Block</div>

[ref]: http://example.org
"""

SUBTITLES = (
    "1\r\n00:00:01,000 --> 00:00:02,500\r\nDer Mann geht\r\n\r\n"
    "2\r\n00:00:02,600 --> 00:00:04,000\r\n<i>nach Hause</i> mit seinem Hund.\r\n\r\n"
    "3\r\n00:00:05,000 --> 00:00:06,000\r\nDie Katze ist rot &amp; schwarz.\r\nSie schläft.\r\n\r\n"
)

CATALOGUE = """# Ein Katalog.
msgid ""
msgstr ""
"Project-Id-Version: test 1.0\\n"
"PO-Revision-Date: 2026-01-01 00:00+0000\\n"
"Last-Translator: Nobody <nobody@example.org>\\n"
"Language-Team: none\\n"
"Language: en\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#: app.py:10
#, python-format
msgid "Hallo %(name)s, der Mann geht <b>nach Hause</b>."
msgstr ""

#: app.py:12
msgid "Hund & Katze {count} laufen."
msgstr ""

msgid "Schon fertig"
msgstr "Already done"

msgid "Ein Hund"
msgid_plural "%d Hunde"
msgstr[0] ""
msgstr[1] ""
"""

PLAIN = "Ein Mann geht.  Er läuft\r\nschnell.\r\n\r\n\r\n   Zweiter Absatz.\r\n"


def word_document() -> bytes:
    """A Word document with what a reader must not lose: a bold word, a word split over two
    runs of the same look, a hyperlink, a PAGE field, a table, a header and a footer."""
    import docx

    document = docx.Document()
    paragraph = document.add_paragraph("Ein Mann mit ")
    paragraph.add_run("rotem").bold = True
    paragraph.add_run(" Hut. Er geht nach Hau")
    paragraph.add_run("se.")
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), "rId99")
    run, text = OxmlElement("w:r"), OxmlElement("w:t")
    text.text = "Ein Link"
    run.append(text)
    link.append(run)
    document.add_paragraph("Siehe ")._p.append(link)
    field = document.add_paragraph("Seite ")
    for kind in ("begin", None, "separate", "end"):
        run = OxmlElement("w:r")
        child = OxmlElement("w:instrText" if kind is None else "w:fldChar")
        if kind is None:
            child.text = " PAGE "
        else:
            child.set(qn("w:fldCharType"), kind)
        run.append(child)
        field._p.append(run)
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Der Hund läuft."
    table.cell(0, 1).text = "Die Katze schläft."
    document.sections[0].header.paragraphs[0].text = "Eine Kopfzeile."
    document.sections[0].footer.paragraphs[0].text = "Eine Fußzeile."
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


CAPTIONS = """WEBVTT - Ein Film

NOTE eine Notiz
über zwei Zeilen

STYLE
::cue(.gelb) { color: yellow }

erster
00:00:01.000 --> 00:00:04.000 line:0 position:20%
<v Roger Bingham>Wir sind in <c.gelb>New York</c>
und <i>es</i> ist <00:00:03.000>sehr

00:04.000 --> 00:06.000
schön. <ruby>漢<rt>kan</rt></ruby> &amp; mehr.

00:06.000 --> 00:07.000
<v.laut Mary>Hallo!
"""

RESOURCES = {
    "de.json": {
        "gruss": "Hallo {{name}}, willkommen!",
        "konto": {"neu": "Sie haben {count, plural, one {# neue Nachricht} other {# neue Nachrichten}} von :user."},
        "link": "Klicken Sie <b>hier</b>, um %s zu öffnen.",
        "liste": ["Ein Hund.", "Zwei Katzen."],
    },
    "app_de.arb": {
        "@@locale": "de",
        "titel": "Meine Anwendung",
        "@titel": {"description": "Der Titel der Anwendung"},
    },
    "messages.json": {
        "name": {
            "message": "Ein Hund für $USER$",
            "description": "Der Name",
            "placeholders": {"user": {"content": "$1"}},
        }
    },
}

LOCALE = """# Rails
de:
  hallo: "Hallo Welt"   # ein Gruß
  anzahl: 3
  datum:
    reihe: [":year", ":month"]
    format: 'Heute ist %{tag}.'
  basis: &basis
    ok: Knopf drücken
  wieder: *basis
"""

DOCUMENTS = {
    "letter.docx": word_document(),
    "deck.pptx": presentation(),
    "book.xlsx": workbook(),
    "novel.epub": book(),
    "brief.odt": text_document(),
    "page.html": HTML.encode(),
    "page-latin.html": HTML.replace('charset="utf-8"', 'charset="iso-8859-1"').encode("latin-1"),
    "page-bom.html": codecs.BOM_UTF8 + HTML.encode(),
    "readme.md": MARKDOWN.encode(),
    "film.srt": SUBTITLES.encode(),
    "film.vtt": CAPTIONS.encode(),
    **{name: (json.dumps(tree, indent=2, ensure_ascii=False) + "\n").encode() for name, tree in RESOURCES.items()},
    "de.yml": LOCALE.encode(),
    "app.po": CATALOGUE.encode(),
    "notes.txt": codecs.BOM_UTF8 + PLAIN.encode(),
    "mixed.srt": (SUBTITLES + "4\n00:00:07,000 --> 00:00:08,000\nZwei Zeilen\nhier.\n\n").encode(),
}


def uppercased(sentences: list[str]) -> list[SentenceTranslation]:
    """A translation that changes every word (its capitals), each linked to its source."""
    return [
        SentenceTranslation([w.upper() for w in words], [(k, k) for k in range(len(words))])
        for words in map(str.split, sentences)
    ]


def translated(name: str, data: bytes, translate=uppercased, **options) -> bytes:
    read = read_document(data, name=name, options=ReadOptions("en"))
    return translate_read([read], translate, language="de", **options)[0].data


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_document_comes_back_byte_for_byte_under_the_identity_translation(name):
    data = DOCUMENTS[name]
    read = read_document(data, name=name, options=ReadOptions("en"))
    assert read[2].units, "each test document has something to translate"
    [result] = translate_read([read], copied, language="de", unchanged_ok=True)
    assert result.data == data
    assert result.kept == result.units


def test_a_document_that_comes_back_unchanged_is_refused_unless_asked():
    with pytest.raises(DocumentError, match=r"page.html: it came back unchanged.*--unchanged-ok"):
        translated("page.html", DOCUMENTS["page.html"], copied)
    with pytest.raises(DocumentError, match=r"empty.md: it holds nothing to translate"):
        translated("empty.md", b"```\ncode\n```\n")


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        self.tags.append("/" + tag)


def _tags(page: str) -> list[str]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


def _blocks(page: str) -> list[str]:
    """The page's tags with those of each run of inline elements in sorted order: its
    tree of blocks, which a translation keeps, whatever order its words (and so the
    inline elements over them, kept ones too) take within a sentence."""
    from rnnsearch.documents.html_page import PHRASING

    blocks: list[str] = []
    run: list[str] = []
    for tag in _tags(page):
        if tag.lstrip("/") in PHRASING:
            run.append(tag)
        else:
            blocks += sorted(run) + [tag]
            run = []
    return blocks + sorted(run)


def test_a_translated_page_keeps_its_tree_protected_parts_and_translates_text_and_attributes():
    page = translated("page.html", DOCUMENTS["page.html"]).decode()
    assert _tags(page) == _tags(HTML)
    for kept in (
        '<script>var s = "<b>nicht</b> übersetzen";</script>',
        "<pre>  kein   Text\n  hier </pre>",
        "<!-- ein Kommentar -->",
        "<code>rm -rf</code>",
        "<kbd>Strg</kbd>",
        '<span translate="no">Rudi Völler</span>',
        '<div class="notranslate">Bleibt so.</div>',
        '<input type="text" value="bleibt">',
        'href="x.html?a=1&amp;b=2"',
    ):
        assert kept in page
    for done in (
        "<title>EIN TITEL</title>",
        'content="EINE SEITE ÜBER HUNDE"',
        'alt="EIN BILD"',
        'title="EIN LINK"',
        'value="SENDEN"',
        'placeholder="SUCHE"',
        '<html lang="en">',
        "EIN MANN MIT <b>ROTEM</b> HUT.",
        "<b>KAPUTT</p>",
    ):
        assert done in page


def test_a_page_is_written_back_in_its_own_encoding():
    data = translated("page-latin.html", DOCUMENTS["page-latin.html"])
    assert "ÜBER".encode("latin-1") in data and b'charset="iso-8859-1"' in data
    assert translated("page-bom.html", DOCUMENTS["page-bom.html"]).startswith(codecs.BOM_UTF8)


@pytest.mark.parametrize("charset", ["base64", "hex", "rot13", "zlib", "unicode_escape", "utf-16", "no-such"])
def test_a_meta_charset_that_names_no_web_encoding_reads_the_page_as_utf_8(charset):
    """Only the WHATWG Encoding standard's labels name an encoding: a codec that is not a
    text encoding was looked up (a traceback), or read the page as escapes."""
    page = f'<html><head><meta charset="{charset}"></head><body><p>Ein Hund läuft.</p>\n<p>Zwei.</p></body></html>'
    written = translated("p.html", page.encode()).decode("utf-8")
    assert "<p>EIN HUND LÄUFT.</p>\n<p>ZWEI.</p>" in written


def test_a_sentence_is_the_unit_whatever_formatting_crosses_it():
    seen: list[str] = []

    def recording(sentences):
        seen.extend(sentences)
        return uppercased(sentences)

    page = translated("a.html", "<p>Der Mann <b>geht\nnach Hause. Er</b> läuft am 3. Oktober.</p>".encode(), recording)
    assert seen == ["Der Mann geht nach Hause.", "Er läuft am 3. Oktober."]
    assert page.decode() == "<p>DER MANN <b>GEHT NACH HAUSE. ER</b> LÄUFT AM 3. OKTOBER.</p>"


def test_a_sentence_longer_than_the_model_reads_is_translated_in_parts_each_asked_about_once():
    seen: list[str] = []
    asked: list[str] = []

    def recording(sentences):
        seen.extend(sentences)
        return uppercased(sentences)

    def fits(sentences):
        asked.extend(sentences)
        return [len(s.split()) <= 2 for s in sentences]

    text = translated("a.txt", b"Kurz. Eins zwei drei vier fuenf sechs sieben.", recording, fits=fits)
    assert text == b"KURZ. EINS ZWEI DREI VIER FUENF SECHS SIEBEN."
    assert all(len(s.split()) <= 2 for s in seen) and len(seen) == 5
    assert len(asked) == len(set(asked)) == 8  # the two sentences, two halves, four quarters


def test_a_word_longer_than_the_model_reads_is_kept_as_written_and_the_rest_translated():
    seen: list[str] = []

    def recording(sentences):
        seen.extend(sentences)
        return uppercased(sentences)

    def fits(sentences):  # a model that reads no word over 20 characters
        return [all(len(word) <= 20 for word in s.split()) for s in sentences]

    long = "x" * 6000
    text = translated("a.txt", f"Ein Hund. Siehe {long} hier und dort.\n\nEnde.".encode(), recording, fits=fits)
    assert text == f"EIN HUND. SIEHE {long} HIER UND DORT.\n\nENDE.".encode()
    assert long not in " ".join(seen)


def test_markdown_keeps_its_code_and_syntax_and_translates_blocks_and_cells():
    text = translated("readme.md", DOCUMENTS["readme.md"]).decode()
    for kept in (
        "---\ntitle: Ein Haus\n---\n",
        '```python\nprint("nicht übersetzen")\n```',
        "    eingerückter Code",
        "<div>HTML-Block</div>",
        "[ref]: http://example.org",
        "`code`",
        "![Bild](b.png)",
        "<http://a.b>",
        "|------|-------|",
    ):
        assert kept in text
    for done in (
        "# DAS *ROTE* HAUS",
        '[EINEM LINK](http://x.org "Titel").',
        "> EIN ZITAT GEHT WEITER.",
        "| HUND | KATZE |",
        "| IST **ROT** | LÄUFT |",
        "ERSTENS\\* MIT STERN",
    ):
        assert done in text


def test_an_italic_opened_in_one_cue_and_closed_in_the_next_keeps_both_tags():
    film = "1\n00:00:01,000 --> 00:00:02,000\n<i>Der Mann geht\n\n2\n00:00:02,000 --> 00:00:03,000\nnach Hause.</i>\n"
    cues = list(srt.parse(translated("film.srt", film.encode()).decode()))
    assert [cue.content for cue in cues] == ["<i>DER MANN GEHT", "NACH HAUSE.</i>"]


def test_an_element_a_cue_leaves_open_is_closed_at_its_end_and_its_words_translated():
    """A player sets the rest of a cue in italics after an `<i>` never closed: the tag is
    kept (closed where the cue ends), never translated as a word or dropped."""
    film = (
        "1\n00:00:01,000 --> 00:00:02,000\n<i>Der <b>Mann</b> geht\n\n2\n00:00:03,000 --> 00:00:04,000\nnach Hause.\n"
    )
    cues = list(srt.parse(translated("film.srt", film.encode()).decode()))
    assert [cue.content for cue in cues] == ["<i>DER <b>MANN</b> GEHT</i>", "NACH HAUSE."]


def _markdown_shape(text: str) -> list[tuple[str, str, list[str]]]:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"maxNesting": 100}).enable("table").enable("strikethrough")
    return [
        (token.type, token.tag, [child.type for child in token.children or [] if child.type != "text"])
        for token in parser.parse(text)
    ]


def exclaimed(sentences: list[str]) -> list[SentenceTranslation]:
    """A translation that changes every word, digits too (a "!" after it)."""
    return [
        SentenceTranslation([word + "!" for word in words], [(k, k) for k in range(len(words))])
        for words in map(str.split, sentences)
    ]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("\\# kein Titel\n", "\\# KEIN TITEL\n"),
        ("1986\\. war ein Jahr.\n", "1986\\. WAR EIN JAHR.\n"),
        ("\\- kein Punkt\n", "\\- KEIN PUNKT\n"),
        ("\\~\\~nicht durch\\~\\~ hier\n", "\\~\\~NICHT DURCH\\~\\~ HIER\n"),
        ("\\&copy; bleibt\n", "\\&COPY; BLEIBT\n"),
        ("[x](http://a.b/c\\)) und [ä](ä.html)\n", "[X](<http://a.b/c)>) UND [Ä](ä.html)\n"),
        ("Schreib <info@example.com> und `` `x` `` hier\n", "SCHREIB <info@example.com> UND `` `x` `` HIER\n"),
        ('+++\ntitle = "Ein Haus"\n+++\n\nEin Hund.\n', '+++\ntitle = "Ein Haus"\n+++\n\nEIN HUND.\n'),
        ("> " * 30 + "Tief unten.\n", "> " * 30 + "TIEF UNTEN.\n"),
        (
            'Das <span class="kw">style</span>-Attribut und <b>fett <i>schräg</i></b>.\n',
            'DAS <span class="kw">STYLE-ATTRIBUT</span> UND <b>FETT <i>SCHRÄG</i></b>.\n',
        ),
        ("Eine Frau mit Essen *hält.*\n", "EINE FRAU MIT ESSEN *HÄLT.*\n"),
    ],
)
def test_markdown_comes_back_as_the_same_tree_with_only_its_text_changed(markdown, expected):
    """Escapes stay escapes, a link's target and an autolink stay as written, a code span
    keeps its fence, TOML front matter and deep quotes are read, inline HTML keeps its
    pairs: the output parses to the same elements as the input."""
    written = translated("a.md", markdown.encode()).decode()
    assert written == expected
    assert _markdown_shape(written) == _markdown_shape(markdown)


def test_a_list_item_whose_text_is_its_own_number_keeps_its_marker():
    assert translated("a.md", b"1. 1\n2. 2\n", exclaimed) == b"1. 1!\n2. 2!\n"


def test_captions_keep_their_blocks_cues_and_tags_and_share_a_sentence_over_its_cues():
    import webvtt

    written = translated("film.vtt", CAPTIONS.encode()).decode()
    before, after = webvtt.from_string(CAPTIONS), webvtt.from_string(written)
    assert [(c.identifier, str(c.start), str(c.end), str(c.settings)) for c in after.captions] == [
        (c.identifier, str(c.start), str(c.end), str(c.settings)) for c in before.captions
    ]
    assert written.split("erster")[0] == CAPTIONS.split("erster")[0]  # header, NOTE and STYLE as written
    for code in (
        "<v Roger Bingham>",
        "<c.gelb>",
        "</c>",
        "<i>",
        "</i>",
        "<00:00:03.000>",
        "<rt>kan</rt>",
        "<v.laut Mary>",
    ):
        assert written.count(code) == 1, code
    assert "WIR" in after.captions[0].raw_text + after.captions[1].raw_text and "&amp;" in written
    assert after.captions[2].raw_text == "<v.laut Mary>HALLO!"


def test_resource_files_get_their_messages_translated_and_keep_keys_placeholders_and_choices():
    from ruamel.yaml import YAML

    out = {name: json.loads(translated(name, DOCUMENTS[name])) for name in RESOURCES}
    i18next = out["de.json"]
    assert i18next["liste"] == ["EIN HUND.", "ZWEI KATZEN."]
    assert i18next["gruss"] == "HALLO {{name}}, WILLKOMMEN!"  # punctuation against a placeholder, as the source has it
    assert " ".join(i18next["konto"]["neu"].split()) == (
        "SIE HABEN {count, plural, one {# NEUE NACHRICHT} other {# NEUE NACHRICHTEN}} VON :user."
    )
    assert "".join(i18next["link"].split()) == "KLICKENSIE<b>HIER</b>,UM%sZUÖFFNEN."
    assert out["app_de.arb"] == {
        "@@locale": "en",
        "titel": "MEINE ANWENDUNG",
        "@titel": RESOURCES["app_de.arb"]["@titel"],
    }
    chrome = out["messages.json"]["name"]
    assert chrome == {**RESOURCES["messages.json"]["name"], "message": "EIN HUND FÜR $USER$"}
    read = read_document(LOCALE.encode(), name="de.yml", options=ReadOptions("en", source_language="de"))
    written = translate_read([read], uppercased, language="de")[0].data.decode()
    assert written.splitlines()[:3] == ["# Rails", "en:", '  hallo: "HALLO WELT"   # ein Gruß']
    tree = YAML(typ="safe").load(written)["en"]
    assert tree["anzahl"] == 3 and tree["datum"]["reihe"] == [":year", ":month"]
    assert tree["datum"]["format"].split() == ["HEUTE", "IST", "%{tag}."]
    assert tree["basis"] == tree["wieder"] == {"ok": "KNOPF DRÜCKEN"} and "*basis" in written


def test_subtitles_keep_their_cues_and_timings_and_share_a_sentence_over_its_cues():
    text = translated("film.srt", DOCUMENTS["film.srt"]).decode()
    before, after = list(srt.parse(SUBTITLES)), list(srt.parse(text))
    assert [(c.index, c.start, c.end) for c in after] == [(c.index, c.start, c.end) for c in before]
    assert [c.content for c in after] == [
        "DER MANN GEHT",
        "<i>NACH HAUSE</i> MIT SEINEM HUND.",
        "DIE KATZE IST ROT & SCHWARZ.\nSIE SCHLÄFT.",
    ]
    assert "\r\n" in text


def test_a_catalogue_gets_its_empty_messages_translated_fuzzy_with_placeholders_exact(tmp_path):
    text = translated("app.po", DOCUMENTS["app.po"]).decode()
    assert 'msgstr "HALLO %(name)s, DER MANN GEHT <b>NACH HAUSE</b>."' in text
    assert 'msgstr "HUND & KATZE {count} LAUFEN."' in text
    assert 'msgstr "Already done"' in text and 'msgstr[0] "EIN HUND"' in text and 'msgstr[1] "%d HUNDE"' in text
    assert text.count("fuzzy") == 3
    (tmp_path / "app.po").write_text(text, encoding="utf-8")  # gettext: the Makefile installs it
    checked = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", str(tmp_path / "app.po")], capture_output=True)
    assert checked.returncode == 0, checked.stderr.decode()


HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset={charset}\\n"\n{plurals}\n'
PLURALS = '"Plural-Forms: nplurals=1; plural=0;\\n"\n'


@pytest.mark.parametrize(
    ("catalogue", "charset", "expected"),
    [
        # entries with no blank line between them: each written in place of its own lines, none lost
        (
            '#: a.py:1\nmsgid "Ein Hund"\nmsgstr ""\n#: a.py:2\nmsgid "Eine Katze"\nmsgstr ""\n'
            'msgid "Haus"\nmsgstr ""\n',
            "UTF-8",
            '#: a.py:1\n#, fuzzy\nmsgid "Ein Hund"\nmsgstr "EIN HUND"\n#: a.py:2\n#, fuzzy\nmsgid "Eine Katze"\n'
            'msgstr "EINE KATZE"\n#, fuzzy\nmsgid "Haus"\nmsgstr "HAUS"\n',
        ),
        # a message's leading and trailing white space is its translation's too
        ('msgid "Ein Hund\\n"\nmsgstr ""\n', "UTF-8", '#, fuzzy\nmsgid "Ein Hund\\n"\nmsgstr "EIN HUND\\n"\n'),
        ('msgid "\\tEin Hund"\nmsgstr ""\n', "UTF-8", '#, fuzzy\nmsgid "\\tEin Hund"\nmsgstr "\\tEIN HUND"\n'),
        # as many plural forms as the header says
        (
            'msgid "Ein Hund"\nmsgid_plural "%d Hunde"\nmsgstr[0] ""\n',
            "UTF-8" + PLURALS,
            '#, fuzzy\nmsgid "Ein Hund"\nmsgid_plural "%d Hunde"\nmsgstr[0] "EIN HUND"\n',
        ),
        # read and written in the header's charset
        (
            'msgid "Ein Hund läuft"\nmsgstr ""\n',
            "ISO-8859-1",
            '#, fuzzy\nmsgid "Ein Hund läuft"\nmsgstr "EIN HUND LÄUFT"\n',
        ),
        # a U+2028 is a character of its message, not a line's end
        ('msgid "Ein\u2028Hund"\nmsgstr ""\n', "UTF-8", '#, fuzzy\nmsgid ""\n"Ein\u2028"\n"Hund"\nmsgstr "EIN HUND"\n'),
        # printf's length modifiers, a star and %% are placeholders; one inside a tag stays in it
        (
            '#, c-format\nmsgid "%ld und %zu mit %*d zu %%"\nmsgstr ""\n',
            "UTF-8",
            '#, c-format, fuzzy\nmsgid "%ld und %zu mit %*d zu %%"\nmsgstr "%ld UND %zu MIT %*d ZU %%"\n',
        ),
        (
            '#, python-format\nmsgid "Siehe <a href=\\"%(url)s\\">den Hund</a>"\nmsgstr ""\n',
            "UTF-8",
            '#, python-format, fuzzy\nmsgid "Siehe <a href=\\"%(url)s\\">den Hund</a>"\n'
            'msgstr "SIEHE <a href=\\"%(url)s\\">DEN HUND</a>"\n',
        ),
    ],
)
def test_a_catalogue_s_entries_are_written_in_their_place_and_msgfmt_checks_them(
    tmp_path, catalogue, charset, expected
):
    encoding = "latin-1" if charset == "ISO-8859-1" else "utf-8"
    charset, _, plurals = charset.partition('"')
    header = HEADER.format(charset=charset, plurals=f'"{plurals}' if plurals else "")
    written = translated("app.po", (header + "\n" + catalogue).encode(encoding))
    assert written.decode(encoding) == header + "\n" + expected
    (tmp_path / "app.po").write_bytes(written)
    checked = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", str(tmp_path / "app.po")], capture_output=True)
    assert checked.returncode == 0, checked.stderr.decode()


def test_a_catalogue_without_a_header_gets_each_translation_in_its_own_entry():
    written = translated("app.po", b'msgid "Ein Hund"\nmsgstr ""\n\nmsgid "Eine Katze"\nmsgstr ""\n').decode()
    assert (
        written
        == '#, fuzzy\nmsgid "Ein Hund"\nmsgstr "EIN HUND"\n\n#, fuzzy\nmsgid "Eine Katze"\nmsgstr "EINE KATZE"\n'
    )


def test_a_word_document_keeps_its_formatting_fields_and_parts_and_translates_every_story():
    import docx

    data = DOCUMENTS["letter.docx"]
    written = translated("letter.docx", data)
    document = docx.Document(io.BytesIO(written))
    first = document.paragraphs[0]
    assert first.text == "EIN MANN MIT ROTEM HUT. ER GEHT NACH HAUSE."
    assert [run.text for run in first.runs if run.bold] == ["ROTEM"]
    assert document.paragraphs[1].text == "SIEHE EIN LINK"
    assert [cell.text for cell in document.tables[0].rows[0].cells] == ["DER HUND LÄUFT.", "DIE KATZE SCHLÄFT."]
    section = document.sections[0]
    assert (section.header.paragraphs[0].text, section.footer.paragraphs[0].text) == (
        "EINE KOPFZEILE.",
        "EINE FUSSZEILE.",
    )
    body = zipfile.ZipFile(io.BytesIO(written)).read("word/document.xml").decode()
    assert "<w:instrText> PAGE </w:instrText>" in body and 'r:id="rId99"' in body
    before, after = zipfile.ZipFile(io.BytesIO(data)), zipfile.ZipFile(io.BytesIO(written))
    assert before.namelist() == after.namelist()
    changed = {"word/document.xml", "word/header1.xml", "word/footer1.xml"}
    assert all(before.read(name) == after.read(name) for name in before.namelist() if name not in changed)


def test_plain_text_is_translated_by_paragraphs_keeping_what_lies_between():
    text = translated("notes.txt", DOCUMENTS["notes.txt"])
    assert text == codecs.BOM_UTF8 + "EIN MANN GEHT. ER LÄUFT SCHNELL.\r\n\r\n\r\n   ZWEITER ABSATZ.\r\n".encode()


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "bad.srt",
            b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:00:03,000 --> 0:xx\nHo\n",
            r"bad.srt: line 5: not a",
        ),
        ("short.srt", b"1\n00:00:01 --> 00:00:02,000\nHi\n", r"short.srt: line 2: cue 1: timestamp '00:00:01' is not"),
        (
            "minutes.srt",
            b"1\n00:00:01,000 --> 00:00:02,000\nHi.\n\n2\n00:99:00,000 --> 01:40:00,000\nHo\n",
            r"minutes.srt: line 6: cue 2: timestamp '00:99:00,000' is not",
        ),
        ("back.srt", b"1\n00:00:05,000 --> 00:00:02,000\nHi\n", r"back.srt: cue 1: it ends before it starts"),
        ("huge.srt", b"1\n" + b"9" * 30 + b":00:00,000 --> 00:00:02,000\nHi\n", r"huge.srt: not a subtitle file"),
        ("bad.po", b'msgid "a"\nmsgstr "b"\nmsgid\n', r"bad.po: not a PO catalogue"),
        ("bad.vtt", b"1\n00:00:01.000 --> 00:00:02.000\nHallo\n", r"bad.vtt: not a WebVTT file"),
        (
            "late.vtt",
            b"WEBVTT\n\n00:01.000 --> 00:02.000\nJa.\n\n00:66:40.000 --> 00:66:42.000\nNein.\n",
            r"late.vtt: line 6: a cue's timings WebVTT does not read",
        ),
        ("count.json", b'{"a": {"b": 3}}', r"count.json: a.b: a int is not a message"),
        ("list.json", b'{"a": [{"b": "x"}]}', r"list.json: a: an array of other values than texts is not a message"),
        ("twice.json", b'{"a": "x", "a": "y"}', r"twice.json: key 'a' is given twice"),
        ("broken.json", b'{"a": "x",\n}', r"broken.json: line 2: not JSON"),
        ("broken.yml", b"a: [b\n", r"broken.yml: not YAML"),
        ("open.po", b'msgid "a"\nmsgstr ""\n\nmsgid "Ein Hund\nmsgstr ""\n', r"open.po: line 4: not a string closed"),
        ("bad.html", b"<p>\xff\xfe</p>", r"bad.html: byte 3 is not utf-8"),
        ("bad.md", b"# \xc3(", r"bad.md: byte 2 is not utf-8"),
        ("file.xyz", b"text", r"file.xyz: no format reads .xyz files"),
        ("bad.docx", b"PK\x03\x04 damaged", r"bad.docx: not a Word document"),
        ("laughs.docx", None, r"laughs.docx: word/document.xml: declares a DTD"),
    ],
)
def test_a_bad_document_is_refused_in_one_line_naming_it(name, data, message):
    if data is None:  # the billion laughs, in a Word document's body
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as package:
            laughs = '<!DOCTYPE w [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><w>&b;</w>'
            package.writestr("word/document.xml", laughs)
        data = buffer.getvalue()
    with pytest.raises(DocumentError, match=message) as caught:
        read_document(data, name=name, options=ReadOptions("en"))
    assert "\n" not in str(caught.value)


def test_every_format_is_found_by_its_extensions():
    for entry in formats().values():
        for extension in entry.extensions:
            assert format_of(f"x.{extension.upper()}") is entry


def test_a_unit_s_sentences_are_placed_by_their_word_weights_taken_together():
    import numpy as np

    from rnnsearch.markup import WordWeights

    def weighed(sentences):
        return [
            SentenceTranslation(each.words, each.links, WordWeights(np.eye(len(each.words), dtype=np.float32)))
            for each in uppercased(sentences)
        ]

    page = translated("a.html", "<p>Der Mann <b>geht. Er</b> läuft.</p>".encode(), weighed)
    assert page.decode() == "<p>DER MANN <b>GEHT. ER</b> LÄUFT.</p>"


def test_a_subtitle_file_that_mixes_line_endings_gets_every_cue_translated_in_place():
    text = translated("mixed.srt", DOCUMENTS["mixed.srt"]).decode()
    assert [cue.content for cue in srt.parse(text)][-1] == "ZWEI ZEILEN\nHIER."


@pytest.mark.parametrize(
    "page",
    [
        "<p>" + "<span>" * 5_000 + "tief" + "</span>" * 5_000 + "</p>",  # deeper than Python's recursion limit
        "<p>" + "<b>ein</b> " * 10_000 + "</p>",
        "<p>Ein Hund " + "<a " * 20_000 + "</p>",  # unclosed tags: text, read once
    ],
    ids=["deep", "siblings", "unclosed"],
)
def test_a_hostile_page_is_translated_with_every_tag_kept(page):
    written = translated("hostile.html", page.encode()).decode()
    assert _tags(written) == _tags(page) and written != page


REAL = Path(__file__).resolve().parent.parent / "data" / "documents"
"""Real documents, permissively licensed (their LICENSES.md says whose and which)."""


class _Attributes(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _start_tags(page: str) -> list[tuple[str, dict]]:
    parser = _Attributes()
    parser.feed(page)
    return parser.tags


def _kept(page: str) -> list[str]:
    """What a page keeps untranslated: its pre, code, script and style elements and comments, as written."""
    from rnnsearch.markup.events import events

    kept, open_at, depth = [], None, 0
    for event in events(page):
        if open_at is None and event.kind == "other":
            kept.append(page[event.start : event.end])
        elif event.kind == "start" and event.tag in ("pre", "code", "script", "style"):
            open_at = event.start if open_at is None else open_at
            depth += 1
        elif event.kind == "end" and event.tag in ("pre", "code", "script", "style") and open_at is not None:
            depth -= 1
            if depth == 0:
                kept.append(page[open_at : event.end])
                open_at = None
    return kept


@pytest.mark.parametrize("name", ["libffi-the-basics.html", "libffi-closure-example.html"])
def test_a_real_page_keeps_what_it_protects_and_translates_every_attribute(name):
    from rnnsearch.documents.html_page import TRANSLATED_ATTRIBUTES

    source = (REAL / name).read_bytes()
    assert translated(name, source, copied, unchanged_ok=True) == source
    page, written = source.decode(), translated(name, source).decode()
    assert _tags(written) == _tags(page)
    assert _kept(written) == _kept(page) and _kept(page)
    translated_attributes = 0
    for (tag, before), (same_tag, after) in zip(_start_tags(page), _start_tags(written), strict=True):
        assert tag == same_tag and after.pop("lang", None) == ("en" if tag == "html" else before.pop("lang", None))
        assert before.keys() == after.keys()
        for key, value in before.items():
            description = (tag, key, before.get("name")) == ("meta", "content", "description")
            if (key in TRANSLATED_ATTRIBUTES or description) and value and value.strip():
                assert after[key] == " ".join(value.split()).upper()
                translated_attributes += 1
            else:
                assert after[key] == value
    assert translated_attributes > 0


def test_a_real_markdown_file_keeps_its_code_and_a_translated_catalogue_stays_as_it_was():
    from markdown_it import MarkdownIt

    source = (REAL / "markdown-it-texmath.md").read_bytes()
    assert translated("readme.md", source, copied, unchanged_ok=True) == source
    written = translated("readme.md", source).decode()

    def code(text):
        return [t.content for t in MarkdownIt("commonmark").parse(text) if t.type in ("fence", "code_block")]

    assert code(written) == code(source.decode()) and code(written)
    catalogue = (REAL / "tornado-test.po").read_bytes()  # every message has its translation already
    assert translated("tornado.po", catalogue, unchanged_ok=True) == catalogue
    with pytest.raises(DocumentError, match="tornado.po: it holds nothing to translate"):
        translated("tornado.po", catalogue)
    read = read_document(catalogue, name="tornado.po", options=ReadOptions("fr", retranslate=True))
    [again] = translate_read([read], uppercased, language="en")
    assert 'msgid "school"\nmsgstr "SCHOOL"' in again.data.decode() and "école" not in again.data.decode()


def test_translate_yes_inside_translate_no_is_translated_again_as_the_standard_inherits_it():
    page = (
        '<div translate="no"><p>Bleibt so.</p><p translate="yes">Wird <b>wieder</b> gelesen.</p>'
        '<pre translate="yes">Bleibt</pre><span translate="yes">Auch <i translate="no">nicht</i> das.</span>'
        "<p>Bleibt auch.</p></div><p>Danach.</p>"
    )
    assert translated("a.html", page.encode()).decode() == (
        '<div translate="no"><p>Bleibt so.</p><p translate="yes">WIRD <b>WIEDER</b> GELESEN.</p>'
        '<pre translate="yes">Bleibt</pre><span translate="yes">AUCH <i translate="no">nicht</i> DAS.</span>'
        "<p>Bleibt auch.</p></div><p>DANACH.</p>"
    )


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        # a kept element's attributes and its start tag stay as written, on an inline or a block element
        (
            '<p>Ein <span translate="no" title="Ein kleiner Hund">Rudi</span> läuft.</p>',
            '<p>EIN <span translate="no" title="Ein kleiner Hund">Rudi</span> LÄUFT.</p>',
        ),
        (
            '<div TRANSLATE="NO" title="Ein Hund"><p>Bleibt</p></div><p class="notranslate" title="Ein Hund">Ja.</p>',
            None,
        ),
        # what an inline element kept whole holds, attributes and all
        (
            '<p>Mit <code><abbr title="Ein Hund">HTML</abbr></code> und <span translate="no"><img alt="Ein Bild">'
            "</span> geht es.</p>",
            '<p>MIT <code><abbr title="Ein Hund">HTML</abbr></code> UND <span translate="no"><img alt="Ein Bild">'
            "</span> GEHT ES.</p>",
        ),
        # formulas and drawings are kept byte for byte inside the sentence around them
        (
            '<p>Die Formel <math><mi>x</mi><mo>=</mo><mn>2</mn></math> gilt, <svg viewBox="0 0 9 9"><text>Hallo'
            "</text></svg> auch.</p>",
            '<p>DIE FORMEL <math><mi>x</mi><mo>=</mo><mn>2</mn></math> GILT, <svg viewBox="0 0 9 9"><text>Hallo'
            "</text></svg> AUCH.</p>",
        ),
        # a picture's or a video's sources do not cut the sentence
        (
            '<p>Ein <picture><source srcset="a.webp"><img alt="Ein Hund"></picture> und <video><source src="v">'
            "Kein Video</video> dort.</p>",
            '<p>EIN <picture><source srcset="a.webp"><img alt="EIN HUND"></picture>UND <video><source src="v">'
            "KEIN VIDEO</video> DORT.</p>",
        ),
        # the page's language in both its attributes; a repeated attribute: the first is translated, the rest
        # and every other attribute's name and quotes as written
        (
            '<html lang="de" xml:lang="de"><p><img ALT=Hund alt=Katze data-X=\'1\'> Ein Hund.</p></html>',
            '<html lang="en" xml:lang="en"><p><img ALT="HUND" alt=Katze data-X=\'1\'>EIN HUND.</p></html>',
        ),
    ],
)
def test_what_a_page_keeps_comes_back_as_written_and_its_attributes_once_each(page, expected):
    written = translated("a.html", (page + "<p>Ein Hund.</p>").encode()).decode()
    assert written == (expected or page) + "<p>EIN HUND.</p>"


def test_a_kept_element_without_its_end_tag_ends_where_html_ends_it():
    """A `<p translate="no">` before paragraphs without end tags left the rest of the page
    untranslated: it ends at the next block, as the HTML standard's parser ends it."""
    page = (
        '<body><p translate="no">Bleibt so.<p>Ein Hund.<ul><li class="notranslate">Bleibt<li>Wird gelesen</ul>'
        "<table><tr><td translate=no>Bleibt<td>Zelle</table><p>Ende.</body>"
    )
    assert translated("a.html", page.encode()).decode() == (
        '<body><p translate="no">Bleibt so.<p>EIN HUND.<ul><li class="notranslate">Bleibt<li>WIRD GELESEN</ul>'
        "<table><tr><td translate=no>Bleibt<td>ZELLE</table><p>ENDE.</body>"
    )


def test_pandoc_reads_a_translated_word_document_as_the_source_s_text_translated(tmp_path):
    def read(data: bytes) -> str:  # pandoc: the Makefile installs it
        (tmp_path / "letter.docx").write_bytes(data)
        command = ["pandoc", "-f", "docx", "-t", "plain", "--wrap=none", str(tmp_path / "letter.docx")]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        return done.stdout

    source = DOCUMENTS["letter.docx"]
    text = read(source)
    assert "Ein Mann mit rotem Hut." in text and read(translated("letter.docx", source)) == text.upper()


def test_a_word_document_s_text_boxes_tracked_changes_and_footnotes_are_translated():
    import docx
    from docx.oxml import parse_xml

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    box = "<w:txbxContent><w:p><w:r><w:t>Im Kasten.</w:t></w:r></w:p></w:txbxContent>"
    document = docx.Document()
    body = document.element.body
    body.append(
        parse_xml(
            f"<w:p {w} {mc}><w:r><w:t>Vor dem Kasten.</w:t></w:r><w:r><mc:AlternateContent>"
            f'<mc:Choice Requires="wps"><w:drawing>{box}</w:drawing></mc:Choice>'
            f"<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"
        )
    )
    body.append(
        parse_xml(
            f'<w:p {w}><w:r><w:t xml:space="preserve">Ein </w:t></w:r><w:ins w:id="1" w:author="A"><w:r>'
            '<w:t>neues</w:t></w:r></w:ins><w:del w:id="2" w:author="A"><w:r><w:delText>altes</w:delText></w:r>'
            '</w:del><w:r><w:t xml:space="preserve"> Wort.</w:t></w:r></w:p>'
        )
    )
    buffer = io.BytesIO()
    document.save(buffer)
    with zipfile.ZipFile(buffer, "a") as package:
        package.writestr(
            "word/footnotes.xml",
            f'<w:footnotes {w}><w:footnote w:id="1"><w:p><w:r><w:t>Eine Fußnote.</w:t></w:r></w:p></w:footnote>'
            "</w:footnotes>",
        )
    written = zipfile.ZipFile(io.BytesIO(translated("boxes.docx", buffer.getvalue())))
    body_xml, notes = written.read("word/document.xml").decode(), written.read("word/footnotes.xml").decode()
    assert body_xml.count("IM KASTEN.") == 2 and "Im Kasten" not in body_xml
    assert "VOR DEM KASTEN." in body_xml and body_xml.index("VOR DEM KASTEN.") < body_xml.index("mc:AlternateContent")
    assert "NEUES" in body_xml and "<w:delText>altes</w:delText>" in body_xml and "WORT." in body_xml
    assert "EINE FUSSNOTE." in notes


def test_a_word_package_that_unpacks_past_the_bound_is_refused_before_any_part_is_read(monkeypatch):
    import rnnsearch.documents.packages as package

    monkeypatch.setattr(package, "MAX_DOCUMENT_BYTES", 1_000)  # a zip bomb's parts, in small
    with pytest.raises(DocumentError, match=r"bomb.docx: its parts unpack to [\d,]+ bytes, more than the 1,000"):
        read_document(DOCUMENTS["letter.docx"], name="bomb.docx", options=ReadOptions("en"))


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_bytes_that_name_a_file_are_read_as_the_document_never_as_its_path(name, tmp_path):
    """A document's bytes are its content: bytes that spell the path of an existing
    document are that text (or refused), never the file's content read from disk."""
    path = tmp_path / name
    path.write_bytes(DOCUMENTS[name])
    try:
        read = read_document(str(path).encode(), name=name, options=ReadOptions("en"))
    except DocumentError as error:
        assert name in str(error)
        return
    assert all("Mann" not in unit.markup and "Hund" not in unit.markup for unit in read[2].units)


def _patched_package(part: str, *, flags: int = 0, method: int | None = None, crc: int | None = None) -> bytes:
    """letter.docx with `part` stored, then its zip headers (local and central) patched:
    flag bits set, another compression method, another CRC, as a hostile package has."""
    import struct

    source = zipfile.ZipFile(io.BytesIO(DOCUMENTS["letter.docx"]))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        for member in source.infolist():
            method_used = zipfile.ZIP_STORED if member.filename == part else zipfile.ZIP_DEFLATED
            written.writestr(member.filename, source.read(member.filename), compress_type=method_used)
    data = bytearray(buffer.getvalue())
    name = part.encode()
    for signature, at_flags, at_method, at_crc, at_name in (
        (b"PK\x03\x04", 6, 8, 14, 30),
        (b"PK\x01\x02", 8, 10, 16, 46),
    ):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + at_name : start + at_name + len(name)] == name:
                flag = struct.unpack_from("<H", data, start + at_flags)[0]
                struct.pack_into("<H", data, start + at_flags, flag | flags)
                if method is not None:
                    struct.pack_into("<H", data, start + at_method, method)
                if crc is not None:
                    struct.pack_into("<I", data, start + at_crc, crc)
            start += 4
    return bytes(data)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"method": 98}, r"word/styles.xml: compressed by zip method 98, not Word's"),  # PPMd
        ({"flags": 0x1}, r"word/styles.xml: encrypted"),  # ZipCrypto
        ({"crc": 0x12345678}, r"word/styles.xml: cannot be unpacked \(Bad CRC-32"),
        ({"crc": 0x12345678, "part": "word/document.xml"}, r"word/document.xml: cannot be unpacked \(Bad CRC-32"),
    ],
)
def test_a_hostile_word_package_is_refused_in_one_line_before_anything_is_translated(patch, message):
    """Every part is unpacked and checked as the package is read: a part read only when
    the translation was written (styles) ended a whole translation in a traceback."""
    data = _patched_package(patch.pop("part", "word/styles.xml"), **patch)
    with pytest.raises(DocumentError, match=rf"^hostile.docx: {message}"):
        read_document(data, name="hostile.docx", options=ReadOptions("en"))


def test_the_api_and_the_command_load_no_document_library_until_a_document_is_read():
    """A plain `translate`, a speech model or `rnnsearch --help` reads no document: the
    formats' libraries loaded with the API cost every call their import time."""
    libraries = ("lxml", "markdown_it", "srt", "polib", "langcodes", "webvtt", "ruamel", "pyicumessageformat")
    probe = (
        "import sys; from rnnsearch.translation.translator import load; from rnnsearch.cli import build_parser; "
        "build_parser(); "
        f"print(*[name for name in {libraries!r} if name in sys.modules])"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []


def _word_body(*paragraphs: str) -> bytes:
    """A Word document whose body is `paragraphs`, each the inside of a w:p."""
    import docx
    from docx.oxml import parse_xml

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    document = docx.Document()
    for paragraph in paragraphs:
        document.element.body.append(parse_xml(f"<w:p {w}>{paragraph}</w:p>"))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _word_paragraphs(data: bytes) -> list:
    from lxml import etree

    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
    return list(body.iter("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}p"))


def _texts(element) -> str:
    return "".join(element.itertext())


def _w(name: str) -> str:
    return "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}" + name


def test_a_word_paragraph_keeps_its_fields_ranges_controls_and_insertions_around_their_words():
    """Each is an element over words: none comes back empty, a complex field's characters
    stay in order, a tracked insertion stays an insertion."""
    run = "<w:r><w:t xml:space='preserve'>{}</w:t></w:r>"
    data = _word_body(
        run.format("Ein ") + '<w:bookmarkStart w:id="0" w:name="m"/>' + run.format("Hund")
        + '<w:bookmarkEnd w:id="0"/>' + run.format(" und ") + '<w:commentRangeStart w:id="1"/>'
        + run.format("eine Katze") + '<w:commentRangeEnd w:id="1"/>' + run.format(" laufen."),
        run.format("Seite ") + '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> REF x </w:instrText>'
        '</w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>' + run.format("der Hund")
        + '<w:r><w:fldChar w:fldCharType="end"/></w:r>' + run.format(" hier."),
        run.format("Ein ") + '<w:fldSimple w:instr=" PAGE ">' + run.format("Hund") + "</w:fldSimple>"
        + '<w:sdt><w:sdtPr><w:alias w:val="x"/></w:sdtPr><w:sdtContent>' + run.format(" und Katze")
        + '</w:sdtContent></w:sdt><w:ins w:id="5" w:author="A">' + run.format(" laufen") + "</w:ins>"
        + "<w:smartTag w:uri='u' w:element='e'>" + run.format(" heute.") + "</w:smartTag>",
    )  # fmt: skip
    first, second, third = _word_paragraphs(translated("a.docx", data))[-3:]
    marks = [(child.tag, _texts(child)) for child in first if child.tag != _w("pPr")]
    assert [tag for tag, _ in marks].count(_w("bookmarkStart")) == 1
    between = first[[c.tag for c in first].index(_w("bookmarkStart")) : [c.tag for c in first].index(_w("bookmarkEnd"))]
    assert "HUND" in "".join(_texts(c) for c in between)
    commented = first[
        [c.tag for c in first].index(_w("commentRangeStart")) : [c.tag for c in first].index(_w("commentRangeEnd"))
    ]
    assert "KATZE" in "".join(_texts(c) for c in commented)
    kinds = [c.get(_w("fldCharType")) for c in second.iter(_w("fldChar"))]
    assert kinds == ["begin", "separate", "end"] and "REF x" in _texts(second)
    order = [c.tag for c in second.iter() if c.tag in (_w("fldChar"), _w("instrText"))]
    assert order == [_w("fldChar"), _w("instrText"), _w("fldChar"), _w("fldChar")]
    assert _texts(second).index("DER HUND") > _texts(second).index("REF x")
    assert all(_texts(third.find(_w(name))).strip() for name in ("fldSimple", "sdt", "ins", "smartTag"))
    assert third.find(_w("sdt")).find(_w("sdtPr")) is not None and _texts(third).count("HUND") == 1


def test_a_word_paragraph_with_layout_hints_or_symbols_is_translated_and_unaligned_words_take_its_main_look():
    bold = "<w:rPr><w:b/></w:rPr>"
    data = _word_body(
        "<w:r><w:lastRenderedPageBreak/><w:t>Ein Hund läuft.</w:t></w:r>",
        '<w:r><w:t xml:space="preserve">Ein Hund </w:t><w:sym w:font="Wingdings" w:char="F04A"/></w:r>',
        f'<w:r>{bold}<w:t xml:space="preserve">Achtung: </w:t></w:r><w:r><w:t>Ein Hund läuft schnell.</w:t></w:r>',
    )

    def with_a_word_more(sentences):  # the translation's last word is aligned to nothing
        return [
            SentenceTranslation([*(w.upper() for w in words), "JA"], [(k, k) for k in range(len(words))])
            for words in map(str.split, sentences)
        ]

    first, second, third = _word_paragraphs(translated("a.docx", data, with_a_word_more))[-3:]
    assert _texts(first) == "EIN HUND LÄUFT. JA" and first.find(f".//{_w('lastRenderedPageBreak')}") is None
    assert "EIN HUND" in _texts(second) and second.find(f".//{_w('sym')}") is not None
    runs = {_texts(run).strip(): run.find(f"{_w('rPr')}/{_w('b')}") is not None for run in third.iter(_w("r"))}
    assert runs["ACHTUNG:"] and not any(bold for text, bold in runs.items() if "JA" in text)


def test_word_code_is_kept_whole_by_its_style_or_its_monospace_font():
    code = "<w:rPr><w:rStyle w:val='VerbatimChar'/></w:rPr>"
    mono = "<w:rPr><w:rFonts w:ascii='Consolas' w:hAnsi='Consolas'/></w:rPr>"
    data = _word_body(
        f"<w:r><w:t xml:space='preserve'>Die Funktion </w:t></w:r><w:r>{code}<w:t>print(x)</w:t></w:r>"
        f"<w:r><w:t xml:space='preserve'> und </w:t></w:r><w:r>{mono}<w:t>len(y)</w:t></w:r>"
        "<w:r><w:t xml:space='preserve'> laufen.</w:t></w:r>",
        "<w:pPr><w:pStyle w:val='SourceCode'/></w:pPr><w:r><w:t>body { color: red }</w:t></w:r>",
    )
    first, second = _word_paragraphs(translated("a.docx", data))[-2:]
    assert _texts(first) == "DIE FUNKTION print(x) UND len(y) LAUFEN."  # code kept, a word of its own
    assert _texts(second) == "body { color: red }"


def test_a_file_larger_than_a_document_may_be_is_refused_by_its_size_before_it_is_read(tmp_path, monkeypatch):
    import rnnsearch.documents.translating as documents

    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 100)
    (tmp_path / "big.html").write_bytes(b"<p>Ein Hund.</p>" * 100)
    with pytest.raises(DocumentError, match=r"big.html: 1,600 bytes is more than the 100 a document may have"):
        read_document(tmp_path / "big.html", options=ReadOptions("en"))


def test_a_word_part_of_more_elements_than_a_part_may_have_is_refused_before_its_tree_is_built(monkeypatch):
    """A package of a few hundred kilobytes unpacking to millions of empty paragraphs
    took gigabytes: its elements are counted by a streaming pass first."""
    import rnnsearch.documents.packages as package

    monkeypatch.setattr(package, "MAX_PART_ELEMENTS", 200)
    source = zipfile.ZipFile(io.BytesIO(DOCUMENTS["letter.docx"]))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as written:
        for member in source.infolist():
            data = source.read(member.filename)
            if member.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + b"<w:p/>" * 1000)
            written.writestr(member.filename, data)
    with pytest.raises(DocumentError, match=r"^empty.docx: word/document.xml: more than the 200 elements a part"):
        read_document(buffer.getvalue(), name="empty.docx", options=ReadOptions("en"))


def test_formatting_a_translation_has_too_few_words_for_is_counted_in_the_summary():
    def one_word(sentences):
        return [SentenceTranslation(["HUND"], [(0, 0)]) for _ in sentences]

    read = read_document(b"<p><b>Ein</b> <i>Hund</i> <u>rennt</u></p>", name="a.html", options=ReadOptions("en"))
    [document] = translate_read([read], one_word, language="de")
    assert document.emptied == 2 and document.summary.endswith(
        "; 2 elements left with no word (their translation had too few words)"
    )
    [document] = translate_read(
        [read_document(DOCUMENTS["page.html"], name="p.html", options=ReadOptions("en"))], uppercased, language="de"
    )
    assert document.emptied == 0 and "no word" not in document.summary


def test_a_sentence_is_read_whole_with_its_kept_names_standing_where_they_stood():
    seen: list[str] = []

    def recording(sentences):
        seen.extend(sentences)
        return uppercased(sentences)

    page = b"<p>Die Spezifikation definiert <code>audio</code>- und <code>video</code>-Elemente neu.</p>"
    page += b"<p><code>x</code></p>"
    written = translated("a.html", page, recording).decode()
    assert seen == ["Die Spezifikation definiert audio - und video -Elemente neu."]  # no hole; a code alone is none
    assert written == (
        "<p>DIE SPEZIFIKATION DEFINIERT <code>audio</code>- UND <code>video</code>-ELEMENTE NEU.</p>"
        "<p><code>x</code></p>"
    )
