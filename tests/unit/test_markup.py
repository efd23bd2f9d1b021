"""Markup through translation: parsing a tagged line, and putting its tags back around the
words aligned to the ones they enclosed (rnnsearch/markup.py)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.alignments.words import align_translation
from rnnsearch.decoding.results import Translation
from rnnsearch.markup import MarkupError, parse, place, transfer
from rnnsearch.translation.text_translation import put_markup_back
from tests.conftest import python_calls

LINES = [
    "Ein Hund läuft.",
    "Ein <b>kleiner</b> Hund läuft.",
    '<a href="https://example.org/?a=1&amp;b=2"  title=\'x "y"\'>Ein Hund</a> &amp; &#38; &#x26; &lt;eine&gt; Katze',
    "fahr<b>e</b>n <I>und</I> <SPAN class=x>gehen</SPAN>",
    "Zeile<br/>zwei <img src=\"a.png\" alt=''/> <!-- ein Kommentar --> Ende",
    "  Leerzeichen   <i> vor </i>  und nach  ",
    "<p><b><i>ganz</i></b> innen</p>",
    "",
    "<br/>",
    "zwei\nZeilen <b>über\nzwei</b>\r\n <!-- und\nmehr -->",
    "<![CDATA[x]]> <?pi x?> <!DOCTYPE x>",
]


@pytest.mark.parametrize("line", ["</>", "</> a", "a </> b", "<!", "a </", "<>", "x &#xZZ; y"])
def test_what_html_parser_passes_over_is_kept_as_text_in_html_and_refused_in_xml(line):
    assert parse(line, "html").line == line and parse(line, "html").text == line
    with pytest.raises(MarkupError, match="is not XML"):
        parse(line, "xml")


@pytest.mark.parametrize("line", LINES)
def test_parsing_and_writing_back_gives_the_line_byte_for_byte(line):
    marked = parse(line, "xml")
    assert marked.line == line and "".join(marked.segments) == line


def test_the_text_to_translate_has_references_decoded_tags_left_out_and_standalone_tags_as_breaks():
    marked = parse(LINES[2], "xml")
    assert marked.text == "Ein Hund & & & <eine> Katze"
    assert parse("Zeile<br/>zwei", "xml").words == ["Zeile", "zwei"]
    assert parse("fahr<b>e</b>n", "xml").words == ["fahren"]
    assert parse("a&nbsp;b", "html").words == ["a", "b"]


def test_elements_cover_whole_words_and_know_their_parents():
    marked = parse("<p>fahr<b>e</b>n <i>schnell</i></p> heim", "xml")
    spans = [(e.start_tag, e.first, e.stop, e.parent) for e in marked.elements]
    assert spans == [("<p>", 0, 2, None), ("<b>", 0, 1, 0), ("<i>", 1, 2, 0)]
    boundaries = [(e.start_tag, e.first, e.stop) for e in parse("<br/>a <x></x>b c<br/>", "xml").elements]
    assert boundaries == [("<br/>", 0, 0), ("<x>", 1, 1), ("<br/>", 3, 3)]
    # items of a list written one against the other are words of their own; a word's
    # parts in elements of their own stay one word
    assert parse("<ul><li>one</li><li>two</li></ul>", "html").words == ["one", "two"]
    assert parse("<UL><LI>one</LI><LI>two</LI></UL>", "html").words == ["one", "two"]
    assert parse('<r n="1">Fuß</r><r n="2">ball</r>', "xml").words == ["Fußball"]


@pytest.mark.parametrize(
    ("line", "markup", "problem"),
    [
        ("ein <b>Hund", "xml", "<b> is never closed"),
        ("<b>ein <i>Hund</b></i>", "xml", "</b> closes <i>, which needs its own end tag first"),
        ("ein</b> Hund", "xml", "</b> closes nothing"),
        ("<B>ein</b>", "xml", "</b> closes <B>"),
        ("Tom & Jerry", "xml", "a bare '&'"),
        ("3 < 4", "xml", "a bare '<'"),
        ("a&nbsp;b", "xml", "'&nbsp;' is not one of XML's entities"),
        ("AT&T rocks", "xml", "'&T' is not one of XML's entities"),
        ("ein<br>Hund", "xml", "<br> is never closed"),
    ],
)
def test_bad_markup_is_one_error_saying_what(line, markup, problem):
    with pytest.raises(MarkupError, match=problem) as raised:
        parse(line, markup)
    assert "\n" not in str(raised.value)


def test_html_knows_its_void_elements_case_and_named_references():
    marked = parse("ein<br>Hund <B>läuft</b> &nbsp;heim", "html")
    assert [(e.start_tag, e.end_tag) for e in marked.elements] == [("<br>", None), ("<B>", "</b>")]
    assert marked.words == ["ein", "Hund", "läuft", "heim"]


IDENTITY = [(k, k) for k in range(10)]


@pytest.mark.parametrize(
    ("source", "target", "links", "expected"),
    [
        # each tag around the target words aligned to its own
        ("Ein <b>kleiner</b> Hund", "A small dog", IDENTITY, "A <b>small</b> dog"),
        # nested, and following a reordering
        ("Ein <b>Hund <i>läuft</i></b> schnell", "A dog runs fast", IDENTITY, "A <b>dog <i>runs</i></b> fast"),
        ("<b>Hund</b> <i>läuft</i>", "runs dog", [(0, 1), (1, 0)], "<i>runs</i> <b>dog</b>"),
        # adjacent elements stay adjacent
        ("<b>a</b> <i>b</i> c", "A B C", IDENTITY, "<b>A</b> <i>B</i> C"),
        # two elements in one word: the later one yields, and takes the next word free (rule 5);
        # the earlier keeps to its own characters, which the translation's word begins with
        ("<b>a</b><i>b</i> c", "AB C", IDENTITY, "<b>A</b>B <i>C</i>"),
        # a span spreads over the words between its first and last aligned word
        ("<b>rot und</b> blau", "red x and blue", [(0, 0), (1, 2), (2, 3)], "<b>red x and</b> blue"),
        # a tag inside a word, and subwords of one word: the whole word
        ("fahr<b>e</b>n wir", "we drive", [(0, 1), (1, 0)], "we <b>drive</b>"),
        # begun or ended inside a word: inside the translation's word where it is copied through
        # (a superscript, a footnote's call, a name), else the whole word
        ('ISA<g id="1">2</g> actions.', "les actions ISA2.", [(0, 2), (1, 1)], 'les actions ISA<g id="1">2</g>.'),
        ("Der <b>Fuß</b>ball rollt.", "Der Fußball rollt.", IDENTITY, "Der <b>Fuß</b>ball rollt."),
        ("Der <b>Fuß</b>ball rollt.", "The football rolls.", IDENTITY, "The <b>football</b> rolls."),
        (
            'the study<g id="2">7</g>, on',
            "l'étude de 20147, sur",
            [(0, 0), (1, 2), (2, 3)],
            'l\'étude de 2014<g id="2">7</g>, sur',
        ),
        ("(ISA<b>2</b>)", "(ISA2)", [(0, 0)], "(ISA<b>2</b>)"),
        ("x<b>y z</b>w", "xy zw", IDENTITY, "x<b>y z</b>w"),
        ("x<b>y z</b>w", "Y zw", IDENTITY, "<b>Y z</b>w"),
        # items of a list written one against the other are words of their own, written
        # against each other again, in whatever order the translation puts them
        (
            "<m><u>Setup</u><u>Users</u></m>.",
            "Config Utilisateurs.",
            IDENTITY,
            "<m><u>Config</u><u>Utilisateurs</u></m>.",
        ),
        (
            "<ph>Analytics</ph><ph>lenses</ph>.",
            "perspectives Analytics.",
            [(0, 1), (1, 0)],
            "<ph>perspectives</ph><ph>Analytics</ph>.",
        ),
        ("<ph>X</ph> <ph>Y</ph>", "X Y", IDENTITY, "<ph>X</ph> <ph>Y</ph>"),
        # around the whole sentence: around the whole translation, unaligned ends included
        ("<p>Ein Hund</p>", "Well , a dog", [(0, 2), (1, 3)], "<p>Well , a dog</p>"),
        # words aligned to nothing: the word after the boundary after the previous aligned word
        ("Ein <b>ganz</b> Hund", "A dog", [(0, 0), (2, 1)], "A <b>dog</b>"),
        # standalone tags after the word before them, and at the edges, spaced as the source spaced them
        ("<br/>Ein<br/>Hund<br/>", "A dog", IDENTITY, "<br/>A<br/>dog<br/>"),
        ("Ein <!-- c --> Hund", "A dog", IDENTITY, "A<!-- c --> dog"),
        # crossing siblings: the later one keeps the part after the earlier one, and where
        # none is left, the earlier one's edge word on its side (rule 5)
        ("<b>a b</b> <i>c</i>", "A C B", [(0, 0), (1, 2), (2, 1)], "<b>A C</b> <i>B</i>"),
        ("<b>a</b> b <i>c d</i>", "A D B C", [(0, 0), (1, 2), (2, 3), (3, 1)], "<b>A</b> <i>D B C</i>"),
        ("<b>a c</b> <i>b</i>", "A B C", [(0, 0), (1, 2), (2, 1)], "<b>A B</b> <i>C</i>"),
        # an edge word held by the earlier one's child is not given: the other edge is
        ("<b>a <i>b</i> c</b> <u>d</u>", "A B", [(0, 0), (1, 0), (2, 1), (3, 1)], "<b><i>A</i></b> <u>B</u>"),
        ("<b><i>a</i> b</b> <u>d</u>", "A B", [(0, 1), (1, 0), (2, 0)], "<u>A</u> <b><i>B</i></b>"),
        # a child cut to its parent's span
        ("<b>a <i>b</i></b> c", "A C B", [(0, 0), (1, 2), (2, 1)], "<b>A C <i>B</i></b>"),
        ("<b>a</b> <i>b</i>", "A B", [(0, 1), (1, 0)], "<i>A</i> <b>B</b>"),
        # no links at all: at the same relative position
        ("a <br/>b c d", "w x y z", [], "w <br/>x y z"),
        ("a b <br/>c", "t u v w x y", [], "t u v w <br/>x y"),
        # an empty translation keeps every tag
        ("<b>a</b><br/>", "", IDENTITY, "<b></b><br/>"),
        # text is escaped, attributes kept as written
        ('<a href="?a=1&amp;b=2">x</a>', "<&>", IDENTITY, '<a href="?a=1&amp;b=2">&lt;&amp;&gt;</a>'),
    ],
)
def test_tags_go_where_the_rules_say(source, target, links, expected):
    assert transfer(parse(source, "xml"), target.split(), links) == expected


def tag_counts(line: str) -> Counter:
    return Counter((element.start_tag, element.end_tag) for element in parse(line, "xml").elements)


@st.composite
def tagged_lines(draw) -> tuple[str, int]:
    """A well-formed line of words with nested, adjacent, empty and standalone tags."""
    words = draw(st.lists(st.sampled_from(["a", "b&c", "d<e", "fg", "hé"]), min_size=0, max_size=8))
    names = ["b", "i", "span", "a"]
    parts: list[str] = []
    open_tags: list[str] = []
    for word in words:
        for _ in range(draw(st.integers(0, 2))):
            choice = draw(st.integers(0, 3))
            if choice == 0 and open_tags:
                parts.append(f"</{open_tags.pop()}>")
            elif choice == 1:
                parts.append(draw(st.sampled_from(["<br/>", "<img src=\"x.png\" alt='&quot;'/>", "<!-- c -->"])))
            else:
                name = draw(st.sampled_from(names))
                attribute = draw(st.sampled_from(["", ' class="x"', " href='y?a=1&amp;b=2'"]))
                parts.append(f"<{name}{attribute}>")
                open_tags.append(name)
        parts.append(word.replace("&", "&amp;").replace("<", "&lt;") + draw(st.sampled_from(["", " ", "  "])))
    parts.extend(f"</{name}>" for name in reversed(open_tags))
    return "".join(parts), len(words)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_alignment_or_weights_give_well_formed_output_with_the_same_tags(data):
    line, _ = data.draw(tagged_lines())
    marked = parse(line, "xml")
    sources = len(marked.words)
    target = data.draw(st.lists(st.sampled_from(["x", "y&z", "<w>", "v"]), min_size=0, max_size=9))
    pairs = st.tuples(st.integers(0, max(sources - 1, 0)), st.integers(0, max(len(target) - 1, 0)))
    links = data.draw(st.lists(pairs, max_size=12)) if sources and target else []
    weights = None
    if data.draw(st.booleans()):  # placed by weights, with or without a reverse model
        from rnnsearch.markup import WordWeights

        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        forward, backward = rng.random((len(target), sources)), rng.random((sources, len(target)))
        weights = WordWeights(forward, backward if data.draw(st.booleans()) else None)
    output = transfer(marked, target, links, weights=weights)
    placed = parse(output, "xml")  # well-formed, or this raises
    assert placed.words == target
    assert tag_counts(output) == tag_counts(line)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_an_element_that_held_words_holds_a_word_of_the_translation_wherever_there_are_enough(data):
    """Rule 5: however the links or the weights fall, no element that held words comes
    back empty (a link with no text, an emphasis a reader sees as bare asterisks) where
    the translation has a word for each."""
    words = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=8))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(words)), max_size=6)))
    wrapped = set(data.draw(st.sets(st.integers(0, max(len(cuts) - 2, 0)))))
    pieces, position = [], 0
    for k, (start, stop) in enumerate(zip(cuts, cuts[1:])):
        pieces += words[position:start]
        pieces.append(
            f"<b>{' '.join(words[start:stop])}</b>" if k in wrapped and stop > start else " ".join(words[start:stop])
        )
        position = stop
    pieces += words[position:]
    marked = parse(" ".join(piece for piece in pieces if piece), "xml")
    holding = [element for element in marked.elements if element.has_words]
    target = ["x"] * data.draw(st.integers(len(holding), len(holding) + 4))
    pairs = st.tuples(st.integers(0, len(marked.words) - 1), st.integers(0, len(target) - 1))
    links = data.draw(st.lists(pairs, max_size=10)) if target else []
    weights = None
    if target and data.draw(st.booleans()):
        from rnnsearch.markup import WordWeights

        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        weights = WordWeights(rng.random((len(target), len(marked.words))) ** 4)
    spans = place(marked, len(target), links, weights=weights)
    assert all(stop > start for (start, stop), element in zip(spans, marked.elements) if element.has_words)


@pytest.mark.parametrize("markup", ["html", "xml"])
def test_scripts_and_styles_pass_through_untouched_and_untranslated(markup):
    script = "<script>if (a < b && c) go('&amp;');</script>"
    line = f"Ein {script} Hund <style>p > a {{ color: red }}</style>läuft."
    marked = parse(line, markup)
    assert marked.words == ["Ein", "Hund", "läuft."]
    assert [e.start_tag for e in marked.elements] == [script, "<style>p > a { color: red }</style>"]
    assert (
        transfer(marked, ["A", "dog", "runs."], IDENTITY) == f"A{script} dog<style>p > a {{ color: red }}</style> runs."
    )


@pytest.mark.parametrize("markup", ["html", "xml"])
def test_what_is_marked_translate_no_is_kept_whole_and_breaks_words(markup):
    kept = '<span translate="no">Acme <b>Widget</b> &amp; Co</span>'
    marked = parse(f"Das{kept}ist <i translate='yes'>gut</i>", markup)
    assert marked.words == ["Das", "ist", "gut"]
    assert [e.start_tag for e in marked.elements] == [kept, "<i translate='yes'>"]
    assert transfer(marked, ["That", "is", "good"], IDENTITY) == f"That {kept} is <i translate='yes'>good</i>"
    with pytest.raises(MarkupError, match="</span> closes <b>"):
        parse('<span translate="no">a <b>b</span></b>', markup)
    with pytest.raises(MarkupError, match="is never closed"):
        parse("a <script>b", markup)


@pytest.mark.parametrize("markup", ["html", "xml"])
def test_an_element_kept_whole_keeps_a_space_on_either_side(markup):
    """A browser showed "A manRudi Völler": the kept name was glued to the word before it."""
    kept = '<span translate="no">Rudi Völler</span>'
    marked = parse(f"Ein Mann {kept} spielt Fußball.", markup)
    output = transfer(marked, ["A", "man", "is", "outside."], [(0, 0), (1, 1), (2, 2), (3, 3)])
    assert output == f"A man {kept} is outside."
    assert transfer(parse(f"{kept} spielt", markup), ["plays"], [(0, 0)]) == f"{kept} plays"


def test_an_element_kept_whole_takes_the_punctuation_the_source_had_touch_it_without_a_space():
    code, name = '<c translate="no">grep</c>', '<k translate="no">%(name)s</k>'
    marked = parse(f"Nutze ({code}), „{name}“ und {code}-Befehle, nicht {code} .", "xml")
    assert marked.words == ["Nutze", "(", "grep", "),", "„", "“", "und", "grep", "-Befehle,", "nicht", "grep", "."]
    target = ["Use", "(", "grep", "),", "“", "”", "and", "grep", "-commands,", "not", "grep", "."]
    links = [(k, k) for k in range(len(target))]  # the name, no word of its own, stands between the quotes
    assert transfer(marked, target, links) == f"Use ({code}), “{name}” and {code}-commands, not {code} ."
    assert transfer(parse(f"Danke {name}!", "xml"), ["Thanks", "!"], [(0, 0), (1, 1)]) == f"Thanks {name}!"
    assert transfer(parse(f"Danke {name} !", "xml"), ["Merci", "!"], [(0, 0), (1, 1)]) == f"Merci {name} !"


def test_a_footnote_call_before_punctuation_goes_to_the_end_of_the_clause_in_the_translation():
    marked = parse('The current air quality legislation<x id="2"/>, and more.', "xml")
    apart = "la législation actuelle en matière de qualité de l’air , et plus.".split()
    links = [(0, 0), (1, 2), (2, 8), (3, 6), (4, 1), (5, 9), (6, 10), (7, 11)]
    expected = 'la législation actuelle en matière de qualité de l’air<x id="2"/>, et plus.'
    assert transfer(marked, apart, links) == expected
    held = "la législation actuelle en matière de qualité de l’air, et plus.".split()  # the comma on its word
    assert transfer(marked, held, [(0, 0), (1, 2), (2, 8), (3, 6), (4, 1), (5, 8), (6, 9), (7, 10)]) == expected
    spaced = parse('The legislation<x id="2"/> and more.', "xml")  # no punctuation touches it: after its word
    assert transfer(spaced, "la législation et plus.".split(), [(0, 0), (1, 1), (2, 2), (3, 3)]) == (
        'la législation<x id="2"/> et plus.'
    )


@pytest.mark.parametrize("element", ["textarea", "xmp"])
def test_textarea_and_xmp_hold_text_in_html_kept_whole(element):
    kept = f"<{element}>a <b>b</i> & c</{element}>"
    marked = parse(f"Ein {kept} Hund", "html")
    assert marked.words == ["Ein", "Hund"] and marked.line == f"Ein {kept} Hund"
    assert transfer(marked, ["A", "dog"], IDENTITY) == f"A {kept} dog"
    with pytest.raises(MarkupError, match="</i> closes <b>"):
        parse(f"Ein {kept} Hund", "xml")


def test_html_decodes_references_as_html_does_and_xml_refuses_what_xml_forbids():
    assert parse("Tom &amp Jerry &amp", "html").text == "Tom & Jerry &"
    assert parse("&#0; &#xD800;", "html").text == "\ufffd \ufffd"
    for reference in ("&#0;", "&#x110000;", "&#xD800;", "&#xFFFE;", "&#99999999999999999999;"):
        with pytest.raises(MarkupError, match="a character XML does not allow"):
            parse(f"a {reference} b", "xml")
    with pytest.raises(MarkupError, match="a character reference ends with ';'"):
        parse("a &#65 b", "xml")
    assert parse("&#9;&#x1F600;&#65;", "xml").text == "\t\U0001f600A"


def test_markup_nested_deeper_than_pythons_recursion_limit_is_read_and_placed():
    depth = 5000
    marked = parse("<b>" * depth + "Hund" + "</b>" * depth + " läuft", "xml")
    assert transfer(marked, ["dog", "runs"], IDENTITY) == "<b>" * depth + "dog" + "</b>" * depth + " runs"


SHAPES = {
    "empty siblings": lambda n: "Ein " + "<i></i>" * n + " Hund",
    "siblings with words": lambda n: " ".join(f"<i>w{k}</i>" for k in range(n)),
    "nested": lambda n: "<b>" * n + "x" + "</b>" * n + " y",
    "nested around words": lambda n: "y " + "<b>" * n + "x " * n + "</b>" * n,
    "crossing siblings": lambda n: " ".join(f"<i>w{k} v{k}</i>" for k in range(n)),
    "left open": lambda n: "Ein Hund " + "<a " * n,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_reading_and_placing_take_steps_linear_in_the_markup(shape):
    """Twice the markup takes at most about twice the steps per tag, on every shape that
    once took time quadratic in it (steps counted, not seconds; the parser's own scans,
    in C, count once each, so the unclosed tags are timed by bench/markup.py)."""

    def steps(n: int) -> float:
        line = SHAPES[shape](n)

        def work():
            marked = parse(line, "html")
            targets = len(marked.words)
            crossing = [(k, targets - 1 - k) for k in range(targets)]  # reversed: every span meets others
            transfer(marked, [f"t{k}" for k in range(targets)], crossing)

        return python_calls(work) / n

    small, large = steps(400), steps(1600)
    assert large <= 1.25 * small, (small, large)


@pytest.mark.parametrize(("reading", "expected"), [("output", "<b>x</b> y"), ("input", "x <b>y</b>")])
def test_markup_is_placed_by_the_reading_asked_for_and_its_links_are_kept(reading, expected):
    """Row i of α outputs target word i, row i + 1 takes it as input: here they point at
    different source words, so the two readings place the tag differently."""
    translation = Translation(
        source="a b",
        text="x y",
        score=0.0,
        source_tokens=["▁a", "▁b", "</s>"],
        target_tokens=["▁x", "▁y", "</s>"],
        alignment=np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    )
    put_markup_back(parse("<b>a</b> b", "xml"), translation, reading=reading)
    assert translation.marked_up == expected
    assert translation.words.pairs == align_translation(translation, reading=reading).pairs


def test_a_markup_is_one_entry_of_the_dialects(monkeypatch):
    """A dialect's rules are data the reader and the writer consult: XHTML, say, is XML's
    well-formedness with HTML's void elements, and needs no other change."""
    from rnnsearch.markup import DIALECTS, Dialect, MarkupOptions
    from rnnsearch.markup.dialects import VOID_ELEMENTS

    monkeypatch.setitem(DIALECTS, "xhtml", Dialect("xhtml", void_elements=VOID_ELEMENTS, well_formed=True))
    marked = MarkupOptions.of("xhtml", False).lines(["Zeile<br>zwei <b>fett</b> &amp; Ende"])[0]
    assert marked.words == ["Zeile", "zwei", "fett", "&", "Ende"]
    assert transfer(marked, ["Line", "two", "bold", "&", "end"], IDENTITY) == ("Line<br>two <b>bold</b> &amp; end")
    with pytest.raises(MarkupError, match="not XML"):
        parse("a & b", "xhtml")
    with pytest.raises(MarkupError, match="closes"):
        parse("<B>a</b>", "xhtml")  # XML's names keep their case


