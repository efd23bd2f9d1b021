"""A user's terms read from TSV, CSV and TBX glossaries, bad files refused in one line
naming the file and the line, and terms found on whole words, the longest first."""

from __future__ import annotations

import pytest

from rnnsearch.text.glossary import Glossary, GlossaryError, KeptWords, words_between
from rnnsearch.text.glossary_files import read_glossary
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
        ("STRASSE", "street"),  # full case folding: ß is ss
        ("Straße", "street"),
    ]
    assert found(glossary, "abgeben ab") == [("ab", "off")]
    assert Glossary.of({}).matches("Ein Hund") == []


def test_no_term_is_found_on_words_kept_untranslated_and_a_cut_text_keeps_them_marked():
    glossary = Glossary.of({"Hund": "hound", "der Hund": "the hound"})
    text = KeptWords("Der Hund und der Hund bellt", kept={1})
    assert [(m.start, m.term.target) for m in glossary.matches(text)] == [(13, "the hound")]
    assert [m.term.target for m in glossary.matches(str(text))] == ["the hound", "the hound"]
    words = text.split()
    halves = [words_between(words, 0, 3, kept=text.kept), words_between(words, 3, 6, kept=text.kept)]
    assert [m.term.target for m in glossary.matches(halves[0])] == []
    assert type(halves[1]) is str and [m.term.target for m in glossary.matches(halves[1])] == ["the hound"]


def test_terms_are_found_in_any_unicode_form_and_never_inside_a_cluster():
    """An NFD accent, a full-width word, a no-break space and full case folding match their
    plain forms; a term never ends inside a letter and its accent, nor inside what one
    letter folds to; the span found is the text's own; targets are read composed."""
    glossary = Glossary.of(
        {"Müller": "Miller", "Hund": "hound", "Rudi Völler": "Rudi Völler", "Rose": "rose", "Fußball": "football"}
        | {"İstanbul": "Istanbul", "s": "es", "Café": "cafe\u0301"}
    )
    nfd = "Mu\u0308ller"
    text = f"{nfd}, ＨＵＮＤ, Rudi\u00a0Völler, Rose\u0301, FUSSBALL, ISTANBUL, Straße, CAFE\u0301"
    assert found(glossary, text) == [
        (nfd, "Miller"),
        ("ＨＵＮＤ", "hound"),
        ("Rudi\u00a0Völler", "Rudi Völler"),
        ("FUSSBALL", "football"),
        ("ISTANBUL", "Istanbul"),
        ("CAFE\u0301", "café"),
    ]
    sensitive = Glossary.of({"Müller": "Miller"}, case_sensitive=True)
    assert found(sensitive, f"{nfd} MÜLLER") == [(nfd, "Miller")]


def test_a_tsv_has_no_quoting_and_a_csv_quote_may_not_run_over_a_line(tmp_path):
    """A tab-separated `"` is text (the entries after it are kept); in a CSV an unclosed
    quote is refused naming its line, never swallowing the entries after it."""
    glossary = read(tmp_path, "g.tsv", 'de\ten\n"Aha\tyes\nHund\thound\nKatze\tcat\n')
    assert found(glossary, '"Aha Hund Katze') == [('"Aha', "yes"), ("Hund", "hound"), ("Katze", "cat")]
    with pytest.raises(GlossaryError, match=r"g.csv:2: a quoted field runs on to line 4 \(an unclosed quote\?\)"):
        read(tmp_path, "g.csv", 'de,en\n"Aha,yes\nHund,hound\nKatze,cat\n')


