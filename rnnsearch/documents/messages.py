"""A message of software (a catalogue's msgid, a resource file's value) as a unit: what
its code fills in (placeholders) kept whole, inline HTML read as HTML, and its
translation written back with the white space the message begins and ends with."""

from __future__ import annotations

import re
from collections.abc import Callable

from rnnsearch.documents.document import KEPT, plain_markup, plain_text
from rnnsearch.markup.parsing import MarkupError, parse

PLACEHOLDER = re.compile(
    r"%(?:\d+\$|\([^()\s]+\))?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|Z|t)?[sdifFgGeExXocruapA%]"
    r"|\{[^{}\s]*\}"
)
"""printf's conversions (`%s`, `%(name)s`, `%1$s`, `%.2f`, `%ld`, `%zu`, `%*d`, `%%`) and
Python's and ICU's braces (`{name}`, `{0}`): what a message's code fills in, never
translated."""

RESOURCE_PLACEHOLDER = re.compile(
    r"%\{[^{}\s]*\}"  # Ruby's: %{name}
    r"|\{\{[^{}]*\}\}"  # i18next, Handlebars: {{name}}
    r"|\$t\([^()]*\)"  # i18next's nesting: $t(key)
    r"|\$[A-Za-z_][A-Za-z0-9_]*\$"  # Chrome's messages.json: $NAME$
    r"|(?<![\w:/]):[A-Za-z_]\w*"  # Laravel, Rails: :name
    r"|" + PLACEHOLDER.pattern
)
"""What a resource file's values are filled in with: PLACEHOLDER's, and `%{name}`,
`{{name}}`, `$t(key)`, `$NAME$` and `:name`."""


def message_unit(message: str, placeholder: re.Pattern[str]) -> tuple[str, Callable[[str], str], int]:
    """A message as a unit: its line of markup, how its translation is written back, and
    how many placeholders (`placeholder`'s matches) it keeps. A message with tags is
    HTML, the placeholders of its text wrapped (one inside a tag stays in it, as
    written); any other is plain text."""
    try:
        marked = parse(message, "html")
    except MarkupError:
        marked = None
    if marked is not None and marked.elements:
        pieces, kept = [], 0
        for segment in marked.segments:
            position = 0
            for match in () if segment.startswith("<") else placeholder.finditer(segment):
                pieces += [segment[position : match.start()], f'<{KEPT} translate="no">{match.group()}</{KEPT}>']
                position = match.end()
                kept += 1
            pieces.append(segment[position:])
        return "".join(pieces), _unwrapped, kept
    spans = [match.span() for match in placeholder.finditer(message)]
    return plain_markup(message, spans), plain_text, len(spans)


def with_ends(message: str, writer: Callable[[str], str]) -> Callable[[str], str]:
    """`writer`, its translation given the white space its message begins and ends with
    (a "\n", a "\t"), as `msgfmt -c` asks of a translation."""
    lead = message[: len(message) - len(message.lstrip())]
    trail = message[len(message.rstrip()) :]

    def written(translation: str) -> str:
        return lead + writer(translation).strip() + trail

    return written


def _unwrapped(translation: str) -> str:
    """A translated HTML message with the placeholders' wrappers taken off."""
    return translation.replace(f'<{KEPT} translate="no">', "").replace(f"</{KEPT}>", "")