def test_weights_place_an_element_around_the_words_that_hold_it_not_the_hull_of_its_links():
    """Source "a <b>bee cee</b> d", target "A B C D". A stray weak link from c to D stretched
    the hull of links over D; a missing link from b to B sent the element to C alone. The
    weights hold B and C for the element, and D for d."""
    from rnnsearch.markup import WordWeights

    marked = parse("a <b>bee cee</b> d", "xml")  # words the target does not copy (wording.py)
    forward = np.array(
        [
            [0.9, 0.05, 0.0, 0.05],  # A: a
            [0.0, 0.6, 0.3, 0.1],  # B: b (no hard link from b below)
            [0.0, 0.2, 0.7, 0.1],  # C: c
            [0.05, 0.0, 0.25, 0.7],  # D: d, with a weak pull towards c
        ]
    )
    stray = [(0, 0), (2, 2), (2, 3), (3, 3)]  # c also hard-linked to D; b linked to nothing
    targets = ["A", "B", "C", "D"]
    assert transfer(marked, targets, stray) == "A B <b>C D</b>"
    assert transfer(marked, targets, stray, weights=WordWeights(forward)) == "A <b>B C</b> D"
    backward = forward.T.copy()  # a reverse model that agrees
    assert transfer(marked, targets, stray, weights=WordWeights(forward, backward)) == "A <b>B C</b> D"


