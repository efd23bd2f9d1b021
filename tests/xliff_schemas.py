"""The OASIS XLIFF schemas (tests/data/xliff-schemas, with their notices), loaded for the
tests and the XLIFF bench to validate translated files against."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lxml import etree

SCHEMAS = Path(__file__).resolve().parent / "data" / "xliff-schemas"


@cache
def schema(name: str) -> etree.XMLSchema:
    """An XLIFF schema by its file name, its import of the `xml:` namespace read from
    beside it, so that nothing is fetched."""
    tree = etree.parse(str(SCHEMAS / name))
    for imported in tree.getroot().iter("{http://www.w3.org/2001/XMLSchema}import"):
        if imported.get("namespace") == "http://www.w3.org/XML/1998/namespace":
            imported.set("schemaLocation", (SCHEMAS / "xml.xsd").as_uri())
    return etree.XMLSchema(tree)
