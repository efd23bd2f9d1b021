"""A line of markup as html.parser's events, each cut from the line at the offsets the
parser reports, so that they cover it byte for byte (rnnsearch.markup.parsing builds a
parsed line from them; the HTML and Markdown readers read pages and inline HTML with
them).

html.parser rescans the rest of the line from each "<" it cannot complete, which takes
time quadratic in the line's length where many are left open (`<a <a <a …`). No tag, end
tag, comment or declaration can complete after the line's last ">", so every "<" there is
text: the parser is given a "_" in its place, of the same length, and reads that part of
the line once.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser


def without_open_ends(line: str) -> str:
    """`line` with every "<" after its last ">" made "_": text there either way (see the
    module docstring), read in linear time; the same length, so positions still match."""
    end = line.rfind(">") + 1
    return line[:end] + line[end:].replace("<", "_")


@dataclass(slots=True)
class Event:
    """One of html.parser's events, cut from the text it read at the offsets it reports.

    kind:  start, standalone, end, data, reference or other (a comment, a declaration, a
           processing instruction)
    tag:   a tag's name; a reference's name ("amp", "#38")
    attrs: a start tag's attributes, as html.parser reads them
    """

    start: int
    end: int
    kind: str
    tag: str = ""
    attrs: tuple[tuple[str, str | None], ...] = ()


def events(text: str, *, text_elements: frozenset[str] = frozenset()) -> list[Event]:
    """`text` as html.parser's events, each ending where the next starts, so that they
    cover the text byte for byte; what the parser passes over without an event (a lone
    "</>") is data, as it is between events. The content of `text_elements` is text up to
    their end tag, as for a script. Read in time linear in the text (`without_open_ends`)."""
    recorder = _Recorder(text, text_elements)
    recorder.feed(without_open_ends(text))
    recorder.close()
    found = recorder.events
    if text and (not found or found[0].start > 0):
        found.insert(0, Event(0, 0, "data"))
    for event, following in zip(found, found[1:]):
        event.end = following.start
    if found:
        found[-1].end = len(text)
    return found


class _Recorder(HTMLParser):
    """html.parser's callbacks, each only recording its event and where it starts."""

    def __init__(self, text: str, text_elements: frozenset[str]):
        super().__init__(convert_charrefs=False)
        self.text_elements = text_elements

        # where each of the text's lines starts: the parser reports (line, column) positions
        self.line_starts = [0] + [k + 1 for k, character in enumerate(text) if character == "\n"]
        self.events: list[Event] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record("start", tag, tuple(attrs))
        if tag in self.text_elements:
            self.set_cdata_mode(tag)  # text up to the end tag, as for a script

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record("standalone", tag, tuple(attrs))

    def handle_endtag(self, tag: str) -> None:
        self._record("end", tag)

    def handle_data(self, data: str) -> None:
        self._record("data")

    def handle_entityref(self, name: str) -> None:
        self._record("reference", name)

    def handle_charref(self, name: str) -> None:
        self._record("reference", "#" + name)

    def handle_comment(self, data: str) -> None:
        self._record("other")

    def handle_decl(self, decl: str) -> None:
        self._record("other")

    def handle_pi(self, data: str) -> None:
        self._record("other")

    def unknown_decl(self, data: str) -> None:
        self._record("other")

    def _record(self, kind: str, tag: str = "", attrs: tuple[tuple[str, str | None], ...] = ()) -> None:
        line, column = self.getpos()
        self.events.append(Event(self.line_starts[line - 1] + column, 0, kind, tag, attrs))