def test_an_element_goes_around_the_words_the_translation_copies_nearest_to_its_links():
    marked = parse("Use the <codeph>RelayState</codeph> parameter, not <b>RelayState.</b>", "xml")
    target = "Utilisez le paramètre RelayState, pas RelayState.".split()
    links = [(0, 0), (1, 1), (2, 2), (2, 3), (3, 2), (4, 4), (5, 5)]  # RelayState also linked to paramètre
    assert transfer(marked, target, links) == (
        "Utilisez le paramètre <codeph>RelayState</codeph>, pas <b>RelayState.</b>"
    )
    assert place(marked, len(target), links) == [(2, 4), (5, 6)]  # without the words: by the links alone
    nested = parse("<b>Open <ph>Lightning</ph></b>", "xml")
    assert transfer(nested, ["Lightning", "ouvrir", "Lightning"], [(0, 1), (1, 2)]) == (
        "<b>Lightning ouvrir <ph>Lightning</ph></b>"
    )


def test_punctuation_alone_at_an_edge_is_an_element_s_only_where_its_own_text_ends_with_some():
    target = "Spécifiez le type de redirection :".split()
    marked = parse("Specify the <parmname>redirect type</parmname>:", "xml")  # "type:" one word, ":" not its own
    links = [(0, 0), (1, 1), (2, 4), (3, 2), (3, 5)]
    assert transfer(marked, target, links) == "Spécifiez le <parmname>type de redirection</parmname> :"
    own = parse("<b>Undo the migration:</b> if", "xml")
    assert transfer(own, ["Annuler", "la", "migration", ":", "si"], [(0, 0), (1, 1), (2, 2), (2, 3), (3, 4)]) == (
        "<b>Annuler la migration :</b> si"
    )
    assert [e.punctuated for e in parse("<i>«Note»</i> <b>x</b>: <i>a (b)</i>", "xml").elements] == [
        (True, True),
        (False, False),
        (False, True),
    ]


