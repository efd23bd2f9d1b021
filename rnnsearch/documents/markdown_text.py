"""Markdown, read with markdown-it-py (CommonMark, with tables and strikethrough): each
paragraph, heading, list item's paragraph and table cell a unit; the translation spliced
back where its text was, so that the rest of the file stays as written.

A block's inline syntax rides through as markup: emphasis, strong emphasis,
strikethrough and links are elements over the words they enclose (a link written back
in its inline form, `[text](url "title")`, its target as written), inline HTML tags that
pair up in the block are one element over what they hold (so they come back paired, and
a tag inside a word does not cut it), other inline HTML tags and hard breaks stand as
tags, and code spans (their fence kept), images and autolinks (as written) are kept
whole, untranslated. Not translated at all: code blocks (fenced and indented), HTML
blocks, link reference definitions and front matter (a `---` or a `+++` block at the
top). Text of a translation that Markdown would read as syntax is written escaped: `*`,
`_`, `` ` ``, `[`, `]`, `<`, `\\`, `&`, `~` and `|` anywhere, and where a block's text
starts, what would begin another block (`#`, `>`, `-`, `+`, `=`, `1986.`), so that the
output parses to the same elements as the input. A block's translation is one line:
where the block ran over several lines (a hard-wrapped paragraph, a quote), its later
lines' prefixes go with them. Blocks nest up to MAX_NESTING deep.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

from rnnsearch.documents.document import (
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
from rnnsearch.markup.dialects import VOID_ELEMENTS, escape
from rnnsearch.markup.events import events
from rnnsearch.markup.parsing import parse

SYNTAX = "*_`[]<\\&~|"
"""Characters that Markdown (with tables and strikethrough) reads as syntax anywhere in
running text: each is written backslash-escaped."""

LINE_START_SYNTAX = "#>-+="
"""Characters that begin a block (a heading, a quote, a list item, a setext underline)
where a line's text starts: written escaped at the start of a translation, which is
where its block's text started."""

MAX_NESTING = 100
"""How deep blocks may nest (quotes in quotes, lists in lists) and still be read: past
markdown-it's 20, so that a paragraph 30 quotes deep is translated; a deeper one is left
as written and counted."""

FRONT_MATTER = ("---", "+++")
"""The lines that open and close front matter at a file's top: YAML's and TOML's."""

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
        parser = _Parser("commonmark", {"maxNesting": MAX_NESTING}).enable("table").enable("strikethrough")
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


class _Parser(MarkdownIt):
    """markdown-it, a link's target left as written (not percent-encoded), so that it is
    written back as it was."""

    def normalizeLink(self, url: str) -> str:  # noqa: N802 (markdown-it's name)
        return url


