"""XLIFF through a model: every inline code back, and what a file costs against the same
sentences through `translate`.

    python bench/xliff.py [--model runs/translators/en-fr] [--set test-eurlex]
                          [--rounds 2] [--threads 2]

The English side of a EUR-Lex set of ../shared/data/xliff-tags/ (Hanneman & Dinu, WMT
2020, github.com/amazon-science/mt-markup-tags, CC BY 4.0) is wrapped as an XLIFF 1.2
file (one `<trans-unit>` a line, its codes as the set writes them: `<g>`, `<x/>`, `<bx/>`,
`<ex/>`) and as an XLIFF 2.1 file (the same codes as `<pc>`, `<ph/>` and isolated
`<sc/>`/`<ec/>`), here, never in the repository. Each file is translated by
`translate_documents`, and every target checked:

- codes kept: each of its source's codes in it exactly once (name and id), nothing else;
- well nested and parsed: the file is well-formed XML, and for 1.2 translate-toolkit's
  XLIFF class reads every target (a GPL library: the bench's reader, never the package's);
- valid: the file validates against the OASIS schemas (tests/data/xliff-schemas: 1.2
  strict, 2.0 core for 2.1), as its source does;

then, alternating in the same sitting, the file translated and the same lines' text (their
codes removed) translated by `translate`, `--rounds` times (0: no timing): sentences per
second of each and their ratio.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from collections import Counter
from pathlib import Path

import torch
from lxml import etree

import rnnsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.xliff_schemas import schema  # noqa: E402  (the repository's root comes first on sys.path)

SETS = ROOT.parent / "shared" / "data" / "xliff-tags"
NS_12 = "urn:oasis:names:tc:xliff:document:1.2"
NS_2 = "urn:oasis:names:tc:xliff:document:2.0"


def lines(name: str) -> list[str]:
    return (SETS / f"{name}.en").read_text(encoding="utf-8").splitlines()


def xliff_12(segments: list[str]) -> bytes:
    units = "".join(
        f'<trans-unit id="{k}"><source xml:lang="en">{line}</source></trans-unit>\n' for k, line in enumerate(segments)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<xliff version="1.2" xmlns="{NS_12}"><file original="eurlex" source-language="en" '
        f'datatype="x-undefined"><body>\n{units}</body></file></xliff>\n'
    ).encode()


def as_2(line: str) -> str:
    """A 1.2 line's codes as 2.x writes them."""
    root = etree.fromstring(f"<r>{line}</r>")
    renamed = {"g": "pc", "x": "ph", "bx": "sc", "ex": "ec"}
    for code in root.iter(tag=etree.Element):
        if code is root:
            continue
        name = code.tag
        code.tag = renamed[name]
        if name in ("bx", "ex"):
            code.set("isolated", "yes")
            if name == "ex":
                code.set("id", f"e{code.get('id')}")
    return etree.tostring(root, encoding="unicode")[3:-4]


def xliff_21(segments: list[str]) -> bytes:
    units = "".join(
        f'<unit id="u{k}"><segment><source>{as_2(line)}</source></segment></unit>\n' for k, line in enumerate(segments)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<xliff version="2.1" xmlns="{NS_2}" srcLang="en"><file id="eurlex">\n{units}</file></xliff>\n'
    ).encode()


def codes(element: etree._Element) -> Counter:
    return Counter(
        (etree.QName(code).localname, code.get("id")) for code in element.iter(tag=etree.Element) if code is not element
    )


def checked(data: bytes, namespace: str, unit: str) -> dict[str, int]:
    """How many targets there are, and how many hold exactly their source's codes."""
    root = etree.fromstring(data)
    units = list(root.iter(f"{{{namespace}}}{unit}"))
    kept = 0
    for each in units:
        source, target = each.find(f".//{{{namespace}}}source"), each.find(f".//{{{namespace}}}target")
        kept += target is not None and codes(source) == codes(target)
    return {"units": len(units), "codes_kept": kept}


def validated(data: bytes, name: str) -> dict[str, object]:
    """Whether a file validates against the OASIS schema `name`, and its first errors."""
    checking = schema(name)
    valid = checking.validate(etree.fromstring(data))
    return {"valid": valid, "schema_errors": [str(error) for error in checking.error_log][:3]}


def read_by_translate_toolkit(data: bytes) -> dict[str, object]:
    """How many targets translate-toolkit reads, and the source of each it reads as empty."""
    from translate.storage import xliff  # GPL: read here, never imported by the package

    store = xliff.xlifffile.parsestring(data)
    empty = [unit.source for unit in store.units if not unit.target]
    return {"targets_read": len(store.units) - len(empty), "read_empty": empty[:5]}


def plain(line: str) -> str:
    return html.unescape("".join(etree.fromstring(f"<r>{line}</r>").itertext()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "runs" / "translators" / "en-fr")
    parser.add_argument("--set", default="test-eurlex")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model)
    segments = lines(args.set)
    files = {"1.2": xliff_12(segments), "2.1": xliff_21(segments)}
    report: dict[str, object] = {"set": args.set, "segments": len(segments)}
    for version, data in files.items():
        [document] = translator.translate_documents([data], names=[f"{args.set}.xlf"])
        namespace, unit = (NS_12, "trans-unit") if version == "1.2" else (NS_2, "segment")
        schema_name = "xliff-core-1.2-strict.xsd" if version == "1.2" else "xliff-core-2.0.xsd"
        report[version] = checked(document.data, namespace, unit)
        report[version] |= {"source_valid": validated(data, schema_name)["valid"]} | validated(
            document.data, schema_name
        )
        if version == "1.2":
            report[version] |= read_by_translate_toolkit(document.data)
        print(version, report[version], flush=True)
    if args.rounds < 1:
        print(json.dumps(report, indent=1))
        return
    texts = [plain(line) for line in segments]
    timings: dict[str, list[float]] = {"xliff": [], "translate": []}
    for _ in range(args.rounds):
        start = time.perf_counter()
        translator.translate_documents([files["1.2"]], names=["set.xlf"])
        timings["xliff"].append(time.perf_counter() - start)
        start = time.perf_counter()
        translator.translate(texts)
        timings["translate"].append(time.perf_counter() - start)
    best = {name: min(seconds) for name, seconds in timings.items()}
    report["sentences_per_second"] = {name: len(segments) / seconds for name, seconds in best.items()}
    report["ratio"] = best["translate"] / best["xliff"]
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
