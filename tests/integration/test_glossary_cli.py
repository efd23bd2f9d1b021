"""The user's terms through `translate`, the Python API and the command: each term found
in a text written in its translation, greedy or beam, and a text without one translated
as without a glossary."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest

import rnnsearch
from rnnsearch.errors import UserError
from rnnsearch.text.glossary import Glossary
from tests.integration.conftest import run_cli, write_lines

TEXTS = [
    "Ein Hund läuft über die Wiese.",
    "Eine Frau singt ein Lied.",
    "Zwei Männer spielen.",
    "Der Hund und die Frau.",
]
TERMS = {"Hund": "puppy", "Frau": "Frau"}  # a term kept as written: Frau stays Frau


def words_of(text: str) -> list[str]:
    """A text's words as a term is found on them: Unicode words, whatever punctuation is
    attached (the tiny model writes "puppy`")."""
    return re.findall(r"\w+", text)


@pytest.fixture(scope="module")
def translator(model_dir):
    return rnnsearch.load(model_dir, device="cpu")


@pytest.mark.parametrize("beam_size", [1, 3])
def test_every_term_found_is_written_and_a_text_without_one_is_translated_as_without(translator, beam_size):
    free = translator.translate(TEXTS, beam_size=beam_size)
    with_terms = translator.translate(TEXTS, beam_size=beam_size, glossary=TERMS)
    for text, alone, translation in zip(TEXTS, free, with_terms, strict=True):
        for source, target in TERMS.items():
            if source in text.split():
                assert target in words_of(translation.text), (text, translation.text)
        report = translation.terms
        found = {match.term.target for match in Glossary.of(TERMS).matches(text)}
        assert {term.target for term in report.terms} == found and not report.unwritten
        for term in report.terms:  # each place said is its target, as written
            assert term.where and all(translation.text[a:b] == term.target for a, b in term.where)
        if not any(source in text.split() for source in TERMS):
            assert (translation.text, translation.score) == (alone.text, alone.score)


def test_the_command_reads_a_glossary_file_and_refuses_a_bad_one_in_one_line(model_dir, tmp_path, capsys):
    glossary = tmp_path / "terms.tsv"
    glossary.write_text("de\ten\tnote\nHund\tpuppy\tthe customer's word\n", encoding="utf-8")
    source = write_lines(tmp_path / "in.de", TEXTS)
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--glossary", glossary, "--beam-size", 2)
    assert status == 0, err
    lines = out.splitlines()
    assert "puppy" in words_of(lines[0]) and "puppy" in words_of(lines[3])
    glossary.write_text("de\ten\nHund\tpuppy\nhund\tdog\n", encoding="utf-8")
    status, _, err = run_cli(capsys, "translate", model_dir, "-i", source, "--glossary", glossary)
    assert status == 1 and err.count("\n") == 1 and "terms.tsv:3: 'hund' is translated as 'dog' here" in err


def test_a_glossary_is_checked_when_the_call_is_made(translator):
    with pytest.raises(UserError, match="glossary: expected a Glossary or a mapping of terms, got int"):
        translator.translate(TEXTS, glossary=3)
    with pytest.raises(UserError, match=r"glossary.0: an empty target for 'Hund'"):
        translator.translate(TEXTS, glossary={"Hund": " "})


def test_a_bold_term_gives_a_bold_target_term_in_marked_up_lines_html_and_word(translator, model_dir, tmp_path, capsys):
    import docx

    [line] = translator.translate(["Ein <b>Hund</b> läuft über die Wiese."], markup="html", glossary=TERMS)
    assert re.search(r"<b>puppy\W*</b>", line.marked_up), line.marked_up
    source, target = line.words.source_words, line.words.target_words
    puppy = [words_of(word)[:1] for word in target].index(["puppy"])
    assert [s for s, t in line.words.pairs if t == puppy] == [source.index("Hund")]
    glossary = tmp_path / "terms.csv"
    glossary.write_text("source,target\nHund,puppy\n", encoding="utf-8")
    page = tmp_path / "seite.html"
    page.write_text("<p>Ein <b>Hund</b> läuft.</p><p>Eine Frau singt.</p>", encoding="utf-8")
    word = docx.Document()
    paragraph = word.add_paragraph()
    paragraph.add_run("Hund").bold = True
    paragraph.add_run(" und die Frau.")
    punctuated = word.add_paragraph("Das ist der ")
    punctuated.add_run("Hund").bold = True
    punctuated.add_run(".")  # the punctuation in a run of its own
    word.save(tmp_path / "brief.docx")
    out = tmp_path / "out"
    status, _, err = run_cli(
        capsys, "translate-document", model_dir, page, tmp_path / "brief.docx", "-o", out, "--glossary", glossary
    )
    assert status == 0, err
    assert re.search(r"<b>puppy\W*</b>", (out / "seite.html").read_text(encoding="utf-8").split("</p>")[0])
    assert "2 of the 2 glossary terms found written" in err
    for paragraph in docx.Document(out / "brief.docx").paragraphs:
        runs = paragraph.runs
        assert [words_of(run.text) for run in runs if run.bold] == [["puppy"]], [(r.text, r.bold) for r in runs]


def test_a_term_inside_text_kept_untranslated_is_neither_forced_nor_counted(translator, model_dir, tmp_path, capsys):
    kept = 'Der <span translate="no">Hund</span> und die Frau.'
    [line] = translator.translate([kept], markup="html", glossary={"Hund": "puppy"})
    assert "puppy" not in line.text and line.terms.found == 0, line.marked_up
    [free] = translator.translate(["Der Hund und die Frau."], glossary={"Hund": "puppy"})
    assert "puppy" in words_of(free.text)  # the same words, not kept: the term is written
    page = tmp_path / "kept.html"
    page.write_text(f"<p>{kept}</p><p>Ein <code>Hund</code> läuft.</p>", encoding="utf-8")
    notes = tmp_path / "kept.md"
    notes.write_text("Ein `Hund` läuft.\n", encoding="utf-8")
    glossary = tmp_path / "terms.csv"
    glossary.write_text("source,target\nHund,puppy\n", encoding="utf-8")
    out = tmp_path / "out"
    status, _, err = run_cli(
        capsys, "translate-document", model_dir, page, notes, "-o", out, "--glossary", glossary, "--unchanged-ok"
    )
    assert status == 0, err
    for name in ("kept.html", "kept.md"):
        assert "puppy" not in (out / name).read_text(encoding="utf-8"), name
    assert "glossary terms found" not in err or "0 of the 0" in err, err
    from fastapi.testclient import TestClient

    from rnnsearch.server import Limits, create_app

    with TestClient(create_app(translator, model_dir, Limits())) as client:
        body = {"texts": [kept], "markup": "html", "glossary": {"Hund": "puppy"}}
        answer = client.post("/v1/translate", json=body).json()["translations"][0]
        assert "puppy" not in answer["text"] and answer["terms"]["terms"] == [], answer


def test_the_command_links_each_term_to_its_source_words_and_counts_them(model_dir, tmp_path, capsys):
    glossary = tmp_path / "terms.tsv"
    glossary.write_text("de\ten\nkleiner Hund\tsmall puppy\n", encoding="utf-8")
    source = write_lines(tmp_path / "in.de", ["Ein kleiner Hund läuft.", "Eine Frau singt."])
    hard = tmp_path / "links"
    args = ["-i", source, "--glossary", glossary, "--hard-alignments", hard]
    status, out, err = run_cli(capsys, "translate", model_dir, *args)
    assert status == 0 and "1 of the 1 glossary terms found in 2 lines written" in err, err
    words = out.splitlines()[0].split()
    at = [words_of(word)[:1] for word in words].index(["small"])
    assert words_of(words[at + 1])[0] == "puppy"
    links = [tuple(map(int, pair.split("-"))) for pair in hard.read_text().splitlines()[0].split()]
    assert sorted(s for s, t in links if t in (at, at + 1)) == [1, 1, 2, 2]


def test_the_server_writes_its_glossary_and_a_request_s_own_over_it(translator, model_dir):
    from fastapi.testclient import TestClient

    from rnnsearch.server import Limits, create_app
    from rnnsearch.text.glossary import Glossary

    app = create_app(translator, model_dir, Limits(max_glossary_terms=2), glossary=Glossary.of({"Hund": "puppy"}))
    with TestClient(app) as client:

        def words(texts, **body):
            response = client.post("/v1/translate", json={"texts": texts, "alignments": False, **body})
            assert response.status_code == 200, response.text
            return [words_of(t["text"]) for t in response.json()["translations"]]

        served = words(TEXTS[:2])
        assert "puppy" in served[0]
        [answer] = client.post("/v1/translate", json={"texts": TEXTS[:1]}).json()["translations"]
        assert answer["terms"]["found"] == answer["terms"]["written"] == 1  # the report travels with the answer
        [term] = answer["terms"]["terms"]
        assert (term["source"], term["target"]) == ("Hund", "puppy")
        assert [answer["text"][a:b] for a, b in term["where"]] == ["puppy"]
        assert served[1] == words_of(translator.translate([TEXTS[1]])[0].text)
        own = words(TEXTS, glossary={"hund": "hound", "Frau": "Frau"})
        assert "hound" in own[0] and "puppy" not in own[0] and "Frau" in own[1] and "hound" in own[3]
        for body, fragment in [
            ({"glossary": {"a": "b", "c": "d", "e": "f"}}, "glossary: Dictionary should have at most 2 items"),
            ({"glossary": {"Hund": ""}}, "glossary.Hund: String should have at least 1 character"),
            ({"glossary": {"Hund": " \x1c"}}, "glossary.Hund: a term holds more than white space"),
            ({"glossary": ["Hund"]}, "glossary: Input should be a valid dictionary"),
        ]:
            response = client.post("/v1/translate", json={"texts": TEXTS[:1], **body})
            assert response.status_code == 422 and fragment in response.json()["error"], response.text
        written = words(TEXTS)
        avoided = [w for w in dict.fromkeys(w.lower() for text in written for w in text) if w != "puppy"][:2]
        avoiding = words(TEXTS, avoid=[w.upper() for w in avoided])
        assert not {w.lower() for text in avoiding for w in text} & set(avoided), (avoided, avoiding)
        response = client.post("/v1/translate", json={"texts": TEXTS[:1], "avoid": ["a", "b", "c"]})
        assert response.status_code == 422 and "avoid: List should have at most 2 items" in response.json()["error"]
        page = client.post("/v1/documents?name=seite.html", content="<p>Ein Hund läuft.</p>".encode())
        assert page.status_code == 200 and "puppy" in page.text

        def document(query: str):
            return client.post(f"/v1/documents?name=seite.html&{query}", content="<p>Ein Hund läuft.</p>".encode())

        own_page = document("glossary=" + quote(json.dumps({"hund": "hound"})))
        assert own_page.status_code == 200 and "hound" in own_page.text and "puppy" not in own_page.text
        for query, status, fragment in [
            ("glossary=" + quote('{"Hund": "a", "Hund": "b"}'), 422, "glossary: 'Hund' is given twice"),
            ("glossary=Hund", 422, "glossary: not JSON (Expecting value at character 0)"),
            ("glossary=" + quote('["Hund"]'), 422, "glossary: a JSON object of source terms to their targets"),
            ("glossary=" + quote(json.dumps({"a": "b", "c": "d", "e": "f"})), 413, "glossary: 3 terms, more than"),
            ("glossary=" + quote(json.dumps({"Hund": " "})), 422, "glossary.0: an empty target for 'Hund'"),
            ("glosary=" + quote(json.dumps({"Hund": "a"})), 422, "glosary: /v1/documents takes no such parameter"),
        ]:
            response = document(query)
            assert response.status_code == status and fragment in response.json()["error"], response.text


def test_avoided_words_are_never_written_and_the_command_reads_them_from_a_file(
    translator, model_dir, tmp_path, capsys
):
    import re
    from collections import Counter

    free = translator.translate(TEXTS, beam_size=3, n_best=3)
    written = Counter(w.lower() for t in free for h in [t, *t.alternatives] for w in re.findall(r"\w+", h.text))
    avoided = [word for word, _ in written.most_common(2)]
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, avoided)) + r")(?!\w)", re.IGNORECASE)
    avoiding = translator.translate(TEXTS, beam_size=3, n_best=3, avoid=[w.upper() for w in avoided])
    assert not any(pattern.search(h.text) for t in avoiding for h in [t, *t.alternatives]), avoided
    listed = tmp_path / "avoid.txt"
    listed.write_text("\n".join(avoided) + "\n\n", encoding="utf-8")
    source = write_lines(tmp_path / "in.de", TEXTS)
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--avoid", listed, "--beam-size", 2)
    assert status == 0 and not pattern.search(out), (err, out)
    listed.write_bytes(b"Hund\n\xff\n")
    status, _, err = run_cli(capsys, "translate", model_dir, "-i", source, "--avoid", listed)
    assert status == 1 and err.count("\n") == 1 and "avoid.txt:2: not UTF-8" in err


def test_evaluate_reports_the_share_of_terms_written(model_dir, tmp_path, capsys):
    import json

    glossary = tmp_path / "terms.tsv"
    glossary.write_text("de\ten\nHund\tpuppy\nFrau\tFrau\n", encoding="utf-8")
    source = write_lines(tmp_path / "test.de", TEXTS)
    reference = write_lines(tmp_path / "test.en", ["A puppy runs.", "A Frau sings.", "Two men play.", "The puppy."])
    args = ["--src", source, "--ref", reference, "--glossary", glossary, "--json", "--beam-size", 2]
    status, out, err = run_cli(capsys, "evaluate", model_dir, *args)
    assert status == 0, err
    assert json.loads(out)["terms"] == {"found": 4, "written": 4}
