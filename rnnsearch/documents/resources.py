"""Resource files of software, JSON and YAML: every message (a string value) translated,
no key ever, read with the standard library's json and with ruamel.yaml.

JSON (.json, .arb): i18next's nested and flat files (every string, at any depth, and the
strings of an array), Chrome's messages.json (each entry's `message`; its `description`
and `placeholders` left alone) and Flutter's ARB (every value whose key does not start
with `@`; `@@locale` set to the target language, the `@` metadata left alone). A file
that holds anything else (a number, a truth value, null, an array of objects, a key given
twice) is not a resource file, and is refused in one line naming the key. YAML (.yml,
.yaml; Rails' locale files): every string scalar, the others (numbers, truth values) left
alone, comments, key order, anchors and quoting kept; a root whose one key is the model's
source language (`en:`) gets the target's (`fr:`).

A message's placeholders (`{name}`, `{{name}}`, `%s`, `%1$s`, `:name`, `$NAME$`,
`$t(key)`: messages.RESOURCE_PLACEHOLDER) are kept whole, its inline HTML read as HTML
(messages.py). An ICU MessageFormat `plural`, `select` or `selectordinal`, read by
pyicumessageformat, keeps its structure (its argument, keywords and `#`) and has each
branch's text translated as a unit of its own; a message that holds one and also HTML
tags is left as it is, counted untranslated.

The order of keys, and everything that is not a translated message, is kept. A JSON file
is written back with the indentation it was read with; a file none of whose messages
changes comes back byte for byte.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rnnsearch.arguments import GivenTwice, unique_members
from rnnsearch.documents.document import (
    MAX_UNITS,
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    decoded,
    plain_markup,
    plain_text,
)
from rnnsearch.documents.messages import RESOURCE_PLACEHOLDER, message_unit, with_ends
from rnnsearch.text.sentences import language_of

Path = tuple[str | int, ...]
IcuNode = dict[str, Any]
"""A node of pyicumessageformat's tree: a choice, an argument, a `#`."""
Tree = dict[str, object]

ICU_CHOICES = frozenset({"plural", "select", "selectordinal"})


@dataclass
class _Message:
    """One message: where it is (its keys), its text, its units' first index and count, and
    how its translation is written from its units' translations."""

    path: Path
    value: str
    first: int
    count: int
    write: Callable[[Sequence[str | None]], str]


class _Messages:
    """The messages of a file, read into units."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.messages: list[_Message] = []
        self.protected = 0
        self.untranslated = 0

    def add(self, path: Path, value: str) -> None:
        where = _dotted(path)
        first = len(self.units)
        structures = _icu_structures(value)
        if not structures:
            markup, writer, kept = message_unit(value, RESOURCE_PLACEHOLDER)
            self.protected += kept
            self.units.append(Unit(markup, where))
            self.messages.append(_Message(path, value, first, 1, _one(value, with_ends(value, writer))))
            return
        if _has_tags(value):
            self.untranslated += 1
            return
        spans = sorted([*(s for s in _placeholders(value) if not _inside(s, structures)), *(s[:2] for s in structures)])
        self.units.append(Unit(plain_markup(value, spans), where))
        rebuilds = [self._structure(structure, value, where, first) for structure in structures]
        self.protected += len(spans)
        self.messages.append(
            _Message(path, value, first, len(self.units) - first, _joined(value, structures, rebuilds))
        )

    def applied(self, translations: Sequence[str | None], put: Callable[[Path, str], None]) -> bool:
        """Each message with a translated unit written by `put` (its keys, its new text);
        whether any was."""
        changed = False
        for message in self.messages:
            mine = translations[message.first : message.first + message.count]
            if any(t is not None for t in mine):
                put(message.path, message.write(mine))
                changed = True
        return changed

    def _structure(
        self, structure: tuple[int, int, IcuNode], message: str, where: str, first: int
    ) -> Callable[[Sequence[str | None]], str]:
        """Each branch of an ICU choice of `message` (whose units start at `first`) a unit;
        how the choice is written from the message's units' translations."""
        _, _, node = structure
        branches = []
        for key, content in node["options"].items():
            text, spans = _branch_text(content, message)
            self.units.append(Unit(plain_markup(text, spans), f"{where}, {node['type']} {key}"))
            branches.append((key, text, len(self.units) - 1 - first))  # among the message's units
        head = f"{{{node['name']}, {node['type']}, " + (f"offset:{node['offset']} " if node.get("offset") else "")

        def rebuilt(translations: Sequence[str | None]) -> str:
            written = []
            for key, text, unit in branches:
                line = translations[unit]
                written.append(f"{key} {{{text if line is None else plain_text(line)}}}")
            return head + " ".join(written) + "}"

        return rebuilt


def _one(value: str, writer: Callable[[str], str]) -> Callable[[Sequence[str | None]], str]:
    def write(translations: Sequence[str | None]) -> str:
        return value if translations[0] is None else writer(translations[0])

    return write


def _joined(
    value: str, structures: list[tuple[int, int, IcuNode]], rebuilds: list[Callable[[Sequence[str | None]], str]]
) -> Callable[[Sequence[str | None]], str]:
    """How a message with ICU choices is written: its own text translated (the first of
    its units, each choice kept whole in it), each choice written again from its
    branches' translations (`translations` are the message's units')."""

    def write(translations: Sequence[str | None]) -> str:
        text = value if translations[0] is None else plain_text(translations[0])
        position = 0
        for (start, end, _), rebuilt in zip(structures, rebuilds, strict=True):
            original = value[start:end]
            at = text.find(original, position)
            if at < 0:
                continue
            replacement = rebuilt(translations)
            text = text[:at] + replacement + text[at + len(original) :]
            position = at + len(replacement)
        return text

    return write


