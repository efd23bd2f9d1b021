"""WebVTT captions (.vtt), read with webvtt-py: the header, every cue's identifier, timings
and settings, and the `NOTE`, `STYLE` and `REGION` blocks come back as they were; only the
cues' text is translated.

As in SubRip files (subtitles.py), consecutive cues up to one whose text ends a sentence
(at most MAX_CUES) are one unit, translated whole, each cue boundary a standalone tag
(CUE) and each line break a `<br>`, so that each cue gets the words aligned to its own.
A cue's own tags are codes (`VttCodes`): a voice `<v Roger>`, a class `<c.yellow>`, a
language `<lang en>`, `<i>`, `<b>`, `<u>` and `<ruby>` are elements placed over the words
they held; a timestamp inside a cue (`<00:00:03.000>`) is a standalone code placed where
its neighbours go; a ruby text `<rt>…</rt>` is kept whole, as written. Each code comes back
exactly as the cue wrote it, and a voice or class the cue leaves open stays open. Where the
alignment leaves a cue with no word, the unit's words are shared by the source cues' word
counts, and that cue's codes are written around its share. Text is escaped as WebVTT
escapes it (`&amp;`, `&lt;`, `&gt;`).

A file webvtt-py does not read as WebVTT (no `WEBVTT` header, a malformed timing), or one
with a cue whose timestamps it passes over (minutes or seconds past 59), is refused in one
line naming it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError

from rnnsearch.documents.document import (
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    bom_and_text,
    checked_size,
    checked_units,
    code_pieces,
)
from rnnsearch.documents.subtitles import CUE, MAX_CUES, SENTENCE_ENDS, CueFile, by_counts, cue_spans
from rnnsearch.markup.dialects import escape
from rnnsearch.markup.parsing import MarkupError, parse

KEPT_TAGS = frozenset({"rt"})
"""Cue tags whose content is kept whole, as written: a ruby text reads the base's sound."""


@dataclass
class VttCodes:
    """A file's cue tags as the codes of its cues' lines of markup: each code's text as the cue writes
    it (`raw`; "" for an end the cue leaves out), and its line, whose elements are
    `<vt n="k">` (a start, its end `</vt>`), `<vt n="k"/>` (a timestamp) and `<vt n="k"
    translate="no">` (kept whole)."""

    raw: list[str] = field(default_factory=list)
    ends: dict[int, int] = field(default_factory=dict)  # a start's code → its end's code
    cues: list[tuple[int, int]] = field(default_factory=list)  # each cue's codes, first to stop - 1
    lines: list[str] = field(default_factory=list)  # each cue's line, as `line` made it

    def line(self, text: str) -> str:
        """A cue's text (its lines joined by "\\n") as a line of markup, its codes numbered
        after the previous cues' (each code's number is the file's)."""
        first = len(self.raw)
        pieces: list[str] = []
        open_ones: list[tuple[str, int]] = []  # (tag name, its start's code)
        position = 0
        while position < len(text):
            if text[position] == "\n":
                pieces.append("<br>")
                position += 1
                continue
            if text[position] != "<" or text.find(">", position) < 0:
                end = min(i for i in (text.find("<", position + 1), text.find("\n", position), len(text)) if i >= 0)
                pieces.append(escape(html.unescape(text[position:end])))
                position = end
                continue
            end = text.index(">", position) + 1
            position = self._tag(text, position, end, pieces, open_ones)
        for _, start in reversed(open_ones):  # left open: ends the cue writes no tag for
            pieces.append(self._end(start, ""))
        self.cues.append((first, len(self.raw)))
        self.lines.append("".join(pieces))
        return self.lines[-1]

    def _tag(self, text: str, start: int, end: int, pieces: list[str], open_ones: list[tuple[str, int]]) -> int:
        """The tag text[start:end] read into `pieces`; the position after what it took."""
        tag = text[start:end]
        inner = tag[1:-1].strip()
        if inner[:1].isdigit():
            pieces.append(f'<vt n="{self._code(tag)}"/>')
            return end
        if inner.startswith("/"):
            name = inner[1:].strip()
            found = next((k for k in range(len(open_ones) - 1, -1, -1) if open_ones[k][0] == name), None)
            if found is None:  # an end with nothing of its name open: kept where it stands
                pieces.append(f'<vt n="{self._code(tag)}"/>')
                return end
            for _, opened in reversed(open_ones[found + 1 :]):
                pieces.append(self._end(opened, ""))
            pieces.append(self._end(open_ones[found][1], tag))
            del open_ones[found:]
            return end
        name = inner.replace("\t", " ").split(" ")[0].split(".")[0]
        if name in KEPT_TAGS:
            close = text.find(f"</{name}>", end)
            stop = len(text) if close < 0 else close + len(name) + 3
            shown = html.unescape(text[end : close if close >= 0 else len(text)])
            pieces.append(f'<vt n="{self._code(text[start:stop])}" translate="no">{escape(shown)}</vt>')
            return stop
        code = self._code(tag)
        open_ones.append((name, code))
        pieces.append(f'<vt n="{code}">')
        return end

    def _code(self, raw: str) -> int:
        self.raw.append(raw)
        return len(self.raw) - 1

    def _end(self, start: int, raw: str) -> str:
        self.ends[start] = self._code(raw)
        return "</vt>"

    def written(self, shares: Sequence[str]) -> list[str]:
        """A unit's translated shares, one per cue (their elements those `line` made), as
        cue text: an element still open at a cue's end is closed there and opened again
        at the next cue's start, as each cue is read on its own."""
        opened: list[int] = []
        texts = []
        for share in shares:
            out = [self.raw[code] for code in opened]
            self._written(share, opened, out)
            out += [self.raw[self.ends[code]] for code in reversed(opened)]
            texts.append("\n".join(line.strip() for line in "".join(out).split("\n")).strip())
        return texts

    def _written(self, line: str, opened: list[int], out: list[str]) -> None:
        try:
            pieces = list(code_pieces(line, "html"))
        except MarkupError:
            out.append(html.unescape(line))
            return
        for piece in pieces:
            if piece.role == "text":
                out.append(escape(piece.text))
            elif piece.tag == "br":
                out.append("\n")
            elif piece.role == "end":
                out.append(self.raw[self.ends[opened.pop()]])
            else:
                out.append(self.raw[piece.number])
                if piece.role == "start":
                    opened.append(piece.number)

    def around(self, cue: int, words: str) -> str:
        """`words` as cue `cue`'s text, inside the elements it opened, its other codes after them."""
        first, stop = self.cues[cue]
        starts = [n for n in range(first, stop) if n in self.ends]
        ends = {self.ends[n] for n in starts}
        others = "".join(self.raw[n] for n in range(first, stop) if n not in self.ends and n not in ends)
        opening = "".join(self.raw[n] for n in starts)
        closing = "".join(self.raw[self.ends[n]] for n in reversed(starts))
        return opening + escape(words) + others + closing


