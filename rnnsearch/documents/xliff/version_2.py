"""XLIFF 2.0, 2.1 and 2.2: each `<segment>` that still needs translating, its target written
and its state said, or its translation offered in the unit's matches (format.py has the
rules)."""

from __future__ import annotations

from lxml import etree

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.xliff.codes import Kinds, local
from rnnsearch.documents.xliff.extents import Extent
from rnnsearch.documents.xliff.gathering import Gathered, Gatherer, empty, translated_here, unique

NS_2 = "urn:oasis:names:tc:xliff:document:2.0"
NS_MATCHES = "urn:oasis:names:tc:xliff:matches:2.0"

KINDS_2 = Kinds(
    holding=frozenset({"pc", "mrk"}),
    apart={"sc": "ec", "sm": "em"},
    pair_key=lambda code: code.get("startRef") if local(code) in ("ec", "em") else code.get("id"),
    kept=lambda code: local(code) == "mrk" and code.get("translate") == "no",
)

OPEN_STATES_2 = frozenset({"initial"})
WRITTEN_2 = "translated"
"""The state of a segment whose target is written (its `subState` "rnnsearch:mt", or
"rnnsearch:mt-suggestion" where the call asks for that qualifier: ReadOptions)."""


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
        unique(((unit.get("id"), "unit") for unit in units), gatherer.fail, where)
        for unit in units:
            _unit_2(gatherer, unit, file, f"unit {unit.get('id')}")
    return gatherer.gathered


def _unit_2(gatherer: Gatherer, unit: etree._Element, file: etree._Element, where: str) -> None:
    parts = [part for part in unit if local(part) in ("segment", "ignorable")]
    unique(((part.get("id"), local(part)) for part in parts), gatherer.fail, where)
    starts = {code.get("id") for code in unit.iter(f"{{{NS_2}}}sc")}
    for end in unit.iter(f"{{{NS_2}}}ec"):
        if end.get("startRef") is not None and end.get("startRef") not in starts:
            raise gatherer.fail(where, f"<ec startRef={end.get('startRef')!r}> has no <sc> of that id in its unit")
    if not translated_here(unit, file):
        return
    matches = [] if not gatherer.options.proposals else [_Match(gatherer, unit)]
    for number, segment in enumerate((part for part in parts if local(part) == "segment"), start=1):
        source, target = segment.find(f"{{{NS_2}}}source"), segment.find(f"{{{NS_2}}}target")
        named = f"{where}, segment {segment.get('id') or number}"
        if source is None:
            raise gatherer.fail(named, "it has no <source>")
        gatherer.codes_match(source, target, named)
        if not gatherer.wanted(segment.get("state", "initial"), open_states=OPEN_STATES_2, empty=empty(target)):
            continue
        if matches:
            matches[0].add(segment, source, named, number)
            continue
        slot = gatherer.target_slot(source, target, {})
        slot.between = [b"", b""]
        slot.also.append(gatherer.start_tag(segment, {"state": WRITTEN_2, "subState": _sub_state(gatherer)}))
        gatherer.unit(source, named, slot)
        gatherer.gathered.slots.append(slot)
    for match in matches:
        match.done()


class _Match:
    """A unit's translations offered as matches (`<mtc:match type="mt" origin="rnnsearch">`,
    each its segment's source and its translation, with the unit's `<originalData>` that
    their codes refer to), in the unit's `<mtc:matches>` or in one added at its start; a
    segment with no id is given one to be referred to."""

    def __init__(self, gatherer: Gatherer, unit: etree._Element):
        self.gatherer, self.unit = gatherer, unit
        existing = unit.find(f"{{{NS_MATCHES}}}matches")
        at = gatherer.places[unit].open_end if existing is None else gatherer.places[existing].close_start
        opened, closed = (f'<mtc:matches xmlns:mtc="{NS_MATCHES}">', "</mtc:matches>") if existing is None else ("", "")
        self.prefix = "mtc" if existing is None else gatherer.qualified(existing, "x").rpartition(":")[0]
        self.slot = gatherer.inserted_slot(at, opened, closed)
        self.pending = ""
        data = unit.find(f"{{{NS_2}}}originalData")
        self.data = "" if data is None else gatherer.reader.raw(data).decode(gatherer.encoding)

    def add(self, segment: etree._Element, source: etree._Element, named: str, number: int) -> None:
        gatherer, match = self.gatherer, self.qualified("match")
        identifier = segment.get("id")
        if identifier is None:
            identifier = f"rnnsearch-{number}"
            gatherer.gathered.fixed.append(gatherer.start_tag(segment, {"id": identifier}))
        side, target = gatherer.qualified(source, "source"), gatherer.qualified(source, "target")
        raw = gatherer.reader.inner(source).decode(gatherer.encoding)
        opened = (
            f'<{match} ref="#{identifier}" type="mt" origin="rnnsearch">{self.data}<{side}>{raw}</{side}><{target}>'
        )
        self.slot.between.append((self.pending + opened).encode(gatherer.encoding))
        self.pending = f"</{target}></{match}>"
        gatherer.unit(source, named, self.slot)

    def done(self) -> None:
        if self.slot.units:
            self.slot.between.append(self.pending.encode(self.gatherer.encoding))
            self.gatherer.gathered.slots.append(self.slot)

    def qualified(self, name: str) -> str:
        return f"{self.prefix}:{name}" if self.prefix else name


def _sub_state(gatherer: Gatherer) -> str:
    """What a written segment's `subState` says: rnnsearch's machine translation, or its suggestion."""
    qualifier = gatherer.options.state_qualifier
    return "rnnsearch:mt" if qualifier == "leveraged-mt" else f"rnnsearch:{qualifier}"
