"""XLIFF 1.2: each `<trans-unit>`, or each segment of its `<seg-source>`, that still needs
translating, its target written with a state that says it is machine translation, or
its translation offered beside it in an `<alt-trans>` (format.py has the rules)."""

from __future__ import annotations

from lxml import etree

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.xliff.codes import Kinds, local
from rnnsearch.documents.xliff.extents import Extent
from rnnsearch.documents.xliff.gathering import Gathered, Gatherer, Slot, empty, indent, translated_here, unique

NS_12 = "urn:oasis:names:tc:xliff:document:1.2"

KINDS_12 = Kinds(
    holding=frozenset({"g", "mrk"}),
    apart={"bpt": "ept", "bx": "ex"},
    pair_key=lambda code: code.get("rid") or code.get("id"),
    kept=lambda code: local(code) == "mrk" and code.get("mtype") == "protected",
)
OPEN_STATES_12 = frozenset({"new", "needs-translation"})
WRITTEN_12 = "needs-review-translation"
"""The state of a target written (its `state-qualifier` as the call asks: ReadOptions)."""


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
        unique(((unit.get("id"), "trans-unit") for unit in units), gatherer.fail, where)
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
    state = None if target is None else target.get("state")
    wanted = gatherer.wanted(
        state, open_states=OPEN_STATES_12, empty=empty(target), approved=unit.get("approved") == "yes"
    )
    if not translated_here(unit, file) or not wanted:
        return
    segments = [] if segmented is None else [m for m in segmented.iter(f"{{{NS_12}}}mrk") if m.get("mtype") == "seg"]
    if gatherer.options.proposals:
        _proposals(gatherer, unit, source, segments, where)
        return
    said = {"state": WRITTEN_12, "state-qualifier": gatherer.options.state_qualifier}
    slot = gatherer.target_slot(source if segmented is None else segmented, target, said)
    if segmented is None or not segments:
        slot.between = [b"", b""]
        gatherer.unit(source, where, slot)
    else:
        _segments(gatherer, segmented, segments, slot, where)
    gatherer.gathered.slots.append(slot)


def _proposals(
    gatherer: Gatherer, unit: etree._Element, source: etree._Element, segments: list[etree._Element], where: str
) -> None:
    """The unit's translation offered in an `<alt-trans origin="rnnsearch">` at its end, one
    per segment (its `mid` naming the segment), its target left as it is."""
    language = gatherer.options.target_language
    last = unit[len(unit) - 1]
    at, lead = gatherer.places[last].end, indent(last)
    alt, target = gatherer.qualified(source, "alt-trans"), gatherer.qualified(source, "target")
    for segment in segments or [source]:
        mid = f' mid="{segment.get("mid")}"' if segment is not source else ""
        opened = f'<{alt}{mid} origin="rnnsearch" alttranstype="proposal"><{target} xml:lang="{language}">'
        slot = gatherer.inserted_slot(at, opened, f"</{target}></{alt}>", lead)
        slot.between = [b"", b""]
        named = where if segment is source else f"{where}, segment {segment.get('mid')}"
        gatherer.unit(segment, named, slot)
        gatherer.gathered.slots.append(slot)


def _segments(
    gatherer: Gatherer, segmented: etree._Element, segments: list[etree._Element], slot: Slot, where: str
) -> None:
    """Each segment of a `<seg-source>` a unit, the target written as the seg-source is,
    each segment's content its translation."""
    unique(((m.get("mid"), "segment") for m in segments), gatherer.fail, where)
    position = gatherer.places[segmented].open_end
    for segment in segments:
        place = gatherer.places[segment]
        slot.between.append(gatherer.data[position : place.open_end])
        gatherer.unit(segment, f"{where}, segment {segment.get('mid')}", slot)
        position = place.close_start
    slot.between.append(gatherer.data[position : gatherer.places[segmented].close_start])
