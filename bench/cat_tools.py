"""The CAT tools' shapes against a model: every tag back, and what one segment costs
against /v1/translate.

    python bench/cat_tools.py [--model runs/translators/en-fr] [--segments 200]
                              [--latency 100] [--threads 2]

The first `--segments` lines of the EUR-Lex test set (../shared/data/xliff-tags/; Hanneman
& Dinu, WMT 2020, github.com/amazon-science/mt-markup-tags, CC BY 4.0) that hold a code
are written in three tag syntaxes: OmegaT's short tags (`<g1>…</g1>`, `<x2/>`, `<a3/>`,
`<e3/>`), Okapi's coded HTML (`<u id='1'>…</u>`, `<br id='p2'/>`, `<br id='b3'/>`,
`<br id='e3'/>`) and plain HTML (`<b id="1">…</b>`, `<br id="2">`). Each is sent as its
tool sends it to the server (in process): OmegaT's through Apertium APy's
`GET /translate` and OPUS-CAT's `TranslateJson`, Okapi's through `GET /translate` with
`format=html`, HTML through LibreTranslate's `POST /translate` with `format=html`. A
segment counts as kept when its answer holds each of its tags exactly once.

Then `--latency` segments one at a time, alternating `GET /translate` (OmegaT's tags) and
`POST /v1/translate` with `markup` `xml` for the same text: the median seconds of each and
their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import torch
from fastapi.testclient import TestClient
from lxml import etree

import rnnsearch
from rnnsearch.markup import parse
from rnnsearch.server import Limits, create_app

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT.parent / "shared" / "data" / "xliff-tags"


def segments(count: int) -> list[etree._Element]:
    lines = (SETS / "test-eurlex.en").read_text(encoding="utf-8").splitlines()
    return [etree.fromstring(f"<r>{line}</r>") for line in lines if "<" in line][:count]


def written(root: etree._Element, tag: callable, escaped: bool) -> str:
    """A segment with each code written by `tag(name, id, inner)`, its text escaped as
    markup or (`escaped` false: tags in plain text, as OmegaT sends them) as it reads."""
    text = _escaped if escaped else (lambda part: part or "")
    pieces = [text(root.text)]
    for code in root:
        inner = written(code, tag, escaped) if len(code) or code.text else None
        pieces += [tag(code.tag, code.get("id"), inner), text(code.tail)]
    return "".join(pieces)


def _escaped(text: str | None) -> str:
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def omegat(name: str, ident: str, inner: str | None) -> str:
    letter = {"g": "g", "x": "x", "bx": "a", "ex": "e"}[name]
    return f"<{letter}{ident}>{inner}</{letter}{ident}>" if inner is not None else f"<{letter}{ident}/>"


def okapi(name: str, ident: str, inner: str | None) -> str:
    if name == "g":
        return f"<u id='{ident}'>{inner or ''}</u>"
    return f"<br id='{ {'x': 'p', 'bx': 'b', 'ex': 'e'}[name] }{ident}'/>"


def html_tags(name: str, ident: str, inner: str | None) -> str:
    return f'<b id="{ident}">{inner or ""}</b>' if name == "g" else f'<br id="{ident}">'


def tags(line: str, dialect: str) -> Counter:
    try:
        return Counter(s for s in parse(line, dialect).segments if s.startswith("<"))
    except ValueError:
        return Counter()


def kept_share(client: TestClient, texts: list[str], send: callable, dialect: str) -> float:
    """The share of texts whose answer holds each of their tags exactly once; `text`: tags
    in plain text (OmegaT's), whose `&` is a character."""

    def counted(line: str) -> Counter:
        return tags(line.replace("&", "&amp;"), "xml") if dialect == "text" else tags(line, dialect)

    return 100 * sum(counted(send(client, text)) == counted(text) for text in texts) / len(texts)


def apertium(client: TestClient, text: str, format: str | None = None) -> str:
    params = {"langpair": "en|fr", "q": text, "markUnknown": "no"} | ({"format": format} if format else {})
    return client.get("/translate", params=params).json()["responseData"]["translatedText"]


def opus_cat(client: TestClient, text: str) -> str:
    params = {"input": text, "srcLangCode": "en", "trgLangCode": "fr", "tokenCode": "0", "modelTag": ""}
    return client.get("/MTRestService/TranslateJson", params=params).json()["translation"]


def libretranslate(client: TestClient, text: str) -> str:
    body = {"q": text, "source": "en", "target": "fr", "format": "html"}
    return client.post("/translate", json=body).json()["translatedText"]


def latency(client: TestClient, texts: list[str]) -> dict[str, float]:
    seconds: dict[str, list[float]] = {"apertium": [], "v1": []}
    for text in texts:
        start = time.perf_counter()
        apertium(client, text)
        seconds["apertium"].append(time.perf_counter() - start)
        start = time.perf_counter()
        client.post("/v1/translate", json={"texts": [text], "markup": "xml", "alignments": False})
        seconds["v1"].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {**medians, "ratio": medians["apertium"] / medians["v1"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "runs" / "translators" / "en-fr")
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--latency", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model)
    roots = segments(args.segments)
    syntaxes = {
        name: [written(root, tag, name != "omegat") for root in roots]
        for name, tag in (("omegat", omegat), ("okapi", okapi), ("html", html_tags))
    }
    report: dict[str, object] = {"segments": len(roots)}
    with TestClient(create_app(translator, args.model, Limits(max_chars=4000, timeout=120))) as client:
        report["omegat via apertium"] = kept_share(client, syntaxes["omegat"], apertium, "text")
        report["omegat via opus-cat"] = kept_share(client, syntaxes["omegat"], opus_cat, "text")
        report["okapi via apertium"] = kept_share(
            client, syntaxes["okapi"], lambda c, t: apertium(c, t, "html"), "html"
        )
        report["html via libretranslate"] = kept_share(client, syntaxes["html"], libretranslate, "html")
        report["latency"] = latency(client, syntaxes["omegat"][: args.latency])
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
