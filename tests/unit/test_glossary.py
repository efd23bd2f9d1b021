"""A user's terms read from TSV, CSV and TBX glossaries, bad files refused in one line
naming the file and the line, and terms found on whole words, the longest first."""

from __future__ import annotations

import pytest

from rnnsearch.text.glossary import Glossary, GlossaryError, read_glossary
from tests.conftest import python_calls

TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX-Basic" xml:lang="de"><text><body>
<termEntry id="1"><langSet xml:lang="de"><tig><term>Hund</term></tig></langSet>
<langSet xml:lang="en"><tig><term>hound</term></tig></langSet></termEntry>
<termEntry id="2"><langSet xml:lang="de-DE"><tig><term>Rudi Völler</term></tig></langSet>
<langSet xml:lang="en-GB"><tig><term>Rudi Völler</term></tig></langSet></termEntry>
</body></text></martif>
"""

TBX3 = """<?xml version="1.0" encoding="UTF-8"?>
<tbx xmlns="urn:iso:std:iso:30042:ed-2" type="TBX-Basic" style="dca" xml:lang="de"><text><body>
<conceptEntry id="1"><langSec xml:lang="de"><termSec><term>Katze</term></termSec></langSec>
<langSec xml:lang="en"><termSec><term>puss</term></termSec></langSec></conceptEntry>
</body></text></tbx>
"""


def read(tmp_path, name: str, content: str | bytes, **options) -> Glossary:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return read_glossary(path, source_language="de", target_language="en", **options)


def found(glossary: Glossary, text: str) -> list[tuple[str, str]]:
    return [(text[m.start : m.end], m.term.target) for m in glossary.matches(text)]


def test_tables_and_tbx_files_give_their_terms_with_kept_names_and_cases(tmp_path):
    table = "source\ttarget\tnote\tcase\nHund\thound\tein Tier\t\nApple\tApple\tdie Marke\tsensitive\n"
    glossary = read(tmp_path, "g.tsv", table)
    assert found(glossary, "Der hund von Apple und der apple.") == [("hund", "hound"), ("Apple", "Apple")]
    assert [term.kept for term in glossary.terms] == [False, True]  # Apple stays Apple: kept as written
    comma = read(tmp_path, "g.csv", '\ufeffen,de\n"hound, the",Hund\n')  # the model's codes, a BOM, a quoted comma
    assert found(comma, "Ein Hund.") == [("Hund", "hound, the")]
    assert found(read(tmp_path, "g.tbx", TBX), "Rudi Völler und sein Hund") == [
        ("Rudi Völler", "Rudi Völler"),
        ("Hund", "hound"),
    ]
    assert found(read(tmp_path, "g3.tbx", TBX3), "Eine Katze.") == [("Katze", "puss")]
    assert found(read(tmp_path, "s.tsv", "de\ten\nHund\thound\n", case_sensitive=True), "hund Hund") == [
        ("Hund", "hound")
    ]


def test_terms_are_found_on_whole_words_the_longest_first_each_place_once():
    glossary = Glossary.of({"Hund": "dog", "kleiner Hund": "puppy", "C++": "C++", "Straße": "street", "ab": "off"})
    assert found(glossary, "Ein kleiner Hund, ein Hund; Hunde, Hundehütte, C++ und STRASSE, Straße.") == [
        ("kleiner Hund", "puppy"),
        ("Hund", "dog"),
        ("C++", "C++"),
        ("Straße", "street"),
    ]
    assert found(glossary, "abgeben ab") == [("ab", "off")]
    assert Glossary.of({}).matches("Ein Hund") == []


def test_a_glossary_laid_over_another_is_matched_first_and_the_other_where_none_of_its_own_stands():
    served = Glossary.of({"kleiner Hund": "puppy", "Katze": "cat", "Hund": "dog"})
    own = Glossary.of({"hund": "hound", "Haus": "house"}).over(served)
    assert found(own, "Ein kleiner Hund, eine Katze im Haus.") == [
        ("Hund", "hound"),
        ("Katze", "cat"),
        ("Haus", "house"),
    ]
    assert len(own) == 5 and own.over(None) is own


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("g.tsv", "", r"g.tsv:1: no header naming the source and target columns \(de and en, or source and target\)"),
        ("g.tsv", "Hund\thound\n", r"g.tsv:1: no header .*; it names hund, hound"),
        ("g.tsv", "de\ten\nHund\thound\nKatze\n", r"g.tsv:3: 1 fields, where the header names 2"),
        ("g.tsv", "de\ten\nHund\t \n", r"g.tsv:2: an empty target for 'Hund'"),
        ("g.tsv", "de\ten\n\thound\n", r"g.tsv:2: an empty source term"),
        (
            "g.tsv",
            "de\ten\nHund\thound\nhund\tdog\n",
            r"g.tsv:3: 'hund' is translated as 'dog' here and as 'hound' at .*g.tsv:2",
        ),
        (
            "g.tsv",
            "de\ten\tcase\nHund\thound\tmaybe\n",
            r"g.tsv:2: case 'maybe' is not sensitive, insensitive or empty",
        ),
        ("g.tsv", b"de\ten\nHund\thound\nK\xe4tze\tcat\n", r"g.tsv:3: not UTF-8"),
        (
            "g.tbx",
            "<martif><termEntry><langSet xml:lang='de'><term>Hund</term></langSet></termEntry>",
            r"g.tbx:1: not well-formed",
        ),
        ("g.tbx", TBX.replace('xml:lang="en"', 'xml:lang="fr"'), r"g.tbx:3: an entry without a en term"),
        ("g.xlsx", "x", r"g.xlsx: a glossary is a .tsv, .csv or .tbx file"),
    ],
)
def test_a_bad_glossary_is_refused_in_one_line_naming_the_file_and_the_line(tmp_path, name, content, message):
    with pytest.raises(GlossaryError, match=message):
        read(tmp_path, name, content)


def test_a_glossary_file_loads_and_matches_in_steps_linear_in_its_entries(tmp_path):
    """Four times the entries take at most about four times the steps to read and to find
    in a text (steps counted, not seconds, as test_markup.py counts them)."""

    def steps(entries: int) -> float:
        path = tmp_path / f"g{entries}.tsv"
        rows = "".join(f"wort{k}\tword{k}\n" for k in range(entries))
        path.write_text("de\ten\n" + rows, encoding="utf-8")
        text = " ".join(f"wort{k}" for k in range(0, entries, 7))

        def work():
            read_glossary(path, source_language="de", target_language="en").matches(text)

        return python_calls(work) / entries

    small, large = steps(2_000), steps(8_000)
    assert large <= 1.25 * small, (small, large)