def test_joined_pairs_place_as_their_weights_down_one_diagonal_and_weigh_only_their_own_pairs():
    """A paragraph's sentences' weights kept apart place every element as the one matrix
    with each sentence's block on its diagonal would, and an element's words are weighed
    against the target words of their own sentences only."""
    from rnnsearch.markup import JoinedWeights, WordWeights, place

    rng = np.random.default_rng(3)
    for _ in range(20):
        shapes = [(int(rng.integers(0, 6)), int(rng.integers(1, 6))) for _ in range(int(rng.integers(1, 5)))]
        parts = [WordWeights(rng.dirichlet(np.ones(s), size=t) * 0.95) for t, s in shapes]
        diagonal = np.zeros((sum(t for t, _ in shapes), sum(s for _, s in shapes)))
        row = column = 0
        for (t, s), part in zip(shapes, parts, strict=True):
            diagonal[row : row + t, column : column + s] = part.forward
            row, column = row + t, column + s
        words = [f"w{k}" for k in range(column)]
        spans = sorted({tuple(sorted(rng.integers(0, column + 1, size=2))) for _ in range(4)})
        marked = parse(_marked_up(words, [span for span in spans if span[0] < span[1]]), "xml")
        joined = JoinedWeights(tuple(parts))
        assert place(marked, row, [], weights=joined) == place(marked, row, [], weights=WordWeights(diagonal))
    sentence = WordWeights(np.full((3, 2), 0.4))
    offset, linked = JoinedWeights((sentence, sentence, sentence)).window(2, 4)  # the second sentence's words
    assert offset == 3 and linked.shape == (3,)


