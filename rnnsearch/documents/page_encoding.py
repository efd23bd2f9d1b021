"""A web page's encoding, as the HTML standard finds it before the page is read: its byte
order mark, else the charset a `<meta>` near its start names by a label of the WHATWG
Encoding standard, else UTF-8 (rnnsearch.documents.html_page reads and writes the
page in it)."""

from __future__ import annotations

import codecs
from html.parser import HTMLParser

import webencodings

CHARSET_PREFIX = 1024
"""How many bytes at the start of a page are searched for its `<meta charset>`."""


def page_encoding(data: bytes) -> tuple[str, bytes]:
    """The page's encoding (a Python codec's name) and its byte order mark (b"" for
    none): the mark's, else the one the `<meta>` in the first CHARSET_PREFIX bytes
    names, else UTF-8. A `<meta>` is read as the HTML standard reads it: only a label of
    the WHATWG Encoding standard names an encoding (webencodings), so that a codec that
    is not a text encoding (`base64`, `rot13`, `unicode_escape`) is never used, and one
    it does not name, or UTF-16 (which a page that a `<meta>` could be read in cannot
    be), is UTF-8."""
    marks = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
    for bom, encoding in marks:
        if data.startswith(bom):
            return encoding, bom
    finder = _CharsetFinder()
    finder.feed(data[:CHARSET_PREFIX].decode("latin-1"))
    named = webencodings.lookup(finder.charset) if finder.charset else None
    if named is None or named.name in ("utf-16le", "utf-16be"):
        return "utf-8", b""
    if named.name == "x-user-defined":
        return "cp1252", b""
    return str(named.codec_info.name), b""


class _CharsetFinder(HTMLParser):
    """The charset a page's first `<meta charset>` or `<meta http-equiv content>` names."""

    def __init__(self) -> None:
        super().__init__()
        self.charset: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta" or self.charset:
            return
        values = {name: value or "" for name, value in attrs}
        if values.get("charset"):
            self.charset = values["charset"].strip()
        elif values.get("http-equiv", "").lower() == "content-type" and "charset=" in values.get("content", "").lower():
            content = values["content"]
            self.charset = content[content.lower().index("charset=") + 8 :].split(";")[0].strip().strip("'\"")