class VttCaptions:
    """A WebVTT caption file."""

    name = "vtt"
    extensions: tuple[str, ...] = ("vtt",)
    dialect = "html"
    media_type = "text/vtt"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        bom, text = bom_and_text(checked_size(data, origin), origin)
        try:
            captions = webvtt.from_string(text).captions
        except (MalformedFileError, MalformedCaptionError, ValueError) as error:
            raise DocumentError(f"{origin}: not a WebVTT file ({error})") from None
        _check_timings(text, len(captions), origin)
        newline = "\r\n" if "\r\n" in text else "\n"
        spans = cue_spans(text, [(str(k), c.raw_text) for k, c in enumerate(captions, start=1)], newline, origin)
        codes = VttCodes()
        lines = [codes.line(c.raw_text.strip()) for c in captions]
        groups = _groups([c.raw_text for c in captions], lines)
        units = [Unit(CUE.join(lines[k] for k in group), f"cue {group[0] + 1}") for group in groups]
        return _CaptionFile(text, spans, groups, codes, checked_units(units, origin), newline=newline, bom=bom)


def _check_timings(text: str, read: int, origin: str) -> None:
    """Every cue's timings read: webvtt-py passes over a cue whose timestamp it does not
    read (`00:66:40.000`, minutes past 59) without a word, which would leave it
    untranslated; such a file is refused, naming the first such line."""
    lines = text.splitlines()
    timings = [number for number, line in enumerate(lines, start=1) if "-->" in line]
    if len(timings) == read:
        return
    for number in timings:
        if not webvtt.from_string(f"WEBVTT\n\n{lines[number - 1]}\nx\n").captions:
            raise DocumentError(
                f"{origin}: line {number}: a cue's timings WebVTT does not read: {lines[number - 1][:60]!r}"
            )
    raise DocumentError(f"{origin}: {len(timings) - read} cues were not read; their timings are not WebVTT's")


def _groups(contents: list[str], lines: list[str]) -> list[list[int]]:
    """Runs of consecutive cues with text, each ending with one whose text ends a sentence,
    at most MAX_CUES long."""
    groups: list[list[int]] = []
    current: list[int] = []
    for k, content in enumerate(contents):
        if not content.strip() or not parse(lines[k], "html").has_own_words:
            continue
        current.append(k)
        if html.unescape(content).rstrip().endswith(SENTENCE_ENDS) or len(current) == MAX_CUES:
            groups.append(current)
            current = []
    return groups + ([current] if current else [])


class _CaptionFile(CueFile):
    """The caption file, each cue's text replaced by its share of its unit's translation."""

    def __init__(
        self,
        text: str,
        spans: list[tuple[int, int]],
        groups: list[list[int]],
        codes: VttCodes,
        units: list[Unit],
        *,
        newline: str,
        bom: bool,
    ):
        super().__init__(text, spans, groups, newline=newline, bom=bom)
        self.codes, self.units = codes, units

    def _shares(self, group: list[int], translation: str) -> list[str]:
        """Each cue's text: its share of the translation as the alignment cut it, or, where
        that leaves a cue with no word, the words shared by the source cues' word counts,
        each cue's codes around its share."""
        shares = translation.split(CUE)
        if len(shares) == len(group) and all(parse(share, "html").has_own_words for share in shares):
            return self.codes.written(shares)
        words = " ".join(parse(share, "html").text for share in shares).split()
        shared = by_counts(words, [len(parse(self.codes.lines[k], "html").words) for k in group])
        return [self.codes.around(k, share) for k, share in zip(group, shared, strict=True)]
