"""A start tag of a page written again with new values for some of its attributes
(rnnsearch.documents.html_page writes a translated `alt` or `title`, and `<html>`'s
`lang`), every other byte of it as it was."""

from __future__ import annotations

import html
import html.parser
import re

# html.parser's own patterns for a start tag's name and each of its attributes (not in
# its type stubs): a start tag written again finds its attributes where the parser did.
_TAG_NAME: re.Pattern[str] = html.parser.tagfind_tolerant  # type: ignore[attr-defined]
_ATTRIBUTE: re.Pattern[str] = html.parser.attrfind_tolerant  # type: ignore[attr-defined]


def with_values(raw: str, changed: dict[str, str]) -> str:
    """The start tag `raw` with the values of the attributes `changed` (by their names in
    lower case) written anew where each is first given, and one it lacks added at its
    end; every other byte as written: names in their case (`viewBox`, `TRANSLATE`), the
    other attributes, their quotes and a repeated attribute's later values. The
    attributes are found as html.parser finds them (its own patterns), so that each is
    the one the page's reading gave."""
    found = _TAG_NAME.match(raw, 1)
    position = found.end() if found else len(raw)
    end = len(raw) - (2 if raw.endswith("/>") else 1)
    pieces, last, done = [], 0, set()
    while position < end and (attribute := _ATTRIBUTE.match(raw, position)):
        name = attribute.group(1).lower()
        if name in changed and name not in done:
            value_start = attribute.start(2) if attribute.group(2) else attribute.end(1)
            value_end = attribute.end(2) if attribute.group(2) else attribute.end(1)
            pieces += [raw[last:value_start], f'="{html.escape(changed[name])}"']
            last = value_end
            done.add(name)
        if attribute.end() == position:
            break
        position = attribute.end()
    added = "".join(f' {name}="{html.escape(value)}"' for name, value in changed.items() if name not in done)
    if added:
        pieces += [raw[last:end].rstrip(), added]
        last = end
    pieces.append(raw[last:])
    return "".join(pieces)
