"""An Office package (Word, PowerPoint) opened and checked before anything of it is
translated: a zip whose parts are all unpacked (a chunk at a time, within
MAX_DOCUMENT_BYTES), none encrypted, compressed by a method other than Office's or
damaged, and whose stories (the parts with paragraphs to translate, as the package's
`Kind` says) are well-formed XML without a DTD (each format reads their paragraphs)."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lxml import etree

from rnnsearch.documents.document import MAX_DOCUMENT_BYTES, Document, DocumentError, Unit

ENCRYPTED = 0x1
"""The zip general purpose flag of an encrypted member."""

CHUNK = 1 << 20
"""How many bytes of a part are unpacked at a time while the package is checked."""

MAX_PART_ELEMENTS = 4_000_000
"""The most XML elements one part may have: some thousand pages of text, and a tree of
them that fits in well under a gigabyte."""

Element = etree._Element
"""An element of a parsed part (lxml's)."""


@dataclass(frozen=True)
class Kind:
    """A kind of package: what it is called ("a Word document"), the program that writes
    it ("Word"), the part every one has, and which parts are its stories."""

    described: str
    maker: str
    required: str
    is_story: Callable[[str], bool]


@dataclass(frozen=True)
class Package:
    """A package opened and checked (`opened`): its bytes as read, its zip, and its
    stories parsed, by part name, in the package's order."""

    data: bytes
    archive: zipfile.ZipFile
    parts: dict[str, Element]


def opened(data: bytes, origin: str, kind: Kind) -> Package:
    """The package in `data`, its stories parsed; a DocumentError naming `origin` (and
    the part) where it is not of its kind, is larger than MAX_DOCUMENT_BYTES unpacked, or
    a part cannot be read."""
    archive, stories = unpacked(data, origin, kind)
    return Package(data, archive, {name: parsed_part(story, name, origin, kind) for name, story in stories.items()})


def unpacked(data: bytes, origin: str, kind: Kind) -> tuple[zipfile.ZipFile, dict[str, bytes]]:
    """The package in `data`, every part checked, and its stories' bytes, by part name,
    in the package's order (`opened`'s checks, the stories left unparsed)."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise DocumentError(f"{origin}: not {kind.described} (a damaged or not a zip file: {error})") from None
    size = sum(member.file_size for member in members)
    if size > MAX_DOCUMENT_BYTES:
        raise DocumentError(
            f"{origin}: its parts unpack to {size:,} bytes, more than the {MAX_DOCUMENT_BYTES:,} a document may have"
        )
    if kind.required not in [member.filename for member in members]:
        raise DocumentError(f"{origin}: not {kind.described} (no {kind.required})")
    return package, _unpacked(package, members, origin, kind)


def _unpacked(package: zipfile.ZipFile, members: list[zipfile.ZipInfo], origin: str, kind: Kind) -> dict[str, bytes]:
    """The stories' parts, by name, once every part of the package has been unpacked
    and checked, before anything is translated: a part that is encrypted, compressed by
    a method other than Office's (stored or deflated), damaged (its CRC) or larger than it
    says, or parts that unpack past MAX_DOCUMENT_BYTES together, are a DocumentError
    naming the part. Parts are read a chunk at a time, so a part that lies about its
    size is stopped at the bound, and only the stories are kept."""
    stories, total = {}, 0
    for member in members:
        where = f"{origin}: {member.filename}"
        if member.flag_bits & ENCRYPTED:
            raise DocumentError(f"{where}: encrypted, which {kind.described}'s parts never are")
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise DocumentError(
                f"{where}: compressed by zip method {member.compress_type}, not {kind.maker}'s (stored or deflated)"
            )
        chunks = []
        try:
            with package.open(member) as part:
                while chunk := part.read(CHUNK):
                    total += len(chunk)
                    if total > MAX_DOCUMENT_BYTES:
                        raise DocumentError(f"{where}: the parts unpack to more than {MAX_DOCUMENT_BYTES:,} bytes")
                    if kind.is_story(member.filename):
                        chunks.append(chunk)
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            OSError,
            ValueError,
            RuntimeError,
            NotImplementedError,
        ) as error:
            raise DocumentError(f"{where}: cannot be unpacked ({error})") from None
        if kind.is_story(member.filename):
            stories[member.filename] = b"".join(chunks)
    return stories


def parsed_part(data: bytes, name: str, origin: str, kind: Kind) -> Element:
    """A part parsed, with no DTD, no entities and no network, and refused once it has
    more than MAX_PART_ELEMENTS elements: its tree, built as it is read, is counted as it
    grows, so that a package of a few hundred kilobytes holding millions of empty
    paragraphs (some hundred bytes each in a tree) stops at the bound, not at gigabytes.
    A document type that declares entities or elements is refused (one that only names
    an external DTD, as an EPUB's NCX does, is read, the DTD never loaded)."""
    reading = etree.iterparse(
        io.BytesIO(data), events=("end",), resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        for count, _ in enumerate(reading, start=1):
            if count > MAX_PART_ELEMENTS:
                raise DocumentError(f"{origin}: {name}: more than the {MAX_PART_ELEMENTS:,} elements a part may have")
    except etree.XMLSyntaxError as error:
        raise DocumentError(f"{origin}: {name}: line {error.lineno}: not well-formed XML ({error.msg})") from None
    root: Element = reading.root
    declared = root.getroottree().docinfo.internalDTD
    if declared is not None and (declared.entities() or declared.elements()):  # type: ignore[attr-defined]
        raise DocumentError(f"{origin}: {name}: declares a DTD, which a {kind.maker} part never does; refused")
    return root


def repacked(package: zipfile.ZipFile, parts: dict[str, Element], changed: set[str]) -> bytes:
    """The package written again: the `changed` parts from their trees, every other part
    as it was, in the same order, each compressed as it was."""
    return rewritten(package, {name: tree_bytes(parts[name]) for name in changed})


def tree_bytes(part: Element) -> bytes:
    """A part's tree as the bytes of a part."""
    return bytes(etree.tostring(part, xml_declaration=True, encoding="UTF-8", standalone=True))


def rewritten(package: zipfile.ZipFile, replaced: dict[str, bytes]) -> bytes:
    """The package written again with the `replaced` parts' new bytes, every other part as
    it was, in the same order (an EPUB's `mimetype` first), each compressed as it was."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        for member in package.infolist():
            data = replaced.get(member.filename)
            written.writestr(
                member, package.read(member.filename) if data is None else data, compress_type=member.compress_type
            )
    return buffer.getvalue()


Writer = tuple[tuple[str, ...], Callable[[str], None]]
"""What writes one unit's translation: the parts it changes, and the call that writes it
into their trees."""


class PackageDocument(Document):
    """A package read by a format (`opened`): its units, each with its `Writer`; written back with
    the changed parts from their trees and every other part as it was, or byte for byte
    where no unit changes. `finish`, called once the translations are written into the
    trees, does what spans units (a renamed sheet's references) and gives the parts it
    changed; `noticed`, called then, says what a reader of the written package should
    know (`Document.notes`)."""

    def __init__(
        self,
        package: Package,
        writers: list[Writer],
        units: list[Unit],
        *,
        protected: int = 0,
        finish: Callable[[], set[str]] | None = None,
        noticed: Callable[[], tuple[str, ...]] | None = None,
    ):
        self.package, self.writers, self.units = package, writers, units
        self.protected, self.finish, self.noticed = protected, finish, noticed

    def write(self, translations: Sequence[str | None]) -> bytes:
        changed: set[str] = set()
        for (names, write), translation in zip(self.writers, translations, strict=True):
            if translation is not None:
                write(translation)
                changed.update(names)
        if self.finish is not None:
            changed |= self.finish()
        self.notes = self.noticed() if self.noticed is not None and changed else ()
        package = self.package
        return repacked(package.archive, package.parts, changed) if changed else package.data
