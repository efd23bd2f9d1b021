"""Markdown, read with markdown-it-py (CommonMark, with tables and strikethrough): each
paragraph, heading, list item's paragraph and table cell a unit; the translation spliced
back where its text was, so that the rest of the file stays as written.

A block's inline syntax rides through as markup: emphasis, strong emphasis,
strikethrough and links are elements over the words they enclose (a link written back
in its inline form, `[text](url "title")`), inline HTML tags and hard breaks stand as
tags, and code spans, images and autolinks are kept whole, untranslated. Not translated
at all: code blocks (fenced and indented), HTML blocks, link reference definitions and
front matter (a `---` block at the top). Text of a translation that Markdown would read
as syntax (`*`, `_`, `` ` ``, `[`, `]`, `<`, `\\`) is written escaped. A block's
translation is one line: where the block ran over several lines (a hard-wrapped
paragraph, a quote), its later lines' prefixes go with them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

from rnnsearch.markup.dialects import escape
from rnnsearch.markup.formats.document import (
    KEPT,
    Document,
    ReadOptions,
    Span,
    SplicedText,
    Unit,
    bom_and_text,
    checked_size,
    checked_units,
)
from rnnsearch.markup.parsing import parse

SYNTAX = "*_`[]<\\"
"""Characters that Markdown reads as syntax in running text."""

PAIRED = {"em": "em", "strong": "strong", "s": "s"}


class MarkdownText:
    """A Markdown (CommonMark) file."""

    name = "markdown"
    extensions: tuple[str, ...] = ("md", "markdown", "mdown", "mkd")
    dialect = "xml"
    media_type = "text/markdown"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        bom, text = bom_and_text(checked_size(data, origin), origin)
        masked = _without_front_matter(text)
        parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
        line_starts = [0] + [k + 1 for k, character in enumerate(text) if character == "\n"]
        units, spans, cursor, protected, untranslated = [], [], 0, 0, 0
        for token in parser.parse(masked):
            if token.type != "inline" or token.map is None or not token.content.strip():
                protected += token.type in ("fence", "code_block", "html_block")
                continue
            found = _located(text, token, line_starts, cursor)
            if found is None:
                untranslated += 1
                continue
            start, end = found
            inline = _Inline()
            markup = inline.markup(token.children or [])
            protected += inline.kept
            units.append(Unit(markup, f"line {token.map[0] + 1}"))
            spans.append(Span(start, end, inline.render))
            cursor = end
        units = checked_units(units, origin)
        return SplicedText(text, units, spans, bom=bom, protected=protected, untranslated=untranslated)


def _without_front_matter(text: str) -> str:
    """`text` with a front matter block at its top (from a `---` line to the next `---` or
    `...` line) blanked, line for line, so that it is read as nothing."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return text
    for k in range(1, len(lines)):
        if lines[k].rstrip() in ("---", "..."):
            return "\n" * k + "\n" + "\n".join(lines[k + 1 :])
    return text


def _located(text: str, token: Token, line_starts: list[int], cursor: int) -> tuple[int, int] | None:
    """Where an inline token's content lies in the file, from its first line's text to its
    last's, at or after `cursor`; None where it is not there as written."""
    assert token.map is not None
    lines = token.content.split("\n")
    first_line, last_line = token.map[0], token.map[0] + len(lines) - 1
    if last_line >= len(line_starts):
        return None
    start = text.find(lines[0], max(cursor, line_starts[first_line]))
    if start < 0:
        return None
    last_start = text.find(lines[-1], max(start, line_starts[last_line])) if len(lines) > 1 else start
    if last_start < 0:
        return None
    return start, last_start + len(lines[-1])


@dataclass
class _Inline:
    """A block's inline tokens as a line of markup, each construct an element named m0,
    m1, … whose Markdown is remembered (`syntax`) to write its translation back."""

    syntax: dict[str, tuple[str, str]] = field(default_factory=dict)
    kept: int = 0

    def markup(self, children: list[Token]) -> str:
        pieces: list[str] = []
        open_names: list[str] = []
        skipping = 0  # inside an autolink, kept whole
        for child in children:
            if skipping:
                skipping -= child.type == "link_close"
                continue
            pieces.append(self._piece(child, open_names))
            if child.type == "link_open" and child.markup == "autolink":
                skipping = 1
        return "".join(pieces)

    def _piece(self, token: Token, open_names: list[str]) -> str:
        kind = token.type
        if kind == "text":
            return escape(token.content)
        if kind == "softbreak":
            return "\n"
        if kind == "hardbreak":
            return self._standalone("<br>")
        if kind == "code_inline":
            return self._kept(token.markup + token.content + token.markup)
        if kind == "image":
            title = token.attrs.get("title")
            return self._kept(f"![{token.content}]({token.attrs.get('src', '')}{_title(title)})")
        if kind == "html_inline":
            return self._standalone(token.content)
        if kind == "link_open" and token.markup == "autolink":
            return self._kept(f"<{token.attrs.get('href', '')}>")
        if kind == "link_open":
            href, title = token.attrs.get("href", ""), token.attrs.get("title")
            return self._open(open_names, "[", f"]({href}{_title(title)})")
        if kind.endswith("_open") and kind[: -len("_open")] in PAIRED:
            return self._open(open_names, token.markup, token.markup)
        if kind.endswith("_close") and open_names:
            return f"</{open_names.pop()}>"
        return self._kept(token.content or token.markup)

    def _open(self, open_names: list[str], opening: str, closing: str) -> str:
        name = f"m{len(self.syntax)}"
        self.syntax[name] = (opening, closing)
        open_names.append(name)
        return f"<{name}>"

    def _standalone(self, written: str) -> str:
        name = f"m{len(self.syntax)}"
        self.syntax[name] = (written, "")
        return f"<{name}/>"

    def _kept(self, written: str) -> str:
        self.kept += 1
        return f'<{KEPT} translate="no">{escape(written)}</{KEPT}>'

    def render(self, translation: str) -> str:
        """A translated line of this block's markup as Markdown."""
        pieces, in_kept = [], False
        for segment in parse(translation, "xml").segments:
            if segment.startswith("<"):
                name = segment.strip("</>").split()[0]
                if name == KEPT:
                    in_kept = not segment.startswith("</")
                elif name in self.syntax:
                    opening, closing = self.syntax[name]
                    pieces.append(closing if segment.startswith("</") else opening)
            else:
                text = html.unescape(segment)
                pieces.append(text if in_kept else _escaped(text))
        return "".join(pieces)


def _title(title: str | int | float | None) -> str:
    return "" if not title else f' "{str(title).replace(chr(34), chr(92) + chr(34))}"'


def _escaped(text: str) -> str:
    """Text with every character Markdown reads as syntax backslash-escaped."""
    return "".join("\\" + character if character in SYNTAX else character for character in text)
