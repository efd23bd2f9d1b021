"""What each XLIFF version translates and how it writes a translation (the rules are in
format.py's docstring): `VERSIONS`, by namespace and version, gives each its gatherer,
which finds the units a call translates and the `Slot` each translation is written into."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from lxml import etree

from rnnsearch.documents.document import DocumentError, ReadOptions, Unit
from rnnsearch.documents.xliff.codes import Code, Kinds, Reader, local, written
from rnnsearch.documents.xliff.extents import Extent

NS_12 = "urn:oasis:names:tc:xliff:document:1.2"
NS_2 = "urn:oasis:names:tc:xliff:document:2.0"
XML = "http://www.w3.org/XML/1998/namespace"

Splice = tuple[int, int, bytes]
"""Bytes [start, end) of the file replaced by these (start == end: inserted there)."""

KINDS_12 = Kinds(
    holding=frozenset({"g", "mrk"}),
    apart={"bpt": "ept", "bx": "ex"},
    pair_key=lambda code: code.get("rid") or code.get("id"),
    kept=lambda code: local(code) == "mrk" and code.get("mtype") == "protected",
)
KINDS_2 = Kinds(
    holding=frozenset({"pc", "mrk"}),
    apart={"sc": "ec", "sm": "em"},
    pair_key=lambda code: code.get("startRef") if local(code) in ("ec", "em") else code.get("id"),
    kept=lambda code: local(code) == "mrk" and code.get("translate") == "no",
)

OPEN_STATES_12 = frozenset({"new", "needs-translation"})
OPEN_STATES_2 = frozenset({"initial"})
WRITTEN_12 = {"state": "needs-review-translation", "state-qualifier": "leveraged-mt"}
WRITTEN_2 = {"state": "translated", "subState": "rnnsearch:mt"}


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
        if declared and wanted and _primary(declared) != _primary(wanted):
            raise self.fail(where, f"its source language is {declared!r}; this model translates from {wanted!r}")
        written_in = element.get(target)
        if written_in and _primary(written_in) != _primary(self.options.target_language):
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
        """The slot of a target: the old one's place, or the point after `after`, indented as `after` is."""
        name = self._name(after).rsplit(":", 1)
        qualified = ":".join([*name[:-1], "target"])
        if target is not None:
            place = self.places[target]
            kept = _attributes(target)
            at, lead = (place.start, place.end), b""
        else:
            kept, end = {}, self.places[after].end
            at, lead = (end, end), _indent(after).encode(self.encoding)
        kept.update(attributes)
        attrs = "".join(f" {key}={quoteattr(value)}" for key, value in kept.items())
        return Slot(at, lead + f"<{qualified}{attrs}>".encode(self.encoding), f"</{qualified}>".encode(self.encoding))

    def start_tag(self, element: etree._Element, changes: dict[str, str]) -> Splice:
        """`element`'s start tag with `changes` made to its attributes, every other as it was."""
        attributes = _attributes(element)
        attributes.update(changes)
        parent = element.getparent()
        inherited = {} if parent is None else parent.nsmap
        declared = {p: u for p, u in element.nsmap.items() if inherited.get(p) != u}
        names = "".join(f" xmlns{':' + p if p else ''}={quoteattr(u)}" for p, u in declared.items())
        attrs = "".join(f" {key}={quoteattr(value)}" for key, value in attributes.items())
        place = self.places[element]
        return place.start, place.open_end, f"<{self._name(element)}{names}{attrs}>".encode(self.encoding)

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


def _primary(language: str) -> str:
    return language.replace("_", "-").split("-")[0].lower()


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


def _indent(element: etree._Element) -> str:
    """The white space before `element` in its parent, where it is white space only."""
    previous, parent = element.getprevious(), element.getparent()
    before = (parent.text if parent is not None else None) if previous is None else previous.tail
    return before if before is not None and not before.strip() else ""


def _translated(element: etree._Element, stop: etree._Element) -> bool:
    """Whether `translate="no"` holds on no element from `element` up to `stop`."""
    at: etree._Element | None = element
    while at is not None:
        if at.get("translate") == "no":
            return False
        if at is stop:
            return True
        at = at.getparent()
    return True


def _unique(ids: Iterator[tuple[str | None, str]], fail: Callable[[str, str], DocumentError], where: str) -> None:
    seen: set[str] = set()
    for identifier, what in ids:
        if identifier is None:
            continue
        if identifier in seen:
            raise fail(where, f"{what} id {identifier!r} is given twice")
        seen.add(identifier)


def gathered_12(
    data: bytes, places: dict[etree._Element, Extent], *, origin: str, options: ReadOptions, encoding: str
) -> Gathered:
    """XLIFF 1.2: each trans-unit (or each of its segments) that still needs translating."""
    gatherer = Gatherer(data, places, origin=origin, options=options, encoding=encoding, kinds=KINDS_12)
    root = next(iter(places))
    for number, file in enumerate(root.iterfind(f"{{{NS_12}}}file"), start=1):
        where = f"file {file.get('original') or number}"
        gatherer.checked_languages(file, "source-language", "target-language", where)
        units = list(file.iter(f"{{{NS_12}}}trans-unit"))
        _unique(((unit.get("id"), "trans-unit") for unit in units), gatherer.fail, where)
        for unit in units:
            _trans_unit(gatherer, unit, file, f"trans-unit {unit.get('id')}")
    return gatherer.gathered