def _marked_up(words: list[str], spans: list[tuple[int, int]]) -> str:
    """`words` with a <b> around each of `spans` that does not cross an earlier one."""
    kept: list[tuple[int, int]] = []
    for span in spans:
        if all(not (a < span[0] < b < span[1] or span[0] < a < span[1] < b) for a, b in kept):
            kept.append(span)
    parts = []
    for position, word in enumerate(words + [""]):
        parts += ["</b>"] * sum(stop == position for _, stop in kept)
        parts += ["<b>"] * sum(start == position for start, _ in kept)
        parts.append(f" {word}" if word else "")
    return "".join(parts).strip()


def test_the_default_placement_is_the_measured_best_for_what_is_read():
    """On a module's rows, `tempered` (the mean of two directions' weights, the module's
    table read looser); on the attention's, the links; a placement asked for, by name or
    as a Placement, whatever is read; an unknown name refused, naming the known ones."""
    from rnnsearch.alignments.counted_jumps import PLACING
    from rnnsearch.markup import PLACEMENTS, checked_placement, chosen_placement

    tempered = chosen_placement(None, from_module=True)
    assert (tempered.name, tempered.by_weights, tempered.mean, tempered.temper) == ("tempered", True, True, PLACING)
    assert chosen_placement(None, from_module=False) is PLACEMENTS["links"]
    assert chosen_placement(checked_placement("links"), from_module=True) is PLACEMENTS["links"]
    assert checked_placement(PLACEMENTS["weights"]) is PLACEMENTS["weights"]
    with pytest.raises(ValueError, match="placement: 'hull' is not one of links, weights, averaged, tempered"):
        checked_placement("hull")


