"""What a stored model answers through every layer a caller reaches, kept: the API's
`translate`, `translate_chunks`, `align` and `translate_documents`, the commands, and the
server's own, CAT and document endpoints, compared with what they answered when recorded.

The model (tests/data/behaviour/model: the tests' tiny German→English model, trained 600
steps, with an alignment module) is stored, not trained here, so its answers are the same
on every machine. Texts, pieces, links and documents compare exactly; scores and weights
to 1e-3, as CPUs with other vector units round the last bits differently. A change of the
layers between a caller and the search (how a call's options are carried, checked and
handed down) must leave every answer here as it was; a change meant to change answers
records them again, and the diff of the record shows what changed:

    python tests/integration/test_behaviour.py --record
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import numpy as np
import torch
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.server import Limits, create_app

HERE = Path(__file__).resolve().parents[1] / "data" / "behaviour"
MODEL = HERE / "model"
RECORD = HERE / "expected.json"
TOLERANCE = 1e-3

SOURCES = [
    "Ein Hund läuft durch den Schnee.",
    "Zwei Männer spielen Fußball auf einer Wiese.",
    "Eine Frau singt.",
    "",
    "Ein kleines Mädchen sitzt auf einer Bank.",
]
MARKED = [
    "Ein <b>Hund</b> läuft durch den Schnee.",
    'Zwei <a href="x">Männer</a> spielen <i>Fußball</i> auf einer Wiese.',
    "Eine Frau<br/> singt.",
    "Ein <code>kleines</code> Mädchen sitzt auf einer <b>Bank</b>.",
]
TARGETS = ["A dog runs through the snow.", "Two men play soccer on a field.", "A woman sings.", "", "A girl sits."]
GLOSSARY = {"Hund": "hound", "Wiese": "meadow", "Bank": "bench"}
AVOID = ["a", "the"]
PREFIXES = ["The", "", "Her", "Yes", ""]
DOCUMENTS = {
    "seite.html": "<html><body><h1>Ein Hund</h1><p>Ein <b>Hund</b> läuft durch den Schnee.</p>"
    "<p>Zwei Männer spielen auf einer Wiese.</p></body></html>",
    "text.md": "# Ein Hund\n\nEine Frau **singt** auf einer Bank.\n\n- Zwei Männer\n- Ein Mädchen\n",
    "film.srt": "1\n00:00:01,000 --> 00:00:02,000\nEin Hund läuft.\n\n2\n00:00:03,000 --> 00:00:04,000\n"
    "Eine Frau <i>singt</i>.\n",
    "texte.po": 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Ein Hund läuft."\n'
    'msgstr ""\n\nmsgid "Zwei Männer auf einer Wiese."\nmsgstr ""\n',
    "datei.xlf": '<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
    'xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="a" source-language="de" '
    'target-language="en" datatype="plaintext"><body><trans-unit id="1"><source>Ein <g id="1">Hund</g> '
    'läuft durch den <x id="2"/>Schnee.</source></trans-unit><trans-unit id="2"><source>Eine Frau singt.'
    "</source></trans-unit></body></file></xliff>\n",
}


def plain(value: object) -> object:
    """`value` as JSON data: results' fields by name, arrays as nested lists, floats rounded."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in ("jumps",)}
    if isinstance(value, torch.Tensor):
        return plain(value.detach().cpu().numpy())
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float | np.floating):
        return round(float(value), 4)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str | int | bool | None):
        return value
    return repr(value) if not hasattr(value, "name") else value.name