def _trans_unit(gatherer: Gatherer, unit: etree._Element, file: etree._Element, where: str) -> None:
    source = unit.find(f"{{{NS_12}}}source")
    if source is None:
        raise gatherer.fail(where, "it has no <source>")
    segmented = unit.find(f"{{{NS_12}}}seg-source")
    target = unit.find(f"{{{NS_12}}}target")
    gatherer.codes_match(source if segmented is None else segmented, target, where)
    if not _translated(unit, file) or not (gatherer.options.retranslate or _open_12(unit, target)):
        return
    segments = [] if segmented is None else [m for m in segmented.iter(f"{{{NS_12}}}mrk") if m.get("mtype") == "seg"]
    slot = gatherer.target_slot(source if segmented is None else segmented, target, WRITTEN_12)
    if segmented is None or not segments:
        slot.between = [b"", b""]
        gatherer.unit(source, where, slot)
    else:
        _segments(gatherer, segmented, segments, slot, where)
    gatherer.gathered.slots.append(slot)


def _segments(
    gatherer: Gatherer, segmented: etree._Element, segments: list[etree._Element], slot: Slot, where: str
) -> None:
    """Each segment of a `<seg-source>` a unit, the target written as the seg-source is,
    each segment's content its translation."""
    _unique(((m.get("mid"), "segment") for m in segments), gatherer.fail, where)
    position = gatherer.places[segmented].open_end
    for segment in segments:
        place = gatherer.places[segment]
        slot.between.append(gatherer.data[position : place.open_end])
        gatherer.unit(segment, f"{where}, segment {segment.get('mid')}", slot)
        position = place.close_start
    slot.between.append(gatherer.data[position : gatherer.places[segmented].close_start])


def _open_12(unit: etree._Element, target: etree._Element | None) -> bool:
    if unit.get("approved") == "yes":
        return False
    if target is None or not (len(target) or (target.text or "").strip()):
        return True
    return target.get("state") is None or target.get("state") in OPEN_STATES_12


def gathered_2(
    data: bytes, places: dict[etree._Element, Extent], *, origin: str, options: ReadOptions, encoding: str
) -> Gathered:
    """XLIFF 2.x: each segment that still needs translating."""
    gatherer = Gatherer(data, places, origin=origin, options=options, encoding=encoding, kinds=KINDS_2)
    root = next(iter(places))
    gatherer.checked_languages(root, "srcLang", "trgLang", "<xliff>")
    for number, file in enumerate(root.iterfind(f"{{{NS_2}}}file"), start=1):
        where = f"file {file.get('id') or number}"
        units = list(file.iter(f"{{{NS_2}}}unit"))
        _unique(((unit.get("id"), "unit") for unit in units), gatherer.fail, where)
        for unit in units:
            _unit_2(gatherer, unit, file, f"unit {unit.get('id')}")
    return gatherer.gathered


def _unit_2(gatherer: Gatherer, unit: etree._Element, file: etree._Element, where: str) -> None:
    parts = [part for part in unit if local(part) in ("segment", "ignorable")]
    _unique(((part.get("id"), local(part)) for part in parts), gatherer.fail, where)
    starts = {code.get("id") for code in unit.iter(f"{{{NS_2}}}sc")}
    for end in unit.iter(f"{{{NS_2}}}ec"):
        if end.get("startRef") is not None and end.get("startRef") not in starts:
            raise gatherer.fail(where, f"<ec startRef={end.get('startRef')!r}> has no <sc> of that id in its unit")
    if not _translated(unit, file):
        return
    for number, segment in enumerate((part for part in parts if local(part) == "segment"), start=1):
        source, target = segment.find(f"{{{NS_2}}}source"), segment.find(f"{{{NS_2}}}target")
        named = f"{where}, segment {segment.get('id') or number}"
        if source is None:
            raise gatherer.fail(named, "it has no <source>")
        gatherer.codes_match(source, target, named)
        empty = target is None or not (len(target) or (target.text or "").strip())
        if not (gatherer.options.retranslate or empty or segment.get("state", "initial") in OPEN_STATES_2):
            continue
        slot = gatherer.target_slot(source, target, {})
        slot.between = [b"", b""]
        slot.also.append(gatherer.start_tag(segment, WRITTEN_2))
        gatherer.unit(source, named, slot)
        gatherer.gathered.slots.append(slot)


Gather = Callable[..., Gathered]

VERSIONS: dict[tuple[str, str], Gather] = {
    (NS_12, "1.2"): gathered_12,
    **{(NS_2, version): gathered_2 for version in ("2.0", "2.1", "2.2")},
}
"""Each version's gatherer, by the namespace and `version` of the file's root."""