def test_each_placement_reads_the_weights_it_names():
    """`links` reads none; `weights` one direction's, or the lesser of two (a link both
    must hold); `averaged` and `tempered` the mean of two (a word either holds); an element
    of one source word is placed by the weights read for one word, where they are given."""
    from rnnsearch.alignments.words import WordAlignment
    from rnnsearch.markup import PLACEMENTS, Reading

    forward = np.array([[0.9, 0.0], [0.1, 0.6]])
    backward = np.array([[0.5, 0.0], [0.3, 0.8]])  # source words × target words
    ahead = Reading(WordAlignment(["a", "b"], ["x", "y"], forward, []))
    back = Reading(WordAlignment(["x", "y"], ["a", "b"], backward, []))
    assert PLACEMENTS["links"].weights(ahead, back) is None
    lesser = PLACEMENTS["weights"].weights(ahead, back)
    assert np.allclose(lesser.link_probabilities(0, 1), [0.5, 0.0])
    for name in ("averaged", "tempered"):
        mean = PLACEMENTS[name].weights(ahead, back)
        assert np.allclose(mean.link_probabilities(0, 1), [0.7, 0.05])
        assert np.allclose(PLACEMENTS[name].weights(ahead).forward, forward)
    one_word = Reading(ahead.words, np.array([[0.1, 0.0], [0.9, 0.6]]))
    read = PLACEMENTS["tempered"].weights(one_word, back)
    assert np.allclose(read.link_probabilities(0, 1), [0.3, 0.45])  # the mean of one word's readings
    assert np.allclose(
        read.link_probabilities(0, 2), PLACEMENTS["tempered"].weights(ahead, back).link_probabilities(0, 2)
    )


def _span_chance(linked: np.ndarray, span: tuple[int, int] | None) -> float:
    """The probability of a span as the likeliest hull reads it: its edge words linked,
    every word outside it not, and each word inside it linked or still the element's
    (UNLINKED_INSIDE); of no span, no word linked."""
    from rnnsearch.markup.weights import UNLINKED_INSIDE

    if span is None:
        return float(np.prod(1 - linked))
    start, stop = span
    edges = linked[start] * (linked[stop - 1] if stop - 1 > start else 1.0)
    inside = np.prod(linked[start + 1 : stop - 1] + (1 - linked[start + 1 : stop - 1]) * UNLINKED_INSIDE)
    return float(edges * inside * np.prod(1 - linked[:start]) * np.prod(1 - linked[stop:]))


def _likeliest_by_every_span(linked: np.ndarray) -> tuple[int, int] | None:
    """The likeliest hull found by trying every span; None where no word linked is at
    least as likely."""
    best, best_span = _span_chance(linked, None), None
    for start in range(len(linked)):
        for stop in range(start + 1, len(linked) + 1):
            chance = _span_chance(linked, (start, stop))
            if chance > best * (1 + 1e-9):
                best, best_span = chance, (start, stop)
    return best_span


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=9))
def test_the_likeliest_hull_found_in_one_pass_is_the_likeliest_of_every_span(probabilities):
    from rnnsearch.markup.weights import SURE, likeliest_hull

    linked = np.clip(np.array(probabilities), 1 - SURE, SURE)
    found, expected = likeliest_hull(linked), _likeliest_by_every_span(linked)
    if found != expected:  # a tie within rounding: both must be as likely
        assert _span_chance(linked, found) == pytest.approx(_span_chance(linked, expected), rel=1e-6)


def test_a_span_s_unlinked_words_weigh_against_it_but_a_word_between_two_linked_ones_stays():
    from rnnsearch.markup.weights import likeliest_hull

    # "Type d'enregistrement": an unlinked word between two linked ones stays in
    assert likeliest_hull(np.array([0.05, 0.9, 0.1, 0.6, 0.05])) == (1, 4)
    # the same far link after ten unlinked words no longer stretches the span to it
    assert likeliest_hull(np.array([0.05, 0.9, *[0.05] * 10, 0.6, 0.05])) == (1, 2)