def api_answers(translator) -> Iterator[tuple[str, Callable[[], object]]]:
    """Each call of the Python API, by name, and what it answers."""
    yield "greedy", lambda: translator.translate(SOURCES, beam_size=1)
    yield "beam", lambda: translator.translate(SOURCES, beam_size=3, n_best=2)
    yield "attention", lambda: translator.translate(SOURCES, beam_size=2, alignment_from="attention")
    yield "prefixes", lambda: translator.translate(SOURCES, beam_size=3, prefixes=PREFIXES)
    yield "glossary", lambda: translator.translate(SOURCES, beam_size=3, glossary=GLOSSARY)
    yield "avoid", lambda: translator.translate(SOURCES, beam_size=3, avoid=AVOID)
    yield "all", lambda: translator.translate(SOURCES, beam_size=2, prefixes=PREFIXES, glossary=GLOSSARY, avoid=AVOID)
    for placement in ("links", "weights", "averaged", "tempered"):
        yield f"markup {placement}", lambda p=placement: translator.translate(MARKED, markup="html", placement=p)
    yield (
        "markup input",
        lambda: translator.translate(MARKED, markup="xml", reading="input", alignment_from="attention"),
    )
    yield (
        "chunks",
        lambda: list(
            translator.translate_chunks(
                [SOURCES[:2], SOURCES[2:]], beam_size=2, prefix_chunks=[PREFIXES[:2], PREFIXES[2:]]
            )
        ),
    )
    yield "align", lambda: translator.align(SOURCES, TARGETS)
    yield "align markup", lambda: translator.align(MARKED, TARGETS[:4], markup="html", placement="weights")
    yield "align attention", lambda: translator.align(SOURCES, TARGETS, alignment_from="attention", reading="both")
    yield (
        "align chunks",
        lambda: list(translator.align_chunks([(SOURCES[:3], TARGETS[:3]), (SOURCES[3:], TARGETS[3:])])),
    )
    for name, text in DOCUMENTS.items():
        yield (
            f"document {name}",
            lambda n=name, t=text: translator.translate_documents(
                [t.encode()], names=[n], glossary=GLOSSARY, unchanged_ok=True
            ),
        )


def server_answers(client: TestClient) -> Iterator[tuple[str, Callable[[], object]]]:
    """Each call of the server, by name, and the body it answers."""

    def post(path: str, **sent) -> object:
        answer = client.post(path, **sent)
        return {
            "status": answer.status_code,
            "body": answer.json() if "json" in answer.headers["content-type"] else answer.text,
        }

    def get(path: str, **sent) -> object:
        answer = client.get(path, **sent)
        return {"status": answer.status_code, "body": answer.json()}

    yield "server", lambda: post("/v1/translate", json={"texts": SOURCES, "beam_size": 2, "n_best": 2})
    yield (
        "server terms",
        lambda: post(
            "/v1/translate", json={"texts": SOURCES, "prefixes": PREFIXES, "glossary": GLOSSARY, "avoid": AVOID}
        ),
    )
    yield (
        "server markup",
        lambda: post("/v1/translate", json={"texts": MARKED, "markup": "html", "placement": "weights"}),
    )
    yield "apertium", lambda: get("/translate", params={"q": MARKED[0], "langpair": "de|en", "format": "html"})
    yield "libretranslate", lambda: post("/translate", json={"q": SOURCES[:3], "source": "de", "target": "en"})
    yield (
        "opus-cat",
        lambda: get(
            "/MTRestService/TranslateJson", params={"input": SOURCES[1], "srcLangCode": "de", "trgLangCode": "en"}
        ),
    )
    for name, text in DOCUMENTS.items():
        yield (
            f"server document {name}",
            lambda n=name, t=text: post(
                "/v1/documents", params={"name": n, "glossary": json.dumps(GLOSSARY), "unchanged_ok": True}, content=t
            ),
        )


