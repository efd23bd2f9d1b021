"""XLIFF 1.2 and 2.x through translation: every inline code back exactly once with its id
and its native data, targets written only where a CAT tool still needs them and marked as
machine translation, every other byte of the file as it was, and bad files refused in one
line naming the file and the unit.

Three segments below are from the EUR-Lex sets of Hanneman & Dinu, "How Should Markup
Tags Be Translated?" (WMT 2020), github.com/amazon-science/mt-markup-tags, CC BY 4.0."""

# ruff: noqa: E501  (the XLIFF files below keep their units one to a line, as CAT tools write them)
from __future__ import annotations

import difflib
from collections import Counter

import pytest
from lxml import etree

from rnnsearch.documents.document import DocumentError, ReadOptions
from rnnsearch.documents.translating import SentenceTranslation, copied, read_document, translate_read
from tests.xliff_schemas import schema

EURLEX = [
    '<bx id="1"/><x id="2"/>The details of the evaluation process and results together with the supporting '
    "evidence is available in the Commission Staff Working Document:",
    '1.1.<x id="1"/>General development',
    'Opinion of the <g id="1">European Economic and Social Committee</g> on the <g id="2">proposal</g>.',
]

XLIFF_12 = f"""<?xml version='1.0' encoding='UTF-8'?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2" xmlns:okp="okapi-framework:xliff-extensions">
  <file original="report.docx" source-language="en-GB" datatype="x-undefined">
    <header><note>Keep   this &amp; that</note></header>
    <body>
      <trans-unit id="1" okp:extra='single "quoted"'>
        <source xml:lang="en">The <g id="1">black dog</g> runs<x id="2"/> on <bpt id="3">&lt;b&gt;</bpt>the green grass<ept id="3">&lt;/b&gt;</ept>.</source>
        <note>A note &#233; kept</note>
      </trans-unit>
      <trans-unit id="2" translate="no"><source>Do not translate.</source></trans-unit>
      <trans-unit id="3"><source>A man <mrk mtype="protected">ACME Corp</mrk> sits.</source><target state="final">Un homme ACME Corp.</target></trans-unit>
      <trans-unit id="4"><source>Two dogs. A cat.</source><seg-source><mrk mtype="seg" mid="0">Two dogs.</mrk> <mrk mtype="seg" mid="1">A <g id="5">black cat</g>.</mrk></seg-source></trans-unit>
      <trans-unit id="5" approved="yes"><source>Approved.</source><target>Approuvé.</target></trans-unit>
      <trans-unit id="6"><source>Say <mrk mtype="protected">ACME Corp</mrk> twice.</source><target state="needs-translation"></target></trans-unit>
      <group translate="no"><trans-unit id="7"><source>In a closed group.</source></trans-unit></group>
{"".join(f'      <trans-unit id="e{k}"><source>{line}</source></trans-unit>{chr(10)}' for k, line in enumerate(EURLEX))}    </body>
  </file>
</xliff>
""".encode()

XLIFF_2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.1" srcLang="en">
 <file id="f1">
  <unit id="u1">
   <originalData><data id="d1">&lt;b&gt;</data><data id="d2">&lt;/b&gt;</data></originalData>
   <segment id="s1"><source>The <pc id="1" dataRefStart="d1" dataRefEnd="d2">black dog</pc> runs <sc id="2"/>very fast<ec startRef="2"/> <ph id="3" dataRef="d1"/> home.</source></segment>
   <ignorable><source> </source></ignorable>
   <segment id="s2" state="final"><source>Done.</source><target>Fini.</target></segment>
   <segment id="s3"><source>A <mrk id="m1" translate="no">Foo Bar</mrk> man.</source><target></target></segment>
  </unit>
  <unit id="u2" translate="no"><segment><source>Kept.</source></segment></unit>
 </file>
</xliff>
"""


def reversed_upper(sentences: list[str]) -> list[SentenceTranslation]:
    """A translation that changes every word and reverses their order, each linked to its source."""
    out = []
    for words in map(str.split, sentences):
        last = len(words) - 1
        out.append(
            SentenceTranslation([w.upper() for w in reversed(words)], [(k, last - k) for k in range(len(words))])
        )
    return out


def translated(name: str, data: bytes, translate=reversed_upper, *, retranslate: bool = False, **asked) -> bytes:
    options = ReadOptions("fr", retranslate=retranslate, source_language="en", **asked)
    read = read_document(data, name=name, options=options)
    return translate_read([read], translate, language="en", unchanged_ok=True)[0].data


def codes(element: etree._Element) -> Counter:
    """Each inline code's name, id and native data (of the codes that hold it)."""
    native = {"bpt", "ept", "ph", "it"}
    return Counter(
        (
            etree.QName(code).localname,
            code.get("id") or code.get("startRef"),
            code.text if etree.QName(code).localname in native else None,
        )
        for code in element.iter(tag=etree.Element)
        if code is not element and etree.QName(code).localname != "mrk" or code.get("mtype") == "protected"
    )


