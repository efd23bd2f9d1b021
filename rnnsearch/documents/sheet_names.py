"""A workbook's sheets renamed: each new name one that Excel takes, and every reference to
a renamed sheet, wherever the workbook keeps one, made to follow it.

Excel's rules for a sheet's name: 1 to 31 characters, none of `: \\ / ? * [ ]`, no
apostrophe at either end, not "History", and no two sheets named the same in any case. A
translated name that breaks one is mended: a forbidden character becomes a space, the
name is cut to 31 characters, and a name another sheet has takes " (2)", " (3)"…; one
with nothing left keeps its old name.

References follow their sheet in cell formulas (shared ones too), data validations and
conditional formats (their x14 extensions too), defined names (print areas and titles
among them), hyperlinks within the workbook, charts' series, tables' column formulas and
pivot caches' sources, and the workbook's list of its parts' titles (docProps/app.xml).
A formula is read by openpyxl's tokenizer and only its references are rewritten: a
sheet's name inside a string (INDIRECT("Sheet1!A1")) is text and stays as written, a
reference to another workbook (`[1]Sheet1!A1`) stays, and a formula the tokenizer cannot
read is left as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rnnsearch.documents.packages import Element

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
XM = "http://schemas.microsoft.com/office/excel/2006/main"
CHART = "http://schemas.openxmlformats.org/drawingml/2006/chart"
VT = "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"
EXTENDED = "http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"

FORMULAS = frozenset(
    {
        f"{{{S}}}f", f"{{{S}}}formula", f"{{{S}}}formula1", f"{{{S}}}formula2", f"{{{S}}}definedName",
        f"{{{S}}}calculatedColumnFormula", f"{{{S}}}totalsRowFormula", f"{{{XM}}}f", f"{{{CHART}}}f",
    }
)  # fmt: skip
"""The elements whose text is a formula (without its "="): cells', validations',
conditional formats', defined names', tables', x14 extensions' and charts' series'."""

HYPERLINK, SOURCE = f"{{{S}}}hyperlink", f"{{{S}}}worksheetSource"
TITLES = f"{{{EXTENDED}}}TitlesOfParts"

LONGEST = 31
FORBIDDEN = frozenset(":\\/?*[]")
RESERVED = "history"


def excel_names(names: list[str], translated: Mapping[int, str]) -> dict[str, str]:
    """Old name to new for each sheet whose name `translated` changes (by its index in
    `names`), every new name one that Excel takes and unlike every other sheet's."""
    final = [_mended(translated[k]) if k in translated else None for k in range(len(names))]
    taken = {name.casefold() for name, new in zip(names, final, strict=True) if new is None}
    taken.add(RESERVED)
    renamed = {}
    for name, new in zip(names, final, strict=True):
        if new is None:
            continue
        chosen = _unique(new, taken) if new else name
        taken.add(chosen.casefold())
        if chosen != name:
            renamed[name] = chosen
    return renamed


def _mended(name: str) -> str:
    """A translated name with Excel's forbidden characters made spaces, its spaces
    collapsed, no apostrophe at its ends, at most LONGEST characters."""
    cleaned = " ".join("".join(" " if character in FORBIDDEN else character for character in name).split())
    return cleaned.strip("'")[:LONGEST].strip()


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or with " (2)", " (3)"… where another sheet has it, cut to fit LONGEST."""
    chosen, number = name, 1
    while chosen.casefold() in taken:
        number += 1
        mark = f" ({number})"
        chosen = name[: LONGEST - len(mark)].rstrip() + mark
    return chosen


def follow(parts: Iterable[tuple[str, Element]], renamed: Mapping[str, str]) -> set[str]:
    """Every reference to a sheet `renamed` (old name to new) in `parts` (by name) made to
    follow it; the names of the parts changed."""
    by_name = {old.casefold(): new for old, new in renamed.items()}
    changed = set()
    for name, root in parts:
        if _followed(root, by_name):
            changed.add(name)
    return changed


def _followed(root: Element, by_name: Mapping[str, str]) -> bool:
    """The references in one part made to follow; whether any changed."""
    changed = False
    for element in root.iter(*FORMULAS, HYPERLINK, SOURCE, TITLES):
        if element.tag in FORMULAS and element.text:
            changed |= _set_text(element, renamed_formula(element.text, by_name))
        elif element.tag == HYPERLINK and element.get("location"):
            changed |= _set(element, "location", renamed_formula(element.get("location", ""), by_name))
        elif element.tag == SOURCE and element.get("sheet"):
            sheet = element.get("sheet", "")
            changed |= _set(element, "sheet", by_name.get(sheet.casefold(), sheet))
        elif element.tag == TITLES:
            for title in element.iter(f"{{{VT}}}lpstr"):
                changed |= _set_text(title, by_name.get((title.text or "").casefold(), title.text or ""))
    return changed


def _set_text(element: Element, text: str) -> bool:
    if text == element.text:
        return False
    element.text = text
    return True


def _set(element: Element, attribute: str, value: str) -> bool:
    if value == element.get(attribute):
        return False
    element.set(attribute, value)
    return True


def renamed_formula(formula: str, by_name: Mapping[str, str]) -> str:
    """A formula (without its "=") with its references to the sheets `by_name` (old name,
    case folded, to new) rewritten; the rest as written."""
    if "!" not in formula:
        return formula
    from openpyxl.formula.tokenizer import Tokenizer, TokenizerError

    try:
        tokens = Tokenizer("=" + formula)
    except TokenizerError:
        return formula
    changed = False
    for token in tokens.items:
        if token.type == "OPERAND" and token.subtype == "RANGE":
            value = renamed_reference(token.value, by_name)
            changed |= value != token.value
            token.value = value
    return tokens.render()[1:] if changed else formula


def renamed_reference(reference: str, by_name: Mapping[str, str]) -> str:
    """A reference (`Sheet1!A1`, `'My sheet'!A1:B2`, `Sheet1:Sheet3!A1`) with its sheet's
    name rewritten where `by_name` renames it, quoted; any other as written."""
    if reference.startswith("'"):
        end = 1
        while end < len(reference) and (reference[end] != "'" or reference[end + 1 : end + 2] == "'"):
            end += 2 if reference[end] == "'" else 1
        sheets, rest = reference[1:end].replace("''", "'"), reference[end + 1 :]
    else:
        bang = reference.find("!")
        sheets, rest = reference[: max(bang, 0)], reference[max(bang, 0) :]
    if not rest.startswith("!") or not sheets or sheets.startswith("["):
        return reference
    names = sheets.split(":")
    new = [by_name.get(name.casefold(), name) for name in names]
    if new == names:
        return reference
    return "'" + ":".join(new).replace("'", "''") + "'" + rest