def _icu_structures(value: str) -> list[tuple[int, int, IcuNode]]:
    """The message's top-level ICU choices (plural, select, selectordinal): their start,
    end and node; none where it holds none or does not read as ICU MessageFormat."""
    if "{" not in value or "," not in value:
        return []
    from pyicumessageformat import Parser  # loaded with the first message that may hold a choice

    try:
        nodes = Parser({"include_indices": True}).parse(value)
    except (SyntaxError, TypeError):
        return []
    return [(n["start"], n["end"], n) for n in nodes if isinstance(n, dict) and n.get("type") in ICU_CHOICES]


def _branch_text(content: list[str | IcuNode], message: str) -> tuple[str, list[tuple[int, int]]]:
    """A choice's branch as text (its strings, and its arguments and `#` as the message
    writes them) and the spans that are kept: its arguments and `#`."""
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    for node in content:
        piece = node if isinstance(node, str) else message[node["start"] : node["end"]]
        if not isinstance(node, str):
            spans.append((length, length + len(piece)))
        pieces.append(piece)
        length += len(piece)
    text = "".join(pieces)
    spans += [s for s in _placeholders(text) if not any(a <= s[0] < b for a, b in spans)]
    return text, sorted(spans)


def _placeholders(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in RESOURCE_PLACEHOLDER.finditer(text)]


def _inside(span: tuple[int, int], structures: list[tuple[int, int, IcuNode]]) -> bool:
    return any(start <= span[0] < end for start, end, _ in structures)


def _has_tags(value: str) -> bool:
    return "<" in value and ">" in value


def _dotted(path: Path) -> str:
    return ".".join(f"[{part}]" if isinstance(part, int) else str(part) for part in path) or "(the root)"


class _JsonFile(Document):
    """A JSON resource file, its messages replaced by their translations."""

    def __init__(self, data: bytes, tree: Tree, messages: _Messages, *, indent: str | None, language: str | None):
        self.data, self.tree, self.messages = data, tree, messages
        self.units, self.protected, self.untranslated = messages.units, messages.protected, messages.untranslated
        self.indent, self.language = indent, language

    def write(self, translations: Sequence[str | None]) -> bytes:
        if not self.messages.applied(translations, lambda path, value: _set(self.tree, path, value)):
            return self.data
        if self.language is not None:
            self.tree["@@locale"] = self.language
        text = json.dumps(self.tree, ensure_ascii=False, indent=self.indent)
        return (text + ("\n" if self.data.endswith(b"\n") else "")).encode("utf-8")


def _set(tree: object, path: Path, value: str) -> None:
    for part in path[:-1]:
        tree = tree[part]  # type: ignore[index]
    tree[path[-1]] = value  # type: ignore[index]


class JsonResources:
    """JSON resource files: i18next, Chrome's messages.json, Flutter's ARB."""

    name = "json"
    extensions: tuple[str, ...] = ("json", "arb")
    dialect = "html"
    media_type = "application/json"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        text = decoded(checked_size(data, origin), origin)
        try:
            tree = json.loads(text, object_pairs_hook=unique_members)
        except json.JSONDecodeError as error:
            raise DocumentError(f"{origin}: line {error.lineno}: not JSON ({error.msg})") from None
        except GivenTwice as error:
            raise DocumentError(f"{origin}: key {error}") from None
        except ValueError as error:  # a number too long to read, say
            raise DocumentError(f"{origin}: not JSON ({error})") from None
        if not isinstance(tree, dict):
            raise DocumentError(
                f"{origin}: not a resource file: it holds a {type(tree).__name__}, not an object of messages"
            )
        arb = origin.lower().endswith(".arb") or "@@locale" in tree
        messages = _Messages()
        for path, value in _json_messages(tree, origin, arb=arb):
            messages.add(path, value)
        checked_units(messages.units, origin)
        indent = _indent(text)
        return _JsonFile(data, tree, messages, indent=indent, language=options.target_language if arb else None)


