"""SubRip subtitles (.srt), read with the `srt` package: the cue count, numbers and
timings come back unchanged, and only the cues' text is translated.

A sentence often runs over several cues, so consecutive cues up to one whose text ends a
sentence (., !, ?, …, or a closing quote after one; at most MAX_CUES of them) are one
unit, translated whole: each cue boundary stands in it as a standalone tag (CUE), each
line break as `<br>`, and the alignment places them among the translation's words as it
places any tag, so that each cue gets the words aligned to its own. Italics and the
other tags players read (`<i>`, `<b>`, `<u>`, `<font>`) ride along as markup. A cue left
with no word is given its share of the words by the source cues' word counts instead;
a cue never has more lines than its source had. An italic opened in one cue and closed
in a later one of the same unit is one element over their words.

Timings must be as SubRip writes them: HH:MM:SS,mmm (or with a dot), minutes and seconds
under 60, each cue ending no earlier than it starts; a file with any other is refused in
one line naming the cue, as are timestamps too large for any time.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import srt

from rnnsearch.documents.document import (
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    bom_and_text,
    checked_size,
    checked_units,
)
from rnnsearch.markup.dialects import VOID_ELEMENTS
from rnnsearch.markup.events import events
from rnnsearch.markup.parsing import MarkupError, parse

CUE = "<rnnsearch-cue/>"
"""The tag a boundary between two cues of a unit stands as."""

MAX_CUES = 8
"""The most cues one unit runs over: a subtitle file without sentence ends is still cut."""

SENTENCE_ENDS = (".", "!", "?", "…", '."', '!"', '?"', ".»", "!»", "?»", "♪")


class Subtitles:
    """A SubRip subtitle file."""

    name = "srt"
    extensions: tuple[str, ...] = ("srt",)
    dialect = "html"
    media_type = "application/x-subrip"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        bom, text = bom_and_text(checked_size(data, origin), origin)
        try:
            cues = list(srt.parse(text))
        except srt.SRTParseError as error:
            line = text.count("\n", 0, error.expected_start) + 1
            raise DocumentError(f"{origin}: line {line}: not a subtitle cue (number, timings, text)") from None
        except OverflowError:
            raise DocumentError(f"{origin}: not a subtitle file: a timestamp is larger than any time") from None
        except ValueError as error:
            raise DocumentError(f"{origin}: not a subtitle file: {error}") from None
        newline = "\r\n" if "\r\n" in text else "\n"
        spans = cue_spans(text, [(str(cue.index), cue.content) for cue in cues], newline, origin)
        _check_timings(text, cues, spans, origin)
        groups = _groups(cues)
        units = [Unit(_markup(cues, group), f"cue {cues[group[0]].index}") for group in groups]
        return _SubtitleFile(text, cues, spans, groups, checked_units(units, origin), newline=newline, bom=bom)


def cue_spans(text: str, contents: list[tuple[str, str]], newline: str, origin: str) -> list[tuple[int, int]]:
    """Where each cue's text (its name, its text as the reader gave it) lies in the file,
    found in order, its lines ended as the file's are or, in a file that mixes them, by "\n"."""
    spans, position = [], 0
    for name, content in contents:
        for written in dict.fromkeys((content.replace("\n", newline), content)):
            start = text.find(written, position)
            if start >= 0:
                break
        else:
            raise DocumentError(f"{origin}: cue {name}: its text is not in the file as the reader gave it")
        spans.append((start, start + len(written)))
        position = start + len(written)
    return spans


def _check_timings(text: str, cues: list[srt.Subtitle], spans: list[tuple[int, int]], origin: str) -> None:
    """Each cue's timings as SubRip writes them, HH:MM:SS,mmm (a dot for the comma
    taken), minutes and seconds under 60, and its end not before its start; else a
    DocumentError naming the cue's line. The `srt` package reads `00:00:01` and
    `00:99:00,000` and a cue that ends before it starts without a word; a player shows
    them wrong, or not at all."""
    previous = 0
    for cue, (start, _) in zip(cues, spans, strict=True):
        if cue.content:  # the timing line is the last line before the cue's text
            line_start = text.rfind("\n", previous, max(start - 1, previous)) + 1
            timing = text[line_start:start].strip()
            for stamp in _stamps(timing):
                if not _well_written(stamp):
                    line = text.count("\n", 0, line_start) + 1  # counted only for the error: linear in the file
                    raise DocumentError(
                        f"{origin}: line {line}: cue {cue.index}: timestamp {stamp!r} is not HH:MM:SS,mmm "
                        "with minutes and seconds under 60"
                    )
            previous = start
        if cue.end < cue.start:
            stamps = f"{srt.timedelta_to_srt_timestamp(cue.end)} before {srt.timedelta_to_srt_timestamp(cue.start)}"
            raise DocumentError(f"{origin}: cue {cue.index}: it ends before it starts ({stamps})")


def _stamps(timing: str) -> list[str]:
    """The two timestamps of a cue's timing line (`start --> end [position]`)."""
    before, _, after = timing.partition("-->")
    return [before.strip(), (after.split() or [""])[0]]


def _well_written(stamp: str) -> bool:
    """Whether a timestamp that the `srt` package read is HH:MM:SS,mmm (or with a dot)."""
    found = srt.TS_REGEX.match(stamp)
    if found is None:
        return False
    _, minutes, seconds, milliseconds = found.groups()
    return int(minutes) < 60 and int(seconds) < 60 and len(milliseconds) == 3 and stamp[-4] in ",."


