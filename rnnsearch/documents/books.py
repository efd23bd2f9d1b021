"""EPUB books (.epub, EPUB 2 and 3): every XHTML content document of the package's
manifest read and written by the HTML reader (html_page.py: its units, its rules for
`translate`, attributes and kept elements, its `lang` set), the navigation document among
them; the EPUB 2 table of contents (the NCX's title and every entry's label); and the
package document's `dc:title` and `dc:description`, its `dc:language` set to the target
language.

The package is checked as an Office package is (rnnsearch.documents.packages: a zip bomb,
an encrypted or damaged part refused; the OPF and NCX parsed without a DTD's entities).
Its parts stay in their order, the `mimetype` entry first and stored, every id, the
manifest, the spine, the styles, fonts and images as they were; a book none of whose text
changes comes back byte for byte. A book whose container names no package document, or
whose package document is missing, is refused in one line naming it.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from lxml import etree

from rnnsearch.documents.document import (
    Document,
    DocumentError,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    plain_markup,
    plain_text,
)
from rnnsearch.documents.html_page import HtmlPage
from rnnsearch.documents.packages import Element, Kind, parsed_part, rewritten, tree_bytes, unpacked

CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF = "http://www.idpf.org/2007/opf"
DC = "http://purl.org/dc/elements/1.1/"
NCX = "http://www.daisy.org/z3986/2005/ncx/"
PAGES = frozenset({"application/xhtml+xml", "text/html"})
TRANSLATED_METADATA = ("title", "description")

EPUB = Kind(
    "an EPUB book",
    "EPUB",
    "META-INF/container.xml",
    lambda name: name == "META-INF/container.xml" or name.lower().endswith((".opf", ".ncx", ".xhtml", ".html", ".htm")),
)


@dataclass
class _Page:
    """A content document read by the HTML reader, and where its units start among the book's."""

    name: str
    document: Document
    first: int


class EpubBook:
    """An EPUB book."""

    name = "epub"
    extensions: tuple[str, ...] = ("epub",)
    dialect = "html"
    media_type = "application/epub+zip"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package, parts = unpacked(checked_size(data, origin), origin, EPUB)
        container = parsed_part(parts["META-INF/container.xml"], "META-INF/container.xml", origin, EPUB)
        rootfile = container.find(f".//{{{CONTAINER}}}rootfile")
        opf_name = None if rootfile is None else rootfile.get("full-path")
        if not opf_name or opf_name not in parts:
            raise DocumentError(f"{origin}: its container names no package document it holds ({opf_name or 'none'})")
        opf = parsed_part(parts[opf_name], opf_name, origin, EPUB)
        book = _Book(data, package, opf_name, opf)
        for name, media_type in _manifest(opf, opf_name):
            if name in parts and media_type in PAGES:
                page = HtmlPage().read(parts[name], origin=f"{origin}: {name}", options=options)
                book.add_page(name, page)
            elif name in parts and media_type == "application/x-dtbncx+xml":
                book.add_texts(name, parsed_part(parts[name], name, origin, EPUB), f"{{{NCX}}}text")
        book.add_metadata(options.target_language)
        checked_units(book.units, origin)
        return book


def _manifest(opf: Element, opf_name: str) -> list[tuple[str, str]]:
    """Each manifest item's part name and media type, in the manifest's order."""
    folder = posixpath.dirname(opf_name)
    items = []
    for item in opf.iter(f"{{{OPF}}}item"):
        href = item.get("href")
        if href:
            items.append(
                (posixpath.normpath(posixpath.join(folder, unquote(href.split("#")[0]))), item.get("media-type", ""))
            )
    return items


class _Book(Document):
    """The book: its pages' units, then its table of contents' and its metadata's."""

    def __init__(self, data: bytes, package: zipfile.ZipFile, opf_name: str, opf: Element):
        self.data, self.package, self.opf_name, self.opf = data, package, opf_name, opf
        self.units: list[Unit] = []
        self.pages: list[_Page] = []
        self.texts: list[tuple[str, Element, Element, int]] = []  # part, its root, an element whose text is unit n
        self.language: Element | None = None
        self.target = ""

    def add_page(self, name: str, page: Document) -> None:
        self.pages.append(_Page(name, page, len(self.units)))
        self.units += [Unit(u.markup, f"{name}: {u.where}", u.attribute, u.parsed) for u in page.units]
        self.protected += page.protected
        self.untranslated += page.untranslated

    def add_texts(self, name: str, root: Element, tag: str) -> None:
        for number, element in enumerate(root.iter(tag), start=1):
            if (element.text or "").strip():
                self.texts.append((name, root, element, len(self.units)))
                self.units.append(
                    Unit(plain_markup(element.text or ""), f"{name}: {etree.QName(tag).localname} {number}")
                )

    def add_metadata(self, target: str) -> None:
        for local in TRANSLATED_METADATA:
            for element in self.opf.iter(f"{{{DC}}}{local}"):
                if (element.text or "").strip():
                    self.texts.append((self.opf_name, self.opf, element, len(self.units)))
                    self.units.append(Unit(plain_markup(element.text or ""), f"{self.opf_name}: dc:{local}"))
        self.language, self.target = self.opf.find(f".//{{{DC}}}language"), target

    def write(self, translations: Sequence[str | None]) -> bytes:
        if all(translation is None for translation in translations):
            return self.data
        replaced: dict[str, bytes] = {}
        for page in self.pages:
            mine = translations[page.first : page.first + len(page.document.units)]
            if any(translation is not None for translation in mine):
                replaced[page.name] = page.document.write(mine)
        roots: dict[str, Element] = {self.opf_name: self.opf}
        for name, root, element, unit in self.texts:
            translation = translations[unit]
            if translation is not None:
                element.text = plain_text(translation)
                roots[name] = root
        if self.language is not None:
            self.language.text = self.target
        replaced.update({name: tree_bytes(root) for name, root in roots.items()})
        return rewritten(self.package, replaced)