def _without_front_matter(text: str) -> str:
    """`text` with a front matter block at its top (YAML's, from a `---` line to the next
    `---` or `...` line; TOML's, between two `+++` lines) blanked, line for line, so that
    it is read as nothing."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() not in FRONT_MATTER:
        return text
    closing = ("---", "...") if lines[0].rstrip() == "---" else ("+++",)
    for k in range(1, len(lines)):
        if lines[k].rstrip() in closing:
            return "\n" * k + "\n" + "\n".join(lines[k + 1 :])
    return text


BLOCK_MARKERS = frozenset(" \t>-+*#0123456789.)|")
"""What may stand on a line before its block's text: indentation, quote and list markers,
a heading's #, a table row's |."""


def _located(text: str, token: Token, line_starts: list[int], cursor: int) -> tuple[int, int] | None:
    """Where an inline token's content lies in the file, from its first line's text to its
    last's, at or after `cursor`; None where it is not there as written. On its first
    line, the text is the last place it is found with only block markers before it (the
    item `1. 1` is the second "1", not its marker)."""
    assert token.map is not None
    lines = token.content.split("\n")
    first_line, last_line = token.map[0], token.map[0] + len(lines) - 1
    if last_line >= len(line_starts):
        return None
    start = _first_line_start(text, lines[0], max(cursor, line_starts[first_line]))
    if start is None:
        return None
    last_start = text.find(lines[-1], max(start, line_starts[last_line])) if len(lines) > 1 else start
    if last_start < 0:
        return None
    return start, last_start + len(lines[-1])


def _first_line_start(text: str, content: str, line_start: int) -> int | None:
    """Where `content` starts on the line from `line_start`: the last place on that line
    with nothing but block markers between `line_start` and it; None where there is none."""
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    found, position = None, text.find(content, line_start)
    while 0 <= position <= line_end and BLOCK_MARKERS.issuperset(text[line_start:position]):
        found = position
        position = text.find(content, position + 1)
    return found


@dataclass
class _Inline:
    """A block's inline tokens as a line of markup, each construct an element named m0,
    m1, … whose Markdown is remembered (`syntax`) to write its translation back. Inline
    HTML tags that pair up in the block (`<span>…</span>`) are one element over what
    they hold, so that they come back paired and a tag inside a word does not cut it;
    one that pairs with none stands as a tag of its own."""

    syntax: dict[str, tuple[str, str]] = field(default_factory=dict)
    kept: int = 0

    def markup(self, children: list[Token]) -> str:
        pieces: list[str] = []
        open_names: list[str] = []
        paired = _paired_html(children)
        skipping = 0  # inside an autolink, kept whole
        for k, child in enumerate(children):
            if skipping:
                skipping -= child.type == "link_close"
                continue
            if child.type == "link_open" and child.markup == "autolink":
                shown = children[k + 1].content if k + 1 < len(children) else child.attrs.get("href", "")
                pieces.append(self._kept(f"<{shown}>"))
                skipping = 1
            elif k in paired:
                pieces.append(self._paired(child, paired[k], children, open_names))
            else:
                pieces.append(self._piece(child, open_names))
        return "".join(pieces)

    def _paired(self, token: Token, closing: int, children: list[Token], open_names: list[str]) -> str:
        """An inline HTML start tag and the end tag it pairs with (`closing`, the index of
        the end tag; -1 for the end tag itself) as an element's two tags."""
        if closing < 0:
            return f"</{open_names.pop()}>"
        return self._open(open_names, token.content, children[closing].content)

    def _piece(self, token: Token, open_names: list[str]) -> str:
        kind = token.type
        if kind == "text":
            return escape(token.content)
        if kind == "softbreak":
            return "\n"
        if kind == "hardbreak":
            return self._standalone("<br>")
        if kind == "code_inline":
            return self._kept(_code_span(token.markup, token.content))
        if kind == "image":
            title = token.attrs.get("title")
            return self._kept(f"![{token.content}]({_destination(str(token.attrs.get('src', '')))}{_title(title)})")
        if kind == "html_inline":
            return self._standalone(token.content)
        if kind == "link_open":
            href, title = str(token.attrs.get("href", "")), token.attrs.get("title")
            return self._open(open_names, "[", f"]({_destination(href)}{_title(title)})")
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
        """A translated line of this block's markup as Markdown: its text escaped where
        Markdown would read it as syntax (anywhere, and at its start, where a block's
        text starts)."""
        pieces, in_kept, at_start = [], False, True
        for segment in parse(translation, "xml").segments:
            if segment.startswith("<"):
                name = segment.strip("</>").split()[0]
                if name == KEPT:
                    in_kept = not segment.startswith("</")
                    at_start = False
                elif name in self.syntax:
                    opening, closing = self.syntax[name]
                    pieces.append(closing if segment.startswith("</") else opening)
                    at_start = at_start and not pieces[-1]
            else:
                text = html.unescape(segment)
                pieces.append(text if in_kept else _escaped(text, at_start=at_start))
                at_start = at_start and not text.strip()
        return "".join(pieces)


def _paired_html(children: list[Token]) -> dict[int, int]:
    """The inline HTML tags of a block that pair up, as {start tag's index: end tag's
    index, end tag's index: -1}: each end tag with the nearest open start tag of its
    name, the tags between them paired among themselves (a crossing pair is none)."""
    paired: dict[int, int] = {}
    open_tags: list[tuple[str, int]] = []
    for k, child in enumerate(children):
        if child.type != "html_inline":
            continue
        found = events(child.content)
        if len(found) != 1 or found[0].kind not in ("start", "end") or found[0].tag in VOID_ELEMENTS:
            continue
        name = found[0].tag
        if found[0].kind == "start":
            open_tags.append((name, k))
        elif open_tags and open_tags[-1][0] == name:
            paired[open_tags.pop()[1]] = k
            paired[k] = -1
        else:
            open_tags = [entry for entry in open_tags if entry[0] != name]  # crossing: none of them pairs
    return paired


def _code_span(fence: str, content: str) -> str:
    """A code span written back: its fence around its content, with a space inside each
    fence where the content begins or ends with a backtick, or with a space at both
    ends, which the reading took off."""
    padded = content[:1] == "`" or content[-1:] == "`" or (content[:1] == content[-1:] == " " and content.strip())
    return f"{fence} {content} {fence}" if padded else f"{fence}{content}{fence}"


def _destination(url: str) -> str:
    """A link's or an image's target as Markdown writes it: as it is, or between `<` and
    `>` where it holds a space, a parenthesis or an angle bracket, which would end it."""
    if not any(character in url for character in " ()<>\\") and url:
        return url
    return "<" + url.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>") + ">"


def _title(title: str | int | float | None) -> str:
    return "" if not title else f' "{str(title).replace(chr(34), chr(92) + chr(34))}"'


def _escaped(text: str, *, at_start: bool = False) -> str:
    """Text with every character Markdown reads as syntax backslash-escaped; `at_start`:
    the text begins its block's line, where a heading, a quote, a list item's marker or
    an ordered list's number (`1986.`) would begin a block."""
    written = "".join("\\" + character if character in SYNTAX else character for character in text)
    if not at_start:
        return written
    body = written.lstrip()
    lead = written[: len(written) - len(body)]
    if body[:1] in LINE_START_SYNTAX:
        return lead + "\\" + body
    digits = len(body) - len(body.lstrip("0123456789"))
    if digits and body[digits : digits + 1] in (".", ")"):
        return lead + body[:digits] + "\\" + body[digits:]
    return written