def _json_messages(tree: Tree, origin: str, *, arb: bool) -> Iterator[tuple[Path, str]]:
    """Each message of a JSON resource file, with its keys."""
    chrome = bool(tree) and all(isinstance(v, dict) and isinstance(v.get("message"), str) for v in tree.values())
    if chrome:
        for key, entry in tree.items():
            if isinstance(entry, dict):
                yield (key, "message"), str(entry["message"])
        return
    if arb:
        for key, value in tree.items():
            if not key.startswith("@"):
                yield from _leaves(value, (key,), origin)
        return
    yield from _leaves(tree, (), origin)


def _leaves(value: object, path: Path, origin: str) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*path, key), origin)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        for k, item in enumerate(value):
            yield (*path, k), item
    else:
        what = "an array of other values than texts" if isinstance(value, list) else f"a {type(value).__name__}"
        raise DocumentError(f"{origin}: {_dotted(path)}: {what} is not a message; a resource file holds texts")


def _indent(text: str) -> str | None:
    """The indentation of a JSON text's second line (None: written on one line)."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None
    second = lines[1]
    return second[: len(second) - len(second.lstrip())] or None


class _YamlFile(Document):
    """A YAML resource file, its messages replaced by their translations (ruamel.yaml's round trip)."""

    def __init__(self, data: bytes, tree: object, messages: _Messages, yaml: object, renamed: tuple[str, str] | None):
        self.data, self.tree, self.messages, self.yaml, self.renamed = data, tree, messages, yaml, renamed
        self.units, self.protected, self.untranslated = messages.units, messages.protected, messages.untranslated

    def write(self, translations: Sequence[str | None]) -> bytes:
        if not self.messages.applied(translations, lambda path, value: _set_scalar(self.tree, path, value)):
            return self.data
        if self.renamed is not None:
            old, new = self.renamed
            self.tree.insert(0, new, self.tree.pop(old))  # type: ignore[attr-defined]
        stream = io.StringIO()
        self.yaml.dump(self.tree, stream)  # type: ignore[attr-defined]
        return stream.getvalue().encode("utf-8")


def _set_scalar(tree: object, path: Path, value: str) -> None:
    """A string scalar set, in the quoting style it had."""
    for part in path[:-1]:
        tree = tree[part]  # type: ignore[index]
    old = tree[path[-1]]  # type: ignore[index]
    tree[path[-1]] = type(old)(value) if type(old) is not str else value  # type: ignore[index]


class YamlResources:
    """YAML resource files: Rails' locale files and the like."""

    name = "yaml"
    extensions: tuple[str, ...] = ("yml", "yaml")
    dialect = "html"
    media_type = "application/yaml"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        text = decoded(checked_size(data, origin), origin)
        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True
        yaml.width = 4096
        try:
            tree = yaml.load(text)
        except YAMLError as error:
            raise DocumentError(f"{origin}: not YAML ({' '.join(str(error).split())[:200]})") from None
        messages = _Messages()
        for path, value in _yaml_messages(tree, origin):
            messages.add(path, value)
        checked_units(messages.units, origin)
        return _YamlFile(data, tree, messages, yaml, _root_language(tree, options))


def _yaml_messages(tree: object, origin: str) -> Iterator[tuple[Path, str]]:
    """Each string scalar, once however many aliases reach it; the nodes visited bounded
    (aliases can make a small file a huge tree)."""
    seen: set[int] = set()
    visited = 0
    stack: list[tuple[object, Path]] = [(tree, ())]
    while stack:
        node, path = stack.pop()
        visited += 1
        if visited > MAX_UNITS:
            raise DocumentError(f"{origin}: its aliases make it more than {MAX_UNITS:,} values; it is not read")
        if isinstance(node, str):
            yield path, str(node)
        elif isinstance(node, dict) and id(node) not in seen:
            seen.add(id(node))
            stack += [(value, (*path, key)) for key, value in reversed(list(node.items())) if isinstance(key, str)]
        elif isinstance(node, list) and id(node) not in seen:
            seen.add(id(node))
            stack += [(value, (*path, k)) for k, value in reversed(list(enumerate(node)))]


def _root_language(tree: object, options: ReadOptions) -> tuple[str, str] | None:
    """The root key to rename, where the root's one key is the source language."""
    if not isinstance(tree, dict) or len(tree) != 1 or options.source_language is None:
        return None
    [key] = tree
    if isinstance(key, str) and language_of(key) == language_of(options.source_language):
        return key, options.target_language
    return None
