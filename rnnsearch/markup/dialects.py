"""The markups a line can be read as, one entry each of `DIALECTS`: what sets one apart
from another, as data that the reader (parsing.py) and the writer (placing.py) consult
instead of asking which markup they have.

A dialect says which elements have no end tag, which hold text up to their end tag (kept
whole), whether tag names are compared without case, how the text between tags reads
(its character references decoded as HTML decodes them, or the text as written), whether
it holds to XML's well-formedness (no bare "<" or "&", only XML's five entities, every
reference ended by ";" and naming a character XML allows), and how a target word is
escaped as it is written back. Adding a markup is one entry here, and its tests.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
"""HTML's elements that have no end tag."""

TEXT_ELEMENTS = frozenset({"textarea", "xmp"})
"""HTML's elements whose content is text and never tags (a form field's value, an
obsolete literal block): shown, but kept whole, untranslated."""


KEPT_ELEMENTS = frozenset({"code", "kbd", "samp", "var", "svg", "math"})
"""HTML's phrasing elements whose content is code, input, output, a variable's name, a
drawing or a formula rather than prose: kept whole, untranslated, as the content of
`translate="no"` is."""

KEPT_CLASSES = frozenset({"notranslate"})
"""Classes that mark an element untranslated, as `translate="no"` does (the class the
translation services of browsers honour)."""

RAW_TEXT_ELEMENTS = frozenset({"script", "style"})
"""HTML's raw text elements whose content is code, shown nowhere: passed through untouched."""


def escape(text: str) -> str:
    """Text as markup: "&", "<" and ">" as character references."""
    return html.escape(text, quote=False)


def _as_written(text: str) -> str:
    return text


@dataclass(frozen=True)
class Dialect:
    """One markup's rules (see the module docstring).

    void_elements: elements that have no end tag
    text_elements: elements whose content is text up to their end tag, kept whole
    kept_elements: elements kept whole, untranslated, whatever their attributes say
    kept_classes:  classes that keep an element whole, untranslated
    folds_case:    tag names compared without case
    text:          the text between tags as it reads (references decoded, or as written)
    well_formed:   XML's rules for text and references hold
    escape:        a target word as it is written back
    """

    name: str
    void_elements: frozenset[str] = frozenset()
    text_elements: frozenset[str] = frozenset()
    kept_elements: frozenset[str] = frozenset()
    kept_classes: frozenset[str] = frozenset()
    folds_case: bool = False
    text: Callable[[str], str] = _as_written
    well_formed: bool = False
    escape: Callable[[str], str] = escape

    def kept_whole(self, tag: str, attrs: tuple[tuple[str, str | None], ...]) -> str | None:
        """Why an element is kept whole, untranslated: "raw" for a script or a stylesheet,
        "untranslated" for one marked translate="no", one of the text elements (html's
        textarea and xmp) and kept elements (html's code, kbd, samp, var, svg and math),
        and one of a class kept (html's notranslate); None for any other."""
        if tag in RAW_TEXT_ELEMENTS:
            return "raw"
        if tag in self.text_elements or tag in self.kept_elements:
            return "untranslated"
        if any(name == "translate" and (value or "").strip().lower() == "no" for name, value in attrs):
            return "untranslated"
        if any(name == "class" and self.kept_classes.intersection((value or "").split()) for name, value in attrs):
            return "untranslated"
        return None


DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        Dialect("xml", well_formed=True),
        Dialect(
            "html",
            void_elements=VOID_ELEMENTS,
            text_elements=TEXT_ELEMENTS,
            kept_elements=KEPT_ELEMENTS,
            kept_classes=KEPT_CLASSES,
            folds_case=True,
            text=html.unescape,
        ),
    )
}
"""Each markup a line can be read as, by the name `--markup` and `markup=` give it."""