def units_of(data: bytes, namespace: str, name: str) -> dict[str, etree._Element]:
    root = etree.fromstring(data)
    return {unit.get("id"): unit for unit in root.iter(f"{{{namespace}}}{name}")}


def only_inserted(before: bytes, after: bytes) -> bool:
    """Whether `after` is `before` with bytes inserted, none removed or changed."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return all(op in ("equal", "insert") for op, *_ in matcher.get_opcodes())


NS_12 = "urn:oasis:names:tc:xliff:document:1.2"
NS_2 = "urn:oasis:names:tc:xliff:document:2.0"
NS_MATCHES = "urn:oasis:names:tc:xliff:matches:2.0"


def test_xliff_1_2_gets_each_open_unit_a_machine_translated_target_with_every_code_once():
    out = translated("report.xlf", XLIFF_12)
    units = units_of(out, NS_12, "trans-unit")
    written = {key for key, unit in units.items() if unit.find(f"{{{NS_12}}}target") is not None}
    assert written == {"1", "3", "4", "5", "6", "e0", "e1", "e2"}
    for key in ("1", "4", "6", "e0", "e1", "e2"):
        unit = units[key]
        target = unit.find(f"{{{NS_12}}}target")
        assert target.get("state") == "needs-review-translation" and target.get("state-qualifier") == "leveraged-mt"
        source = unit.find(f"{{{NS_12}}}seg-source")
        assert codes(target) == codes(unit.find(f"{{{NS_12}}}source") if source is None else source), key
    one = units["1"].find(f"{{{NS_12}}}target")
    assert etree.tostring(one).count(b"<bpt") == 1 and b"&lt;b&gt;</bpt>GRASS. GREEN THE<ept" in etree.tostring(one)
    assert units["3"].find(f"{{{NS_12}}}target").text == "Un homme ACME Corp."  # final: kept
    assert units["5"].find(f"{{{NS_12}}}target").text == "Approuvé."  # approved: kept
    assert "ACME Corp" in "".join(units["6"].find(f"{{{NS_12}}}target").itertext())
    segments = units["4"].find(f"{{{NS_12}}}target").findall(f"{{{NS_12}}}mrk")
    assert [(s.get("mtype"), s.get("mid"), "".join(s.itertext())) for s in segments] == [
        ("seg", "0", "DOGS. TWO"),
        ("seg", "1", "CAT. BLACK A"),
    ]
    assert only_inserted(XLIFF_12, out)
    assert b'target-language="fr"' in out and b"okp:extra='single \"quoted\"'" in out


def test_xliff_2_gets_each_open_segment_translated_and_its_state_said():
    out = translated("app.xliff", XLIFF_2)
    root = etree.fromstring(out)
    assert root.get("trgLang") == "fr"
    segments = {s.get("id"): s for s in root.iter(f"{{{NS_2}}}segment")}
    assert (segments["s1"].get("state"), segments["s1"].get("subState")) == ("translated", "rnnsearch:mt")
    source, target = (segments["s1"].find(f"{{{NS_2}}}{side}") for side in ("source", "target"))
    assert codes(target) == codes(source)
    assert "".join(target.find(f"{{{NS_2}}}pc").itertext()) == "DOG BLACK"
    assert segments["s2"].find(f"{{{NS_2}}}target").text == "Fini." and segments["s2"].get("state") == "final"
    kept = segments["s3"].find(f"{{{NS_2}}}target").find(f"{{{NS_2}}}mrk")
    assert (kept.get("translate"), kept.text) == ("no", "Foo Bar")
    assert len(list(root.iter(f"{{{NS_2}}}target"))) == 3  # u2 is translate="no"
    assert only_inserted(XLIFF_2, out)


def test_a_pair_of_codes_written_apart_is_placed_around_the_words_it_held():
    out = translated("app.xliff", XLIFF_2)
    assert b'<sc id="2"/>FAST VERY<ec startRef="2"/>' in out


def test_what_a_person_translated_is_translated_again_only_when_asked_and_never_what_is_not_to_be():
    out = translated("report.xlf", XLIFF_12, retranslate=True)
    units = units_of(out, NS_12, "trans-unit")
    assert units["3"].find(f"{{{NS_12}}}target").get("state") == "needs-review-translation"
    assert units["2"].find(f"{{{NS_12}}}target") is None and units["7"].find(f"{{{NS_12}}}target") is None
    out = translated("app.xliff", XLIFF_2, retranslate=True)
    assert b"<target>FINI.</target>" not in out and b"DONE." in out and b"KEPT." not in out


def test_a_segment_whose_translation_is_its_own_words_gets_its_source_as_written():
    out = translated("report.xlf", XLIFF_12, copied)
    units = units_of(out, NS_12, "trans-unit")
    for key in ("1", "e0", "e1"):
        source, target = (etree.tostring(units[key].find(f"{{{NS_12}}}{side}")) for side in ("source", "target"))
        assert source.split(b">", 1)[1].rsplit(b"<", 1)[0] == target.split(b">", 1)[1].rsplit(b"<", 1)[0]
    assert only_inserted(XLIFF_12, out)


def test_a_translated_xliff_1_2_file_is_read_by_translate_toolkit():
    from translate.storage import xliff  # GPL: a test's reader, never the package's

    store = xliff.xlifffile.parsestring(translated("report.xlf", XLIFF_12))
    targets = {unit.getid().split("\x04")[-1]: unit.target for unit in store.units if unit.target}
    assert targets["1"].startswith("<b>GRASS. GREEN THE</b>") and targets["3"] == "Un homme ACME Corp."
    assert store.gettargetlanguage() == "fr"


LAUGHS = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]><xliff>&b;</xliff>'


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<xliff version='1.2'", r"f.xlf: not well-formed XML \(line 1"),
        (LAUGHS, r"f.xlf: it declares a DTD"),
        (b'<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.1"/>', r"f.xlf: not XLIFF 1.2, 2.0, 2.1"),
        (
            XLIFF_12.replace(b'<trans-unit id="2"', b'<trans-unit id="1"'),
            r"f.xlf: file report.docx: trans-unit id '1' is given twice",
        ),
        (
            XLIFF_2.replace(b'<ec startRef="2"/>', b'<ec startRef="9"/>'),
            r"f.xlf: unit u1: <ec startRef='9'> has no <sc>",
        ),
        (
            XLIFF_12.replace(b"en-GB", b"de"),
            r"f.xlf: file report.docx: its source language is 'de'; this model translates from 'en'",
        ),
        (
            XLIFF_2.replace(b'srcLang="en"', b'srcLang="en" trgLang="de"'),
            r"its target language is 'de'; this model translates into 'fr'",
        ),
        (
            XLIFF_12.replace(b"Un homme ACME Corp.", b'Un homme <x id="7"/>'),
            r"f.xlf: trans-unit 3: its target's inline codes are not its source's",
        ),
        (XLIFF_2.decode().replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16"), r"f.xlf: it is in UTF-16"),
    ],
)
def test_a_bad_xliff_file_is_refused_in_one_line_naming_it_and_the_unit(data, message):
    with pytest.raises(DocumentError, match=message) as caught:
        read_document(data, name="f.xlf", options=ReadOptions("fr", source_language="en"))
    assert "\n" not in str(caught.value)


def test_the_states_named_are_written_over_and_a_proposal_leaves_every_target_as_it_was():
    read = read_document(
        XLIFF_12, name="r.xlf", options=ReadOptions("fr", source_language="en", overwrite=frozenset({"final"}))
    )
    units = units_of(translate_read([read], reversed_upper, language="en")[0].data, NS_12, "trans-unit")
    assert "".join(units["3"].find(f"{{{NS_12}}}target").itertext()) == "SITS. ACME Corp MAN A"
    assert units["5"].find(f"{{{NS_12}}}target").text == "Approuvé."  # approved: not named
    options = ReadOptions("fr", source_language="en", proposals=True)
    out = translate_read([read_document(XLIFF_12, name="r.xlf", options=options)], reversed_upper, language="en")[
        0
    ].data
    units = units_of(out, NS_12, "trans-unit")
    assert only_inserted(XLIFF_12, out) and units["1"].find(f"{{{NS_12}}}target") is None
    offered = units["4"].findall(f"{{{NS_12}}}alt-trans")
    assert [(a.get("mid"), a.get("origin"), "".join(a.itertext())) for a in offered] == [
        ("0", "rnnsearch", "DOGS. TWO"),
        ("1", "rnnsearch", "CAT. BLACK A"),
    ]
    out = translate_read([read_document(XLIFF_2, name="a.xlf", options=options)], reversed_upper, language="en")[0].data
    assert only_inserted(XLIFF_2, out)
    matches = etree.fromstring(out).find(f".//{{{NS_MATCHES}}}matches")
    refs = [(m.get("ref"), m.get("type"), m.find(f"{{{NS_2}}}target").xpath("string()")) for m in matches]
    assert refs == [("#s1", "mt", "HOME. FAST VERY RUNS DOG BLACK THE"), ("#s3", "mt", "MAN. Foo Bar A")]
    assert matches[0].find(f"{{{NS_2}}}originalData") is not None


def test_a_state_that_is_not_one_is_refused_in_one_line():
    from rnnsearch.documents.document import checked_states

    assert checked_states("translated, final") == {"translated", "final"}
    with pytest.raises(DocumentError, match="overwrite: 'done' is not a state; give some of approved, final"):
        checked_states("translated,done")


def test_codes_that_may_not_be_reordered_keep_their_order_where_the_words_around_them_move():
    data = XLIFF_2.replace(
        b'<segment id="s2" state="final"><source>Done.</source><target>Fini.</target></segment>',
        b'<segment id="s4"><source>One <ph id="7" canReorder="no"/>two three <ph id="8" canReorder="no"/>four.</source></segment>',
    )
    out = translated("app.xliff", data)
    target = next(s for s in etree.fromstring(out).iter(f"{{{NS_2}}}segment") if s.get("id") == "s4").find(
        f"{{{NS_2}}}target"
    )
    assert [ph.get("id") for ph in target.iter(f"{{{NS_2}}}ph")] == ["7", "8"]  # the words reversed, the codes not
    assert "".join(target.itertext()).split()[0] == "FOUR."


STRICT_12 = f"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="eurlex" source-language="en" datatype="plaintext">
    <body>
{"".join(f'      <trans-unit id="e{k}"><source>{line}</source></trans-unit>{chr(10)}' for k, line in enumerate(EURLEX))}      <trans-unit id="s"><source>Two dogs. A cat.</source><seg-source><mrk mtype="seg" mid="0">Two dogs.</mrk> <mrk mtype="seg" mid="1">A <g id="5">black cat</g>.</mrk></seg-source></trans-unit>
    </body>
  </file>
</xliff>
""".encode()


