"""What both XLIFF versions' readers share (version_12.py, version_2.py; the rules are in
format.py's docstring): the `Gatherer`, which finds the units a call translates and the
`Slot` each translation is written into, and the checks every file gets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from lxml import etree

from rnnsearch.documents.document import DocumentError, ReadOptions, Unit
from rnnsearch.documents.xliff.codes import Code, Kinds, Reader, local, written
from rnnsearch.documents.xliff.extents import Extent
from rnnsearch.text.sentences import language_of

XML = "http://www.w3.org/XML/1998/namespace"

Splice = tuple[int, int, bytes]
"""Bytes [start, end) of the file replaced by these (start == end: inserted there)."""


@dataclass
class Slot:
    """Where one target is written: the range of the file it takes (its old target, or
    the point after its source), its start and end tags, and its content: the bytes
    `between` its units' translations (one more than the units), each unit's number, its
    codes and the bytes written for it when its translation is its own words (`as_is`);
    and `also`, the other bytes the writing changes (a 2.x segment's start tag)."""

    at: tuple[int, int]
    open_tag: bytes
    close_tag: bytes
    units: list[int] = field(default_factory=list)
    codes: list[list[Code]] = field(default_factory=list)
    as_is: list[bytes] = field(default_factory=list)
    between: list[bytes] = field(default_factory=list)
    also: list[Splice] = field(default_factory=list)

    def written(self, translations: Sequence[str | None], encoding: str) -> list[Splice]:
        content = [self.between[0]]
        for k, unit in enumerate(self.units):
            line = translations[unit]
            content += [self.as_is[k] if line is None else written(line, self.codes[k], encoding), self.between[k + 1]]
        return [(*self.at, self.open_tag + b"".join(content) + self.close_tag), *self.also]


@dataclass
class Gathered:
    """A file's units, the slots they are written into, and the splices every writing makes."""

    units: list[Unit] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    fixed: list[Splice] = field(default_factory=list)
    protected: int = 0


class Gatherer:
    """What both versions' gatherers share: the file, its elements' places and its codes' reader."""

    def __init__(
        self,
        data: bytes,
        places: dict[etree._Element, Extent],
        *,
        origin: str,
        options: ReadOptions,
        encoding: str,
        kinds: Kinds,
    ):
        self.data, self.places, self.origin, self.options, self.encoding = data, places, origin, options, encoding
        self.reader = Reader(data, places, kinds)
        self.gathered = Gathered()

    def fail(self, where: str, what: str) -> DocumentError:
        return DocumentError(f"{self.origin}: {where}: {what}")

    def checked_languages(self, element: etree._Element, source: str, target: str, where: str) -> None:
        """The declared languages checked against the model's; a missing target language added."""
        declared, wanted = element.get(source), self.options.source_language
        if declared and wanted and language_of(declared) != language_of(wanted):
            raise self.fail(where, f"its source language is {declared!r}; this model translates from {wanted!r}")
        written_in = element.get(target)
        if written_in and language_of(written_in) != language_of(self.options.target_language):
            raise self.fail(
                where,
                f"its target language is {written_in!r}; this model translates into {self.options.target_language!r}",
            )
        if not written_in:
            at = self.places[element].open_end - 1
            self.gathered.fixed.append(
                (at, at, f" {target}={quoteattr(self.options.target_language)}".encode(self.encoding))
            )

    def unit(self, element: etree._Element, where: str, slot: Slot) -> None:
        """`element`'s content a unit written into `slot`."""
        line, codes = self.reader.line(element)
        slot.units.append(len(self.gathered.units))
        slot.codes.append(codes)
        slot.as_is.append(self.reader.inner(element))
        self.gathered.units.append(Unit(line, where))
        self.gathered.protected += sum(code.kept for code in codes)

    def target_slot(self, after: etree._Element, target: etree._Element | None, attributes: dict[str, str]) -> Slot:
        """The slot of a target: the old one's place (its start tag kept but for
        `attributes`), or the point after `after`, indented as `after` is."""
        qualified = self.qualified(after, "target")
        if target is not None:
            place = self.places[target]
            at, lead, opening = (place.start, place.end), "", self._opening(target, attributes)
        else:
            end = self.places[after].end
            at, lead, opening = (end, end), indent(after), f"<{qualified}{_written(attributes)}>"
        return Slot(at, (lead + opening).encode(self.encoding), f"</{qualified}>".encode(self.encoding))

    def start_tag(self, element: etree._Element, changes: dict[str, str]) -> Splice:
        """`element`'s start tag with `changes` made to its attributes, every other as it was."""
        place = self.places[element]
        return place.start, place.open_end, self._opening(element, changes).encode(self.encoding)

    def _opening(self, element: etree._Element, changes: dict[str, str]) -> str:
        """`element`'s start tag written again: its name and the namespaces it declares as
        the file writes them, its attributes with `changes` made."""
        attributes = _attributes(element)
        attributes.update(changes)
        parent = element.getparent()
        inherited = {} if parent is None else parent.nsmap
        declared = {p: u for p, u in element.nsmap.items() if inherited.get(p) != u}
        names = "".join(f" xmlns{':' + p if p else ''}={quoteattr(u)}" for p, u in declared.items())
        return f"<{self._name(element)}{names}{_written(attributes)}>"

    def wanted(self, state: str | None, *, open_states: frozenset[str], empty: bool, approved: bool = False) -> bool:
        """Whether a target in `state` (None: none said) is written: where it is empty or its
        state is open, unless a person approved it; else where the call asks for that state
        (or `approved`) to be overwritten, or for everything to be translated again."""
        asked = self.options.retranslate or (state is not None and state in self.options.overwrite)
        if approved and not (self.options.retranslate or "approved" in self.options.overwrite):
            return False
        return empty or state is None or state in open_states or asked

    def qualified(self, element: etree._Element, local_name: str) -> str:
        """`local_name` with the prefix `element`'s name is written with in the file."""
        return ":".join([*self._name(element).split(":")[:-1], local_name])

    def inserted_slot(self, at: int, open_tag: str, close_tag: str, lead: str = "") -> Slot:
        """A slot for new elements inserted at byte `at`."""
        encode = self.encoding
        return Slot((at, at), (lead + open_tag).encode(encode), close_tag.encode(encode))

    def codes_match(self, source: etree._Element, target: etree._Element | None, where: str) -> None:
        """A target with content refused where its codes are not its source's."""
        if target is None or not (len(target) or (target.text or "").strip()):
            return
        if _codes(source) != _codes(target):
            raise self.fail(where, "its target's inline codes are not its source's (each code's name and id)")

    def _name(self, element: etree._Element) -> str:
        place = self.places[element]
        tag = self.data[place.start + 1 : place.open_end].decode(self.encoding)
        return tag.split(None, 1)[0].rstrip("/>").split(">")[0]


def _codes(element: etree._Element) -> Counter[tuple[str, str | None]]:
    return Counter(
        (local(code), code.get("id"))
        for code in element.iterdescendants(tag=etree.Element)
        if local(code) not in ("sub", "mrk")
    )


def _written(attributes: dict[str, str]) -> str:
    """Attributes as a start tag writes them, each value quoted."""
    return "".join(f" {key}={quoteattr(value)}" for key, value in attributes.items())


def _attributes(element: etree._Element) -> dict[str, str]:
    """An element's attributes by the names the file writes them with."""
    return {_attribute_name(element, str(key)): str(value) for key, value in element.attrib.items()}


def _attribute_name(element: etree._Element, key: str) -> str:
    qualified = etree.QName(key)
    if qualified.namespace is None:
        return key
    if qualified.namespace == XML:
        return f"xml:{qualified.localname}"
    prefix = next(p for p, u in element.nsmap.items() if u == qualified.namespace and p)
    return f"{prefix}:{qualified.localname}"


def empty(element: etree._Element | None) -> bool:
    """Whether a target is missing, or holds nothing but white space."""
    return element is None or not (len(element) or (element.text or "").strip())


def indent(element: etree._Element) -> str:
    """The white space before `element` in its parent, where it is white space only."""
    previous, parent = element.getprevious(), element.getparent()
    before = (parent.text if parent is not None else None) if previous is None else previous.tail
    return before if before is not None and not before.strip() else ""


def translated_here(element: etree._Element, stop: etree._Element) -> bool:
    """Whether `translate="no"` holds on no element from `element` up to `stop`."""
    at: etree._Element | None = element
    while at is not None:
        if at.get("translate") == "no":
            return False
        if at is stop:
            return True
        at = at.getparent()
    return True


def unique(ids: Iterator[tuple[str | None, str]], fail: Callable[[str, str], DocumentError], where: str) -> None:
    seen: set[str] = set()
    for identifier, what in ids:
        if identifier is None:
            continue
        if identifier in seen:
            raise fail(where, f"{what} id {identifier!r} is given twice")
        seen.add(identifier)