def test_the_likeliest_hull_is_not_stretched_by_a_weak_link_far_from_the_others():
    from rnnsearch.markup.weights import likeliest_hull

    assert likeliest_hull(np.array([0.9, 0.8, 0.05, 0.05, 0.2])) == (0, 2)  # a stray weak link
    assert likeliest_hull(np.array([0.9, 0.8, 0.05, 0.05, 0.7])) == (0, 5)  # a likely far link
    assert likeliest_hull(np.array([0.05, 0.3, 0.05])) is None  # most likely nothing is linked
    assert likeliest_hull(np.array([0.05, 0.6, 0.05])) == (1, 2)


def test_weights_that_hold_no_word_for_an_element_leave_it_to_the_links_and_every_rule_holds():
    from rnnsearch.markup import WordWeights

    marked = parse("<i>x</i> <b>y <u>z</u></b> w", "xml")
    flat = np.full((3, 4), 0.1)  # no target word is held by any element's words
    links = [(0, 0), (1, 1), (2, 1), (3, 2)]
    assert transfer(marked, ["X", "Y", "W"], links, weights=WordWeights(flat)) == transfer(
        marked, ["X", "Y", "W"], links
    )
    crossed = np.array([[0.0, 0.0, 0.9, 0.0], [0.9, 0.0, 0.0, 0.0], [0.0, 0.9, 0.0, 0.0], [0.0, 0.0, 0.0, 0.9]])
    output = transfer(marked, ["Z", "X", "Y", "W"], [], weights=WordWeights(crossed))
    assert tag_counts(output) == tag_counts("<i>x</i> <b>y <u>z</u></b> w")  # nesting kept, nothing lost
    assert parse(output, "xml").words == ["Z", "X", "Y", "W"]


def test_a_kept_name_stands_in_the_text_the_model_reads_and_takes_the_place_of_its_translation():
    """The model reads the sentence whole (no hole where `<code>audio</code>` stood); the
    element takes the place of the target words that are its words, and where the model
    translated them otherwise, those words stay beside it rather than be lost."""
    marked = parse("Die Spezifikation definiert <code>audio</code>- und <code>video</code>-Elemente neu", "html")
    assert marked.words == ["Die", "Spezifikation", "definiert", "audio", "-", "und", "video", "-Elemente", "neu"]
    target = "The specification redefines the Audio and video elements".split()
    links = [(0, 0), (1, 1), (2, 2), (8, 2), (3, 4), (5, 5), (6, 6), (7, 7)]
    assert transfer(marked, target, links) == (
        "The specification redefines the <code>audio</code> and <code>video</code> elements"
    )
    pressed = parse("Drücke <kbd>Strg</kbd> und C.", "html")
    assert transfer(pressed, "Press Ctrl and C.".split(), [(0, 0), (1, 1), (2, 2), (3, 3)]) == (
        "Press <kbd>Strg</kbd> Ctrl and C."
    )
    assert parse("Hallo <k translate='no'>%(name)s</k> hier", "xml").words == [
        "Hallo",
        "hier",
    ]  # a placeholder does not
    long = parse("Siehe <code>" + "x " * 10 + "</code> hier", "html")
    assert long.words == ["Siehe", "hier"] and not parse("<code>nur</code>", "html").has_own_words


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("Click <uicontrol>Objects</uicontrol>.", "Cliquez Objets.", "Cliquez <uicontrol>Objets</uicontrol>."),
        ("(<b>note</b>) here", "(remarque) ici", "(<b>remarque</b>) ici"),
        ("<b>fett <i>schräg</i></b>.", "bold slanted.", "<b>bold <i>slanted</i></b>."),
        ("<b><i>(x)</i></b> y", "(x) y", "<b><i>(x)</i></b> y"),  # its own text holds the brackets
        ("<b>Undo:</b> if", "Annuler: si", "<b>Annuler:</b> si"),
        ("<b>R&amp;D</b> x", "R&D; x", "<b>R&amp;D;</b> x"),  # a word holding a reference is never split
        ("<b>stop</b>", "...", "<b>...</b>"),  # punctuation alone stays a word
    ],
)
def test_a_tag_stays_off_the_punctuation_at_its_words_edges_that_its_own_text_lacks(source, target, expected):
    words = target.split()
    assert transfer(parse(source, "xml"), words, [(k, k) for k in range(len(words))]) == expected


def test_the_nearest_copied_place_is_the_one_every_place_compared_would_give():
    """The nearest copy is found by bisection among the places that can be it; on random
    places it is the one the rule gives when every place is compared, ties to the first."""
    import random

    from rnnsearch.markup.wording import nearest

    def compared(places, span):
        def distance(place):
            overlap = min(place[1], span[1]) - max(place[0], span[0])
            gap = max(place[0] - span[1], span[0] - place[1], 0)
            return (-overlap, gap) if overlap > 0 else (1, gap)

        return min(places, key=distance)

    draw = random.Random(0)
    for _ in range(3000):
        length = draw.randint(1, 4)
        places = [(start, start + length) for start in sorted(draw.sample(range(60), draw.randint(1, 12)))]
        start = draw.randint(0, 65)
        span = (start, start + draw.randint(0, 6))
        assert nearest(places, span) == compared(places, span), (places, span)


def _best_cuts_by_every_cut(scores: np.ndarray) -> float:
    """The greatest sum `tiled` can reach, by trying every cut of the words into runs."""
    from itertools import combinations

    items, words = scores.shape
    best = -np.inf
    for cuts in combinations(range(1, words), items - 1):
        bounds = (0, *cuts, words)
        best = max(best, sum(scores[i, bounds[i] : bounds[i + 1]].sum() for i in range(items)))
    return best


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(0, 4), st.randoms(use_true_random=False))
def test_items_cut_in_one_pass_are_cut_as_well_as_by_every_cut(items, more, random):
    from rnnsearch.markup.items import tiled

    scores = np.array([[random.random() for _ in range(items + more)] for _ in range(items)])
    spans = tiled(list(scores))
    assert [start for start, _ in spans[1:]] == [stop for _, stop in spans[:-1]]  # consecutive, in order
    assert spans[0][0] == 0 and spans[-1][1] == items + more and all(a < b for a, b in spans)
    reached = sum(scores[i, a:b].sum() for i, (a, b) in enumerate(spans))
    assert reached == pytest.approx(_best_cuts_by_every_cut(scores))


