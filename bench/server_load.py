"""How long a one-line request waits while documents are being translated: the server run
on a loopback port with a model, `--documents` clients each sending an HTML page of
`--paragraphs` sentences to /v1/documents at once, and, while they are served, one
client sending a one-line /v1/translate request after another; the one-line requests'
latencies (median and largest, seconds) against the same requests with no document
being translated, and how long the documents took.

    python bench/server_load.py [--model runs/bench-alignment/en-fr] [--documents 6]
                                [--paragraphs 100] [--threads 2] [--cat N] [--glossaries N]

With `--glossaries N`, instead: N clients at once, each sending one-sentence requests one
after another, each request with a glossary of its own (two of its sentence's words, kept
as written), and then the same requests with no glossary: the medians and the model calls
of both (requests that differ in their glossaries alone may share a model call).

With `--cat N`, instead: N one-segment requests, each sent as OmegaT's Apertium connector
sends it (`GET /translate?langpair=…&q=…`, the segment's first word in a short tag
`<b0>…</b0>`) and, alternating, to /v1/translate with `markup` `xml`: the medians of
both, and their ratio (the CAT tools' shapes are adapters over the same path).

The script calls only `rnnsearch.load`, `rnnsearch.server.create_app` and `Limits`, so it
also runs another checkout of the package (PYTHONPATH=that checkout), to set the code
before a change against the code after it. Every request goes to 127.0.0.1 alone.
"""

from __future__ import annotations

import argparse
import html
import json
import socket
import statistics
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import torch
import uvicorn

import rnnsearch
from rnnsearch.server import Limits, create_app
from rnnsearch.text.corpus import read_lines

DATA = Path(__file__).resolve().parent.parent / "data" / "multi30k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/bench-alignment/en-fr")
    parser.add_argument("--documents", type=int, default=6)
    parser.add_argument("--paragraphs", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cat", type=int, metavar="N", help="time N one-segment requests of the CAT tools' shape")
    parser.add_argument(
        "--glossaries", type=int, metavar="N", help="N clients at once, each request with its own terms"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model, device="cpu")
    language = "en" if translator.data.src_lang == "en" else "de"
    sentences = read_lines(DATA / f"test_2016_flickr.{language}.gz")
    page = "".join(f"<p>{html.escape(s)}</p>\n" for s in sentences[: args.paragraphs]).encode()
    app = create_app(translator, Path(args.model), Limits(timeout=3600.0))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    if args.glossaries:
        print(json.dumps(_glossary_latency(url, app, sentences[:200], args.glossaries)))
    elif args.cat:
        print(json.dumps(_cat_latency(url, sentences[: args.cat], translator.data.src_lang, translator.data.tgt_lang)))
    if args.cat or args.glossaries:
        server.should_exit = True
        serving.join()
        return
    one_line = sentences[-20:]
    alone = [_translated(url, text) for text in one_line]
    started = time.perf_counter()
    clients = [threading.Thread(target=_document, args=(url, page)) for _ in range(args.documents)]
    for client in clients:
        client.start()
    time.sleep(1.0)  # the documents' first batches are under way
    loaded, k = [], 0
    while any(client.is_alive() for client in clients):
        loaded.append(_translated(url, one_line[k % len(one_line)]))
        k += 1
    for client in clients:
        client.join()
    documents = time.perf_counter() - started
    server.should_exit = True
    serving.join()
    print(
        json.dumps(
            {
                "alone": {"median": round(statistics.median(alone), 3), "largest": round(max(alone), 3)},
                "while documents are translated": {
                    "requests": len(loaded),
                    "median": round(statistics.median(loaded), 3) if loaded else None,
                    "largest": round(max(loaded), 3) if loaded else None,
                },
                "documents": {"count": args.documents, "paragraphs": args.paragraphs, "seconds": round(documents, 1)},
            }
        )
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _glossary_latency(url: str, app: object, sentences: list[str], clients: int) -> dict[str, object]:
    """The median seconds and the model calls of `clients` clients at once, each sending
    its share of `sentences` one request at a time, with a glossary of its own each, then
    with none."""
    report: dict[str, object] = {}
    for name, own in (("own glossaries", True), ("no glossary", False)):
        batcher = app.state.batcher  # type: ignore[attr-defined]
        calls, seconds = batcher.calls, []

        threads = [
            threading.Thread(target=_client, args=(url, sentences[k::clients], own, seconds)) for k in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report[name] = {
            "requests": len(seconds),
            "median": round(statistics.median(seconds), 3),
            "calls": batcher.calls - calls,
        }
    return report


def _client(url: str, share: list[str], own: bool, seconds: list[float]) -> None:
    """One client's requests, one after another, each with a glossary of two of its words where `own`."""
    for sentence in share:
        words = [word for word in sentence.split() if word.isalpha()][:2]
        seconds.append(_translated(url, sentence, {word: word for word in words} if own else None))


def _translated(url: str, text: str, glossary: dict[str, str] | None = None) -> float:
    """Seconds a one-line /v1/translate request took to be answered."""
    body = json.dumps({"texts": [text]} | ({} if glossary is None else {"glossary": glossary})).encode()
    request = urllib.request.Request(f"{url}/v1/translate", body, {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=3600) as answer:
        answer.read()
    return time.perf_counter() - started


def _cat_latency(url: str, sentences: list[str], source: str, target: str) -> dict[str, float]:
    """Median seconds of one segment through Apertium's shape and through /v1/translate, alternating."""
    apertium, v1 = [], []
    for sentence in sentences:
        first, _, rest = html.escape(sentence, quote=False).partition(" ")
        segment = f"<b0>{first}</b0> {rest}"
        query = urllib.parse.urlencode({"langpair": f"{source}|{target}", "q": segment, "markUnknown": "no"})
        started = time.perf_counter()
        with urllib.request.urlopen(f"{url}/translate?{query}", timeout=3600) as answer:
            answer.read()
        apertium.append(time.perf_counter() - started)
        body = json.dumps({"texts": [segment], "markup": "xml", "alignments": False}).encode()
        request = urllib.request.Request(f"{url}/v1/translate", body, {"Content-Type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=3600) as answer:
            answer.read()
        v1.append(time.perf_counter() - started)
    medians = {"apertium": statistics.median(apertium), "v1": statistics.median(v1)}
    return {**{k: round(v, 4) for k, v in medians.items()}, "ratio": round(medians["apertium"] / medians["v1"], 3)}


def _document(url: str, page: bytes) -> None:
    request = urllib.request.Request(f"{url}/v1/documents?name=page.html", page)
    with urllib.request.urlopen(request, timeout=3600) as answer:
        answer.read()


if __name__ == "__main__":
    main()
