"""XLIFF files, 1.2 and 2.0–2.2 (the version read from the file), read with lxml: each
segment a CAT tool still needs translated is a unit, its inline codes elements of its
line (codes.py), and the translation is written into the file in place of its target.

What is translated (version_12.py and version_2.py have the rules of each version): 1.2's `<trans-unit>`s, or
the `<mrk mtype="seg">` segments of one's `<seg-source>`, written back as a segmented
`<target>` with the same `mid`s; 2.x's `<segment>`s. Only where the target is missing or
empty, or its state says it still needs translating (1.2 `new`, `needs-translation` or no
state; 2.x `initial` or no state), never where `translate="no"` holds or what a person has
translated, reviewed or approved, unless the call asks for that to be translated again
(`ReadOptions.retranslate`; never what is marked `translate="no"`). A target written says
it is machine translation: 1.2 `state="needs-review-translation"`
`state-qualifier="leveraged-mt"`; 2.x the segment's `state="translated"` with
`subState="rnnsearch:mt"` (or, as a call may ask, `mt-suggestion` and
`rnnsearch:mt-suggestion`: ReadOptions.state_qualifier). A call may instead offer each translation as a proposal and
leave the target alone (`ReadOptions.proposals`): 1.2 an `<alt-trans origin="rnnsearch">`
at the unit's end (with the segment's `mid`), 2.x an `<mtc:match type="mt"
origin="rnnsearch">` in the unit's matches. A call may also name the states whose targets
are written over (`ReadOptions.overwrite`: `translated`, `final`, `approved`…). A file
that names no target language gets the model's.

Every byte outside the targets written (and the 2.x segments' start tags, and the one
attribute a missing target language adds) stays as it was: each element's place in the
bytes is found by extents.py, and the targets are spliced in. A segment whose translation
is its own words gets its source's content as its target.

Refused in one line naming the file, and the unit where there is one: not well-formed XML;
a DTD (so no entity is ever expanded or fetched); another encoding than an 8-bit one
(UTF-16: save it as UTF-8); not XLIFF, or a version other than those above; a source
language the model does not read, or a target language it does not write; a unit or a
segment id given twice; a 2.x end code (`<ec>`) whose start (`<sc>`) its unit lacks; a
target whose codes are not its source's.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence

from lxml import etree

from rnnsearch.documents.document import Document, DocumentError, ReadOptions, checked_size, checked_units
from rnnsearch.documents.xliff.extents import extents
from rnnsearch.documents.xliff.gathering import Gathered
from rnnsearch.documents.xliff.version_2 import NS_2, gathered_2
from rnnsearch.documents.xliff.version_12 import NS_12, gathered_12

VERSIONS: dict[tuple[str, str], Callable[..., Gathered]] = {
    (NS_12, "1.2"): gathered_12,
    **{(NS_2, version): gathered_2 for version in ("2.0", "2.1", "2.2")},
}
"""Each version's reader, by the namespace and `version` of the file's root."""

READER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
"""lxml as the file is read: no entity expanded, nothing fetched, lxml's bounds on depth and size kept."""


class XliffDocument(Document):
    """An XLIFF file read: its units, and the places their translations are written."""

    def __init__(self, data: bytes, gathered: Gathered, *, encoding: str):
        self.data, self.units, self.encoding = data, gathered.units, encoding
        self.slots, self.fixed, self.protected = gathered.slots, gathered.fixed, gathered.protected

    def write(self, translations: Sequence[str | None]) -> bytes:
        if not self.slots:
            return self.data
        splices = list(self.fixed)
        for slot in self.slots:
            splices += slot.written(translations, self.encoding)
        pieces, position = [], 0
        for start, end, replacement in sorted(splices, key=lambda splice: (splice[0], splice[1])):
            pieces += [self.data[position:start], replacement]
            position = end
        pieces.append(self.data[position:])
        return b"".join(pieces)


class Xliff:
    """XLIFF 1.2, 2.0, 2.1 and 2.2 (see the module docstring)."""

    name = "xliff"
    extensions: tuple[str, ...] = ("xlf", "xliff")
    dialect = "xml"
    media_type = "application/xliff+xml"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        root = _root(checked_size(data, origin), origin)
        encoding = _encoding(root, origin)
        namespace, version = etree.QName(root).namespace, root.get("version")
        rules = VERSIONS.get((namespace or "", version or ""))
        if etree.QName(root).localname != "xliff" or rules is None:
            raise DocumentError(
                f"{origin}: not XLIFF 1.2, 2.0, 2.1 or 2.2 (its root is <{etree.QName(root).localname}> "
                f"version {version!r} in {namespace or 'no namespace'!r})"
            )
        elements = list(root.iter(tag=etree.Element))
        places = extents(data)
        if len(places) != len(elements):
            raise DocumentError(f"{origin}: its elements could not be placed in its bytes")
        gathered = rules(
            data, dict(zip(elements, places, strict=True)), origin=origin, options=options, encoding=encoding
        )
        checked_units(gathered.units, origin)
        return XliffDocument(data, gathered, encoding=encoding)


def _root(data: bytes, origin: str) -> etree._Element:
    """The file's root element; refused when the file is not XML or declares a DTD."""
    try:
        tree = etree.ElementTree(etree.fromstring(data, READER))
    except etree.XMLSyntaxError as error:
        raise DocumentError(f"{origin}: not well-formed XML (line {error.lineno}: {error.msg})") from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:  # type: ignore[attr-defined]
        raise DocumentError(f"{origin}: it declares a DTD, which an XLIFF file has no need of; it is not read")
    return tree.getroot()


def _encoding(root: etree._Element, origin: str) -> str:
    """The file's encoding, refused unless it writes ASCII's characters in one byte each."""
    declared = root.getroottree().docinfo.encoding or "utf-8"
    name = codecs.lookup(declared).name
    if "16" in name or "32" in name:
        raise DocumentError(f"{origin}: it is in {declared}; save it as UTF-8 to have it translated")
    return name