@pytest.mark.parametrize(
    "name, data, schemas",
    [
        ("strict.xlf", STRICT_12, ("xliff-core-1.2-strict.xsd", "xliff-core-1.2-transitional.xsd")),
        ("report.xlf", XLIFF_12, ("xliff-core-1.2-transitional.xsd",)),  # an Okapi attribute: not strict
        ("app.xliff", XLIFF_2, ("xliff-core-2.0.xsd",)),
    ],
)
def test_a_translated_file_is_valid_by_the_oasis_schemas_its_source_is_valid_by(name, data, schemas):
    asked = [{}, {"state_qualifier": "mt-suggestion"}, {"proposals": True}, {"retranslate": True}]
    for each in schemas:
        assert schema(each).validate(etree.fromstring(data)), (each, schema(each).error_log)
        for options in asked:
            out = translated(name, data, **options)
            assert schema(each).validate(etree.fromstring(out)), (each, options, schema(each).error_log)


def test_a_target_written_says_the_machine_s_suggestion_where_the_call_asks():
    out = units_of(translated("report.xlf", XLIFF_12, state_qualifier="mt-suggestion"), NS_12, "trans-unit")
    assert out["1"].find(f"{{{NS_12}}}target").get("state-qualifier") == "mt-suggestion"
    segments = etree.fromstring(translated("app.xliff", XLIFF_2, state_qualifier="mt-suggestion")).iter(
        f"{{{NS_2}}}segment"
    )
    assert {s.get("subState") for s in segments if s.get("state") == "translated"} == {"rnnsearch:mt-suggestion"}
    with pytest.raises(DocumentError, match="state_qualifier: 'approved' is not one of leveraged-mt, mt-suggestion"):
        ReadOptions("fr", state_qualifier="approved")