def test_items_of_a_list_share_their_words_in_order_where_a_stray_link_would_take_a_neighbour_s():
    from rnnsearch.markup import WordWeights
    from rnnsearch.markup.items import item_runs

    assert item_runs(parse("<ul><li>a</li><li>b</li><li>c</li></ul>", "xml").elements) == {1: [1, 2, 3]}
    assert item_runs(parse("<b>a</b> <b>b</b> <i>c</i><i x='1'>d</i>", "xml").elements) == {}
    marked = parse("<ul><li>red apples</li><li>green pears</li></ul>", "xml")
    target = "pommes rouges poires vertes".split()
    # "red" is also linked, astray, to "poires", which both words of the second item hold
    links = [(0, 1), (1, 0), (0, 2), (2, 3), (2, 2), (3, 2)]
    assert transfer(marked, target, links) == "<ul><li>pommes rouges</li><li>poires vertes</li></ul>"
    # by the weights (a row per target word), "poires" is likelier "red"'s than not, and likelier still the pears'
    weights = np.array([[0.1, 0.9, 0.0, 0.0], [0.9, 0.1, 0.0, 0.0], [0.6, 0.0, 0.3, 0.9], [0.0, 0.0, 0.9, 0.1]])
    placed = transfer(marked, target, [], weights=WordWeights(weights))
    assert placed == "<ul><li>pommes rouges</li><li>poires vertes</li></ul>"


def test_with_one_direction_a_term_goes_around_its_likeliest_word_not_the_function_word_beside_it():
    from rnnsearch.alignments.words import WordAlignment
    from rnnsearch.markup import PLACEMENTS, Reading, WordWeights

    marked = parse("The <g>government</g> initiated it <g>while</g> others waited", "xml")
    target = "Le gouvernement a lancé cela tandis que les autres attendaient".split()
    forward = np.zeros((len(target), len(marked.words)))
    for t, s, weight in [(0, 0, 0.9), (1, 1, 0.99), (2, 1, 0.6), (2, 2, 0.3), (3, 2, 0.9), (4, 3, 0.9)]:
        forward[t, s] = weight  # "a", the auxiliary, more likely "government"'s than not
    for t, s, weight in [(5, 4, 0.95), (6, 4, 0.9), (7, 5, 0.9), (8, 5, 0.9), (9, 6, 0.9)]:
        forward[t, s] = weight  # "tandis que" translates "while" whole
    around_span = transfer(marked, target, [], weights=WordWeights(forward))
    assert "<g>gouvernement a</g>" in around_span
    ahead = Reading(WordAlignment(marked.words, target, forward, []))
    one_direction = PLACEMENTS["tempered"].weights(ahead)
    placed = transfer(marked, target, [], weights=one_direction)
    assert placed == "Le <g>gouvernement</g> a lancé cela <g>tandis que</g> les autres attendaient"
    back = Reading(WordAlignment(target, marked.words, forward.T, []))
    assert PLACEMENTS["tempered"].weights(ahead, back).one_word_peak is None  # two directions: the span


@pytest.mark.parametrize(
    ("line", "words", "spans"),
    [
        # a list begun after a colon, and a term set apart by a dash: words of their own
        ("in:<ul><li>Direct messages</li></ul>", ["in:", "Direct", "messages"], [(1, 3), (1, 3)]),
        ("<b>Name</b>—Its value", ["Name", "—Its", "value"], [(0, 1)]),
        ("the rule.<ph>For example</ph> here", ["the", "rule.", "For", "example", "here"], [(2, 4)]),
        # letters or digits on both sides, and punctuation of its own: one word, as before
        ("<b>Fuß</b>ball", ["Fußball"], [(0, 1)]),
        ("1.<b>5</b> times", ["1.5", "times"], [(0, 1)]),
        ("Hund<e>.</e> Katze", ["Hund.", "Katze"], [(1, 1)]),
        # a full stop in a run of its own before the next sentence stands after its word
        ("Hund<e>.</e>Katze", ["Hund.", "Katze"], [(1, 1)]),
    ],
)
def test_a_tag_between_punctuation_and_a_word_breaks_the_word(line, words, spans):
    marked = parse(line, "xml")
    assert marked.words == words
    assert [(e.first, e.stop) for e in marked.elements] == spans
    assert marked.line == line


def test_a_broken_word_s_element_takes_only_its_own_words_translation_and_items_stay_a_list():
    marked = parse("<codeph>error_description</codeph>—Description of the error", "xml")
    target = "error_description : description de l'erreur".split()
    # each source word linked as a model links it: the name to itself, the dash and what follows to ": description"
    linked = {"error_description": [0], "—Description": [1, 2], "of": [3], "the": [3], "error": [4]}
    linked["error_description—Description"] = [0, 1, 2]  # the words as one, where no tag broke them
    links = [(s, t) for s, word in enumerate(marked.words) for t in linked[word]]
    assert transfer(marked, target, links) == "<codeph>error_description</codeph> : description de l'erreur"
    listed = parse("<ul><li>Open it.</li><li>Close it.</li></ul>", "xml")
    assert [e.glued for e in listed.elements[1:]] == [(False, True), (True, False)]
    placed = transfer(listed, "Ouvrez-le. Fermez-le.".split(), [(0, 0), (1, 0), (2, 1), (3, 1)])
    assert placed == "<ul><li>Ouvrez-le.</li><li>Fermez-le.</li></ul>"