def command_answers(folder: Path) -> Iterator[tuple[str, Callable[[], object]]]:
    """Each command, by name, and the files it writes."""
    source = folder / "source.de"
    source.write_text("".join(line + "\n" for line in SOURCES), encoding="utf-8")
    marked = folder / "marked.de"
    marked.write_text("".join(line + "\n" for line in MARKED), encoding="utf-8")
    target = folder / "target.en"
    target.write_text("".join(line + "\n" for line in TARGETS), encoding="utf-8")
    prefixes = folder / "prefixes.en"
    prefixes.write_text("".join(line + "\n" for line in PREFIXES), encoding="utf-8")
    glossary = folder / "glossary.tsv"
    glossary.write_text("de\ten\n" + "".join(f"{s}\t{t}\n" for s, t in GLOSSARY.items()), encoding="utf-8")
    avoid = folder / "avoid.txt"
    avoid.write_text("".join(word + "\n" for word in AVOID), encoding="utf-8")
    documents = folder / "documents"
    documents.mkdir()
    for name, text in DOCUMENTS.items():
        (documents / name).write_text(text, encoding="utf-8")

    def run(*args: object, written: tuple[str, ...]) -> object:
        with redirect_stdout(StringIO()) as printed:
            status = main([str(arg) for arg in args])
        return {"status": status, "stdout": printed.getvalue(), **{name: _read(folder / name) for name in written}}

    common = ("translate", MODEL, "-i", source, "--glossary", glossary, "--avoid", avoid, "--prefix", prefixes)
    yield (
        "translate command",
        lambda: run(
            *common, "-o", folder / "out.en", "--alignments", folder / "out.jsonl", written=("out.en", "out.jsonl")
        ),
    )
    yield "translate command n-best", lambda: run("translate", MODEL, "-i", source, "--n-best", "2", written=())
    yield (
        "translate command markup",
        lambda: run(
            "translate",
            MODEL,
            "-i",
            marked,
            "--markup",
            "html",
            "--placement",
            "weights",
            "-o",
            folder / "marked.en",
            "--hard-alignments",
            folder / "marked.txt",
            written=("marked.en", "marked.txt"),
        ),
    )
    yield (
        "align command",
        lambda: run(
            "align",
            MODEL,
            "--src",
            source,
            "--tgt",
            target,
            "--alignments",
            folder / "align.jsonl",
            "--hard-alignments",
            folder / "align.txt",
            written=("align.jsonl", "align.txt"),
        ),
    )
    yield (
        "translate-document command",
        lambda: run(
            "translate-document",
            MODEL,
            *sorted(documents.iterdir()),
            "-o",
            folder / "translated",
            "--glossary",
            glossary,
            "--unchanged-ok",
            written=tuple(f"translated/{name}" for name in sorted(DOCUMENTS)),
        ),
    )


def _read(path: Path) -> object:
    """A file a command wrote: its text, or the records of a JSON-lines file (whose floats
    compare to the tolerance, not as printed)."""
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else text


def answers(folder: Path) -> dict[str, object]:
    """Every answer, by name."""
    translator = rnnsearch.load(MODEL, device="cpu")
    with TestClient(create_app(translator, MODEL, Limits(max_texts=8, max_chars=1000))) as client:
        calls = [*api_answers(translator), *server_answers(client), *command_answers(folder)]
        return {name: plain(call()) for name, call in calls}


def differences(expected: object, found: object, where: str = "") -> Iterator[str]:
    """Where `found` is not `expected`: floats apart by more than TOLERANCE, anything else unequal."""
    if isinstance(expected, float) and isinstance(found, int | float) and not isinstance(found, bool):
        if not math.isclose(expected, found, abs_tol=TOLERANCE):
            yield f"{where}: {found} where {expected} was recorded"
    elif isinstance(expected, dict) and isinstance(found, dict):
        if expected.keys() != found.keys():
            yield f"{where}: keys {sorted(found)} where {sorted(expected)} were recorded"
        for key in expected.keys() & found.keys():
            yield from differences(expected[key], found[key], f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(found, list) and len(expected) == len(found):
        for index, (a, b) in enumerate(zip(expected, found, strict=True)):
            yield from differences(a, b, f"{where}[{index}]")
    elif expected != found:
        yield f"{where}: {str(found)[:300]!r} where {str(expected)[:300]!r} was recorded"


def test_every_layer_answers_as_recorded(tmp_path):
    found = answers(tmp_path)
    expected = json.loads(RECORD.read_text(encoding="utf-8"))
    assert found.keys() == expected.keys()
    problems = [problem for name in expected for problem in differences(expected[name], found[name], name)]
    assert not problems, "\n".join(problems[:20])


def test_the_record_sees_a_changed_answer(tmp_path):
    """The comparison fails where an answer differs: a word, a weight beyond the tolerance, a
    key, a length."""
    recorded = {"a": [{"text": "A dog.", "score": -1.25, "alignment": [[0.5, 0.5]]}]}
    assert not list(differences(recorded, {"a": [{"text": "A dog.", "score": -1.2504, "alignment": [[0.5, 0.5]]}]}))
    for changed in (
        {"a": [{"text": "A hound.", "score": -1.25, "alignment": [[0.5, 0.5]]}]},
        {"a": [{"text": "A dog.", "score": -1.3, "alignment": [[0.5, 0.5]]}]},
        {"a": [{"text": "A dog.", "score": -1.25, "alignment": [[0.5, 0.5, 0.0]]}]},
        {"a": [{"text": "A dog.", "score": -1.25}]},
    ):
        assert list(differences(recorded, changed))


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit(f"usage: python {sys.argv[0]} --record")
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        RECORD.write_text(json.dumps(answers(Path(scratch)), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {RECORD}")
