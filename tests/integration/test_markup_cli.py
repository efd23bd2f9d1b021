"""Marked-up text through `translate --markup`, `align --markup` and the Python API: the
text translated as without markup, and the markup put back, well-formed, every tag kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import rnnsearch
from rnnsearch.alignments.words import align_translation
from rnnsearch.markup import MAX_MARKUP_CHARS, MarkupError, parse, transfer
from tests.integration.conftest import run_cli, write_lines

TAGGED = [
    'Ein <b>kleines</b> Mädchen klettert in ein <a href="spiel.html?a=1&amp;b=2">Spielhaus</a> aus Holz.',
    "<p>Zwei Männer<br/>stehen &amp; lachen.</p>",
    "<i>Ein <b>Hund</b></i> läuft <span class='x'>durch den Schnee</span>.",
    "Ohne Markup.",
    "",
]


def tags(line: str, markup: str = "xml") -> Counter:
    return Counter((e.start_tag, e.end_tag) for e in parse(line, markup).elements)


@pytest.fixture(scope="module")
def translator(model_dir):
    return rnnsearch.load(model_dir, device="cpu")


def test_marked_up_text_is_translated_as_its_text_and_keeps_every_tag(translator):
    plain = [parse(line, "xml").text for line in TAGGED]
    expected = translator.translate(plain, beam_size=3, n_best=2)
    marked = translator.translate(TAGGED, beam_size=3, n_best=2, markup="xml")
    for line, ours, reference in zip(TAGGED, marked, expected, strict=True):
        for hypothesis, plain_hypothesis in zip(
            [ours, *ours.alternatives], [reference, *reference.alternatives], strict=True
        ):
            assert (hypothesis.text, hypothesis.score) == (plain_hypothesis.text, plain_hypothesis.score)
            assert parse(hypothesis.marked_up, "xml").words == hypothesis.text.split()
            assert tags(hypothesis.marked_up) == tags(line)
    assert marked[3].marked_up == marked[3].text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_markup_works_with_prefixes_and_ensembles(translator, model_dir):
    prefixes = ["A", "", "", "", ""]
    with_prefix = translator.translate(TAGGED, prefixes=prefixes, markup="xml")
    assert with_prefix[0].text.startswith("A") and tags(with_prefix[0].marked_up) == tags(TAGGED[0])
    ensemble = rnnsearch.load([model_dir, model_dir], device="cpu")
    for result, line in zip(ensemble.translate(TAGGED, markup="html"), TAGGED, strict=True):
        assert tags(result.marked_up, "html") == tags(line, "html")


def test_bad_markup_names_its_line_or_is_read_as_plain_text_when_lenient(translator):
    bad = ["Ein <b>Hund", "Ein Hund</i>."]
    with pytest.raises(MarkupError, match="input line 1: <b> is never closed"):
        translator.translate(bad, markup="xml")
    with pytest.raises(ValueError, match="input line 2: </i> closes nothing"):
        translator.translate(["Ein Hund.", bad[1]], markup="html")
    lenient = translator.translate(bad, markup="xml", lenient_markup=True)
    assert [t.marked_up for t in lenient] == [None, None]
    assert [t.text for t in lenient] == [t.text for t in translator.translate(bad)]
    with pytest.raises(ValueError, match="markup: 'markdown' is not one of xml, html"):
        translator.translate(TAGGED, markup="markdown")
    with pytest.raises(TypeError, match="lenient_markup: expected a bool"):
        translator.translate(TAGGED, markup="xml", lenient_markup="yes")


def test_translate_markup_writes_the_api_s_marked_up_lines(translator, model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", TAGGED)
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--markup", "xml", "--beam-size", 3)
    assert status == 0, err
    assert out.splitlines() == [t.marked_up for t in translator.translate(TAGGED, beam_size=3, markup="xml")]


def test_translate_markup_stops_at_a_bad_line_or_counts_it_when_lenient(translator, model_dir, tmp_path, capsys):
    lines = [TAGGED[0], "Ein <b>Hund", "Zwei &amp; <i>drei</i>."]
    source = write_lines(tmp_path / "in.de", lines)
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--markup", "xml")
    assert status == 1 and err.splitlines()[-1] == "rnnsearch: error: input line 2: <b> is never closed"
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--markup", "xml", "--lenient-markup")
    assert status == 0, err
    assert "1 lines with markup that is not well-formed read as plain text" in err
    written = out.splitlines()
    assert len(written) == 3 and tags(written[1]) == Counter() and tags(written[2]) == tags(lines[2])


def test_align_markup_puts_the_sources_markup_into_the_given_targets(translator, model_dir, tmp_path, capsys):
    sources = TAGGED[:3]
    targets = [
        "A little girl climbs into a wooden playhouse.",
        "Two men stand and laugh.",
        "A dog runs through the snow.",
    ]
    source, target = write_lines(tmp_path / "in.de", sources), write_lines(tmp_path / "in.en", targets)
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--markup", "xml")
    assert status == 0, err
    aligned = translator.align(sources, targets, markup="xml")
    assert out.splitlines() == [a.marked_up for a in aligned]
    for line, given, result in zip(sources, targets, aligned, strict=True):
        assert parse(result.marked_up, "xml").words == given.split() and tags(result.marked_up) == tags(line)
        assert result.source_words == parse(line, "xml").words
    plain = translator.align([parse(line, "xml").text for line in sources], targets)
    assert [a.pairs for a in aligned] == [a.pairs for a in plain]


@pytest.mark.parametrize("command", ["translate", "align"])
@pytest.mark.parametrize(
    ("flag", "what"),
    [
        (["--lenient-markup"], "reads lines"),
        (["--max-markup-chars", "10"], "reads lines"),
        (["--placement", "weights"], "places tags"),
    ],
)
def test_markup_flags_without_markup_are_refused(model_dir, tmp_path: Path, capsys, command, flag, what):
    source, target = write_lines(tmp_path / "s", ["Ein Hund."]), write_lines(tmp_path / "t", ["A dog."])
    files = ["-i", source] if command == "translate" else ["--src", source, "--tgt", target]
    status, _, err = run_cli(capsys, command, model_dir, *files, *flag)
    assert status == 1
    assert err.splitlines()[-1] == f"rnnsearch: error: {command}: {flag[0]} says how --markup {what}; give --markup too"


def test_the_api_refuses_markup_settings_without_markup(translator):
    with pytest.raises(ValueError, match="lenient_markup: it says how markup is read; give markup too"):
        translator.translate(["Ein Hund."], lenient_markup=True)
    with pytest.raises(ValueError, match="placement: it says how markup is placed; give markup too"):
        translator.align(["Ein Hund."], ["A dog."], placement="weights")
    with pytest.raises(ValueError, match="max_markup_chars: it bounds lines read as markup; give markup too"):
        translator.align(["Ein Hund."], ["A dog."], max_markup_chars=5)
    with pytest.raises(ValueError, match="max_markup_chars: it bounds lines read as markup; give markup too"):
        translator.translate(["Ein Hund."], max_markup_chars=MAX_MARKUP_CHARS)  # the default's value is still given


def test_a_marked_up_line_over_the_bound_is_one_error_naming_it_and_the_bound_can_be_raised(
    translator, model_dir, tmp_path, capsys
):
    lines = ["Ein <b>Hund</b>.", "Ein " + "<i></i>" * 20 + "Hund."]
    source = write_lines(tmp_path / "in.de", lines)
    status, _, err = run_cli(
        capsys, "translate", model_dir, "-i", source, "--markup", "html", "--max-markup-chars", 100
    )
    assert status == 1 and "Traceback" not in err
    assert err.splitlines()[-1] == (
        "rnnsearch: error: input line 2: 149 characters is more than the 100 a marked-up line may have "
        "(raise it with --max-markup-chars or max_markup_chars=)"
    )
    with pytest.raises(ValueError, match="input line 2: 149 characters is more than the 100"):
        translator.translate(lines, markup="html", max_markup_chars=100)
    status, out, err = run_cli(
        capsys, "translate", model_dir, "-i", source, "--markup", "html", "--max-markup-chars", 149
    )
    assert status == 0 and tags(out.splitlines()[1], "html") == tags(lines[1], "html")


def test_scripts_and_untranslated_elements_come_out_of_translation_byte_for_byte(translator):
    script = "<script>if (a < b && c) go();</script>"
    kept = '<code translate="no">rm -rf &amp;</code>'
    line = f"Ein {script}Hund {kept} läuft."
    result = translator.translate([line], markup="html")[0]
    assert result.source.split() == ["Ein", "Hund", "rm", "-rf", "&", "läuft."]  # a kept command stands in it
    assert script in result.marked_up and kept in result.marked_up


def test_tags_are_placed_by_the_very_links_written_beside_them(translator, model_dir, tmp_path, capsys):
    """With --reading input, the Pharaoh lines hold the input reading's links, and the
    tags are placed by those (they once were placed by the output reading's; the unit
    test of put_markup_back tells the readings apart, which this tiny model does not)."""
    source = write_lines(tmp_path / "in.de", TAGGED[:3])
    prefixes = ["A little girl climbs into a wooden", "Two men stand and", "A dog runs through"]
    links = tmp_path / "links.txt"
    command = ["translate", model_dir, "-i", source, "--markup", "xml", "--reading", "input"]
    status, out, err = run_cli(
        capsys, *command, "--prefix", write_lines(tmp_path / "prefixes", prefixes), "--hard-alignments", links
    )
    assert status == 0, err
    results = translator.translate(TAGGED[:3], markup="xml", reading="input", prefixes=prefixes)
    written = [[tuple(map(int, link.split("-"))) for link in line.split()] for line in links.read_text().splitlines()]
    assert written == [align_translation(t, reading="input").pairs for t in results] == [t.words.pairs for t in results]
    for line, result, marked_up, pairs in zip(TAGGED, results, out.splitlines(), written, strict=False):
        assert marked_up == result.marked_up == transfer(parse(line, "xml"), result.text.split(), pairs)


def test_translate_document_writes_every_document_translated_with_its_structure(model_dir, tmp_path, capsys):
    import srt

    from tests.unit.test_documents import CATALOGUE, HTML, SUBTITLES, _blocks

    inputs = {"page.html": HTML, "film.srt": SUBTITLES, "app.po": CATALOGUE, "notes.txt": "Ein Hund läuft. Er ist rot."}
    for name, text in inputs.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    paths = [tmp_path / name for name in inputs]
    torn = tmp_path / "out" / ".page.html.0123abcd.rnnsearch-tmp"  # a killed run's half-written page
    others = tmp_path / "out" / ".other.html.0123abcd.rnnsearch-tmp"  # another file's, perhaps being written
    for leftover in (torn, others):
        leftover.mkdir(parents=True)
        (leftover / "page.html").write_bytes(b"<p>torn")
    status, _, err = run_cli(capsys, "translate-document", model_dir, *paths, "-o", tmp_path / "out", "--beam-size", 2)
    assert status == 0, err
    assert not torn.exists() and others.exists()
    assert all(f"{path}: " in err for path in paths)
    page = (tmp_path / "out" / "page.html").read_text(encoding="utf-8")
    assert _blocks(page) == _blocks(HTML) and "<pre>  kein   Text\n  hier </pre>" in page and '<html lang="en">' in page
    cues = list(srt.parse((tmp_path / "out" / "film.srt").read_text(encoding="utf-8")))
    assert [(c.start, c.end) for c in cues] == [(c.start, c.end) for c in srt.parse(SUBTITLES)]
    assert all(c.content.strip() for c in cues)
    catalogue = (tmp_path / "out" / "app.po").read_text(encoding="utf-8")
    assert catalogue.count("%(name)s") == 2 and catalogue.count("{count}") == 2
    status, _, err = run_cli(capsys, "translate-document", model_dir, paths[0], paths[0], "-o", tmp_path / "out")
    assert status == 1 and err.count("\n") == 1 and "would both be written" in err
    language = ["--source-language", "../../etc/passwd"]
    status, _, err = run_cli(capsys, "translate-document", model_dir, paths[0], *language, "-o", tmp_path / "out2")
    assert status == 1 and err.count("\n") == 1 and "'../../etc/passwd' is not a language tag" in err, err


def test_translate_document_writes_an_xliff_file_s_targets_or_proposals_as_asked(model_dir, tmp_path, capsys):
    xliff = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
        '<file original="a" source-language="de" datatype="plaintext"><body>\n'
        '<trans-unit id="1"><source>Ein <g id="1">Hund</g> läuft<x id="2"/>.</source></trans-unit>\n'
        '<trans-unit id="2"><source>Eine Frau singt.</source>'
        '<target state="final">A woman sings.</target></trans-unit>\n'
        "</body></file></xliff>\n"
    )
    (tmp_path / "a.xlf").write_text(xliff, encoding="utf-8")
    status, _, err = run_cli(
        capsys, "translate-document", model_dir, tmp_path / "a.xlf", "--overwrite", "final", "-o", tmp_path / "out"
    )
    assert status == 0, err
    written = (tmp_path / "out" / "a.xlf").read_text(encoding="utf-8")
    assert written.count('state="needs-review-translation"') == 2 and 'target-language="en"' in written
    assert written.count('<g id="1">') == 2 and written.count('<x id="2"/>') == 2
    (tmp_path / "terms.tsv").write_text("de\ten\nHund\tpuppy\n", encoding="utf-8")
    terms = ["--glossary", tmp_path / "terms.tsv", "-o", tmp_path / "g"]
    status, _, err = run_cli(capsys, "translate-document", model_dir, tmp_path / "a.xlf", *terms)
    assert status == 0, err
    termed = (tmp_path / "g" / "a.xlf").read_text(encoding="utf-8")
    assert status == 0 and "puppy" in termed.split("<target", 1)[1] and "1 of the 1 glossary terms found written" in err
    status, _, err = run_cli(
        capsys, "translate-document", model_dir, tmp_path / "a.xlf", "--proposals", "-o", tmp_path / "p"
    )
    proposed = (tmp_path / "p" / "a.xlf").read_text(encoding="utf-8")
    assert status == 0 and proposed.count('<alt-trans origin="rnnsearch"') == 1 and "A woman sings." in proposed
    status, _, err = run_cli(
        capsys, "translate-document", model_dir, tmp_path / "a.xlf", "--overwrite", "done", "-o", tmp_path / "x"
    )
    assert status == 1 and err.count("\n") == 1 and "overwrite: 'done' is not a state" in err
    suggested = ["--state-qualifier", "mt-suggestion", "-o", tmp_path / "s"]
    status, _, err = run_cli(capsys, "translate-document", model_dir, tmp_path / "a.xlf", *suggested)
    assert status == 0 and 'state-qualifier="mt-suggestion"' in (tmp_path / "s" / "a.xlf").read_text(encoding="utf-8")


def test_translate_document_translates_notes_hidden_sheets_and_sheet_names_as_asked(model_dir, tmp_path, capsys):
    from openpyxl import load_workbook

    from tests.unit.test_workbooks import named_workbook

    (tmp_path / "b.xlsx").write_bytes(named_workbook())
    asked = ["--no-notes", "--sheet-names", "--hidden-sheets", "-o", tmp_path / "out"]
    status, _, err = run_cli(capsys, "translate-document", model_dir, tmp_path / "b.xlsx", *asked)
    assert status == 0, err
    book = load_workbook(tmp_path / "out" / "b.xlsx")
    assert book.sheetnames != ["Preise", "Date Übersicht"] and len(book.sheetnames) == 2
    renamed = book.sheetnames[1].replace("'", "''")
    assert book[book.sheetnames[0]]["A2"].value.endswith(f"COUNTA('{renamed}'!A1:A2)")  # the formula follows
    assert "Bitte den Preis prüfen." in book[book.sheetnames[0]]["A4"].comment.text  # no notes: kept