def _groups(cues: list[srt.Subtitle]) -> list[list[int]]:
    """Runs of consecutive cues, each ending with a cue whose text ends a sentence."""
    groups: list[list[int]] = []
    current: list[int] = []
    for k, cue in enumerate(cues):
        if not cue.content.strip():
            continue
        current.append(k)
        if cue.content.rstrip().endswith(SENTENCE_ENDS) or len(current) == MAX_CUES:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return _checked(cues, groups)


def _checked(cues: list[srt.Subtitle], groups: list[list[int]]) -> list[list[int]]:
    """Groups whose markup does not nest (an italic opened in one cue, closed in the
    next) cut into a group per cue."""
    kept = []
    for group in groups:
        try:
            parse(_markup(cues, group), "html")
            kept.append(group)
        except MarkupError:
            kept += [[k] for k in group]
    return kept


def _markup(cues: list[srt.Subtitle], group: list[int]) -> str:
    """The unit of a run of cues: their text, lines joined by `<br>`, cues by CUE. Where
    the run's markup reads as a whole (an italic opened in one cue, closed in the next),
    it is kept so; else each cue whose markup does not read is its text escaped."""
    joined = CUE.join(_lines(cues[k].content.strip()) for k in group)
    try:
        parse(joined, "html")
        return joined
    except MarkupError:
        pass
    texts = []
    for k in group:
        content = _closed(cues[k].content.strip())
        try:
            parse(content, "html")
        except MarkupError:
            content = html.escape(content, quote=False)
        texts.append(_lines(content))
    return CUE.join(texts)


def _closed(content: str) -> str:
    """A cue's text with the elements it leaves open closed at its end, as players read
    them (an `<i>` never closed sets the rest of the cue in italics), so that its tags
    are placed, not read as words; as it is where it leaves none open."""
    still_open: list[str] = []
    for event in events(content):
        if event.kind == "start" and event.tag not in VOID_ELEMENTS:
            still_open.append(event.tag)
        elif event.kind == "end" and event.tag in still_open:
            del still_open[len(still_open) - 1 - still_open[::-1].index(event.tag) :]
    return content + "".join(f"</{tag}>" for tag in reversed(still_open))


def _lines(content: str) -> str:
    """A cue's lines joined by `<br>`."""
    return "<br>".join(line.strip() for line in content.split("\n"))


class CueFile(Document):
    """A file of cues read as text (SubRip, WebVTT), each cue's text replaced by its share
    of its unit's translation (`_shares`, the format's), every other character as it was,
    lines ended as the file ends them, its byte order mark kept."""

    def __init__(self, text: str, spans: list[tuple[int, int]], groups: list[list[int]], *, newline: str, bom: bool):
        self.text, self.spans, self.groups, self.newline, self.bom = text, spans, groups, newline, bom

    def write(self, translations: Sequence[str | None]) -> bytes:
        replaced: dict[int, str] = {}
        for group, translation in zip(self.groups, translations, strict=True):
            if translation is not None:
                replaced.update(zip(group, self._shares(group, translation), strict=True))
        pieces, position = [], 0
        for k in sorted(replaced):
            start, end = self.spans[k]
            pieces += [self.text[position:start], replaced[k].replace("\n", self.newline)]
            position = end
        pieces.append(self.text[position:])
        written = "".join(pieces).encode("utf-8")
        return b"\xef\xbb\xbf" + written if self.bom else written

    def _shares(self, group: list[int], translation: str) -> list[str]:
        """Each cue of `group`'s text out of its unit's translation."""
        raise NotImplementedError


def by_counts(words: list[str], counts: list[int]) -> list[str]:
    """`words` shared among cues in proportion to their source words' `counts`, in order
    (a cue left with none gets "…")."""
    total = sum(counts) or 1
    cuts = [round(len(words) * sum(counts[: n + 1]) / total) for n in range(len(counts))]
    starts = [0, *cuts[:-1]]
    return [" ".join(words[a:b]) or "…" for a, b in zip(starts, cuts, strict=True)]


class _SubtitleFile(CueFile):
    """The subtitle file, each cue's text replaced by its share of its unit's translation."""

    def __init__(
        self,
        text: str,
        cues: list[srt.Subtitle],
        spans: list[tuple[int, int]],
        groups: list[list[int]],
        units: list[Unit],
        *,
        newline: str,
        bom: bool,
    ):
        super().__init__(text, spans, groups, newline=newline, bom=bom)
        self.cues, self.units = cues, units

    def _shares(self, group: list[int], translation: str) -> list[str]:
        """Each cue's text out of its unit's translation: cut at the cue boundaries the
        alignment placed, or, where that leaves a cue with no word, by the source cues'
        word counts."""
        shares = [_cue_text(piece) for piece in translation.split(CUE)]
        if len(shares) == len(group) and all(share.strip() for share in shares):
            return [_at_most(share, self.cues[k].content.count("\n") + 1) for share, k in zip(shares, group)]
        words = " ".join(share for share in shares).split()
        return by_counts(words, [len(self.cues[k].content.split()) for k in group])


def _cue_text(piece: str) -> str:
    """A cue's share of a translated unit as subtitle text: `<br>` a line break, the
    other tags as written, the text's references decoded."""
    try:
        segments = parse(piece, "html").segments
    except MarkupError:
        return html.unescape(piece).strip()
    lines = "".join(
        "\n" if segment.lower().startswith("<br") else segment if segment.startswith("<") else html.unescape(segment)
        for segment in segments
    )
    return "\n".join(line.strip() for line in lines.split("\n") if line.strip())


def _at_most(text: str, lines: int) -> str:
    """`text` with no more than `lines` lines: the last ones joined."""
    split = text.split("\n")
    return "\n".join(split[: lines - 1] + [" ".join(split[lines - 1 :])]) if len(split) > lines else text