def test_glossaries_and_avoid_lists_are_bounded_in_bytes_and_in_term_length(tmp_path, monkeypatch):
    """A term, a target or an avoided phrase over MAX_TERM_CHARS characters, a field over
    the csv module's limit, and a file over MAX_FILE_BYTES (read no further: /dev/zero too)
    are each refused in one line naming the file and the line."""
    from rnnsearch.text import glossary_files as module
    from rnnsearch.text.glossary import MAX_TERM_CHARS
    from rnnsearch.text.glossary_files import read_avoided

    long = "x" * (MAX_TERM_CHARS + 1)
    with pytest.raises(GlossaryError, match=rf"g.tsv:3: a target of {MAX_TERM_CHARS + 1} characters, more than"):
        read(tmp_path, "g.tsv", f"de\ten\nHund\thound\nKatze\t{long}\n")
    with pytest.raises(GlossaryError, match=r"g.tsv:2: field larger than field limit"):
        read(tmp_path, "g.tsv", "de\ten\nHund\t" + "x" * 200_000 + "\n")
    avoid = tmp_path / "avoid.txt"
    avoid.write_text(f"dog\n\n{long}\n", encoding="utf-8")
    with pytest.raises(GlossaryError, match=rf"avoid.txt:3: a phrase of {MAX_TERM_CHARS + 1} characters"):
        read_avoided(avoid)
    with pytest.raises(GlossaryError, match=r"avoid.1: a phrase of"):
        module.avoided_phrases(["dog", long])
    monkeypatch.setattr(module, "MAX_FILE_BYTES", 64)
    avoid.write_text("dog\n" * 17, encoding="utf-8")
    with pytest.raises(GlossaryError, match=r"avoid.txt: larger than the"):
        read_avoided(avoid)
    with pytest.raises(GlossaryError, match=r"zero.tsv: larger than the"):
        read_glossary(_linked(tmp_path / "zero.tsv", "/dev/zero"), source_language="de", target_language="en")


def _linked(path, target: str):
    path.symlink_to(target)
    return path


TBX_SYNONYMS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE martif [<!ENTITY brand "Acme">]>
<martif type="TBX-Basic" xml:lang="de"><text><body>
<termEntry id="1"><langSet xml:lang="de"><tig><term>Rüde</term></tig><tig><term>&brand; Hund</term></tig></langSet>
<langSet xml:lang="en"><tig><term>dog</term>
<termNote type="administrativeStatus">deprecatedTerm-admn-sts</termNote></tig>
<tig><term>canine</term></tig>
<tig><term>hound</term><termNote type="administrativeStatus">preferredTerm-admn-sts</termNote></tig>
</langSet></termEntry>
<termEntry id="2"><langSet xml:lang="de"><tig><term>Katze</term></tig></langSet>
<langSet xml:lang="en"><tig><term>puss</term>
<termNote type="administrativeStatus">supersededTerm-admn-sts</termNote></tig><tig><term>cat</term></tig></langSet>
</termEntry></body></text></martif>
"""


def test_a_tbx_entry_gives_every_source_synonym_its_preferred_target_and_reads_its_own_entities(tmp_path):
    """Every source term (synonyms too) is written as the preferred target, else the first
    not deprecated or superseded; an entity the file declares is read as its text; an
    external one is refused without being read; an entry of deprecated targets alone too."""
    glossary = read(tmp_path, "g.tbx", TBX_SYNONYMS)
    assert found(glossary, "Ein Rüde, ein Acme Hund, eine Katze.") == [
        ("Rüde", "hound"),
        ("Acme Hund", "hound"),
        ("Katze", "cat"),
    ]
    external = TBX_SYNONYMS.replace('"Acme"', 'SYSTEM "file:///etc/hostname"')
    with pytest.raises(GlossaryError, match=r"g.tbx:\d+: not well-formed XML \(Entity 'brand' not defined"):
        read(tmp_path, "g.tbx", external)
    only_deprecated = TBX_SYNONYMS.replace("<tig><term>canine</term></tig>", "").replace(
        "preferredTerm-admn-sts", "deprecatedTerm-admn-sts"
    )
    with pytest.raises(GlossaryError, match=r"g.tbx:4: every en term is marked deprecated or superseded"):
        read(tmp_path, "g.tbx", only_deprecated)


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
