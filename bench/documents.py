"""What translating documents costs: reading and writing each format as its documents
grow (time per unit should stay flat: linear in size), and a document set's sentences
translated through `translate_documents` against the same sentences through `translate`.

    python bench/documents.py [--model runs/bench-alignment/en-fr] [--sizes 1 4 16]
                              [--formats page.html ...] [--parts io speed] [--chrf N]
                              [--speed-formats deck.pptx ...]
                              [--rounds 3] [--beam-size 5] [--threads 2] [--seed 1]

1. Reading and writing, without a model: an HTML page, a Word document and a Markdown
   file of `size` × 250 paragraphs (each with a bold word and a link, as real pages have
   them; the formats added since, a presentation of a slide per paragraph, a workbook of
   a row per paragraph, WebVTT captions of two cues per paragraph, an i18next file of a
   message per paragraph and an XLIFF file of a unit per paragraph, with the same text),
   and a plain text file of as many paragraphs with no formatting, read, cut into
   sentences and written back under a translation that changes every word (each word's
   capitals); seconds per unit, best of `--rounds`, per size, timed with Python's garbage
   collector held off (`gc.disable`, after a collection), so that what grows with the
   size is the reading and writing, not the collector's passes over a heap that holds
   every unit (they add up to a third, unevenly, with it on).
2. With `--model`: the sentences of a set of documents (an HTML page, a Markdown file and
   a Word document of 100 paragraphs each, English text from the model's own language)
   translated by `translate_documents` and, alternating in the same sitting, the same
   sentences by `translate`; sentences per second of each and their ratio.
3. With `--model` and `--chrf N`: whole sentences against node by node. The first N
   English sentences of Multi30k's test_2016_flickr (a full stop added to each that has
   no end of its own, as prose has), three to a paragraph of an HTML page,
   each sentence with a `<b>` over 1 to 3 of its words and, in every other paragraph, an
   `<a>` from a sentence's last words into the next's first (drawn with `--seed`). The
   page translated by `translate_documents` (sentences whole, tags placed by the
   alignment) and text node by text node (each piece of text between two tags translated
   on its own, as argos-translate-files does), and the same sentences without markup by
   `translate`; each paragraph's text, tags left out, scored by chrF against the French
   references of its three sentences.
"""

from __future__ import annotations

import argparse
import gc
import html
import html.parser
import io
import json
import random
import time
from pathlib import Path

import docx
import torch

from rnnsearch.documents.document import ReadOptions
from rnnsearch.documents.translating import SentenceTranslation, read_document, translate_read

DATA = Path(__file__).resolve().parent.parent / "data" / "multi30k"

SENTENCES = [
    "The man with the red hat walks home.",
    "A dog runs through the snow.",
    "Two children are playing in the park.",
    "The woman reads a book in the garden.",
]


def uppercased(sentences: list[str]) -> list[SentenceTranslation]:
    return [
        SentenceTranslation([word.upper() for word in words], [(k, k) for k in range(len(words))])
        for words in map(str.split, sentences)
    ]


def paragraph(k: int) -> tuple[str, str, str]:
    """The k-th paragraph's first sentence, bold word and the sentence after its link."""
    first, second = SENTENCES[k % 4], SENTENCES[(k + 1) % 4]
    return first, "very", second


def html_page(paragraphs: int) -> bytes:
    body = "".join(
        f'<p>{a} It is <b>{b}</b> <a href="p{k}.html">nice</a>. {c}</p>\n'
        for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)))
    )
    return f'<!DOCTYPE html><html lang="en"><head><title>A page</title></head><body>\n{body}</body></html>\n'.encode()


def markdown_file(paragraphs: int) -> bytes:
    return "".join(
        f"{a} It is **{b}** [nice](p{k}.md). {c}\n\n" for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)))
    ).encode()


def word_file(paragraphs: int) -> bytes:
    document = docx.Document()
    for a, b, c in map(paragraph, range(paragraphs)):
        written = document.add_paragraph(f"{a} It is ")
        written.add_run(b).bold = True
        written.add_run(f" nice. {c}")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def text_file(paragraphs: int) -> bytes:
    """Plain text: paragraphs with no formatting at all, as most of many documents are."""
    return "".join(f"{a} It is {b} nice. {c}\n\n" for a, b, c in map(paragraph, range(paragraphs))).encode()


def slides_file(paragraphs: int) -> bytes:
    """A presentation of a slide per paragraph, its bold word a run of its own."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for a, b, c in map(paragraph, range(paragraphs)):
        box = deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(
            Inches(1), Inches(1), Inches(8), Inches(2)
        )
        written = box.text_frame.paragraphs[0]
        for text, bold in ((f"{a} It is ", None), (b, True), (f" nice. {c}", None)):
            run = written.add_run()
            run.text, run.font.bold = text, bold
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def workbook_file(paragraphs: int) -> bytes:
    """A workbook of a row per paragraph: its text, a number and a formula."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)), start=1):
        sheet.append([f"{a} It is {b} nice. {c} ({k})", k, f"=B{k}*2"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _stamp(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"


def captions_file(paragraphs: int) -> bytes:
    """WebVTT captions: each paragraph over two cues, its bold word in `<b>`."""
    cues = []
    for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs))):
        start = 4 * k
        cues.append(f"{_stamp(start)} --> {_stamp(start + 2)}\n{a}")
        cues.append(f"{_stamp(start + 2)} --> {_stamp(start + 4)}\nIt is <b>{b}</b> nice. {c}")
    return ("WEBVTT\n\n" + "\n\n".join(cues) + "\n").encode()


def resource_file(paragraphs: int) -> bytes:
    """An i18next file of a message per paragraph, with a placeholder."""
    messages = {
        f"key{k}": f"{a} It is {{{{name}}}} {b} nice. {c}"
        for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)))
    }
    return (json.dumps({"app": messages}, indent=2) + "\n").encode()


def xliff_file(paragraphs: int) -> bytes:
    """An XLIFF 1.2 file of a unit per paragraph, its bold word a `<g>`."""
    units = "".join(
        f'<trans-unit id="{k}"><source>{a} It is <g id="1">{b}</g> nice. {c}</source></trans-unit>\n'
        for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)))
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
        f'<file original="x" source-language="en" datatype="plaintext"><body>\n{units}</body></file></xliff>\n'
    ).encode()


def open_document_file(paragraphs: int) -> bytes:
    """An OpenDocument text of a paragraph per paragraph, its bold word a span."""
    import zipfile

    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    body = "".join(
        f'<text:p>{a} It is <text:span text:style-name="B">{b}</text:span> nice. {c}</text:p>'
        for a, b, c in map(paragraph, range(paragraphs))
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/manifest.xml", "<manifest/>")
        content = f"<office:document-content {ns}><office:body><office:text>{body}</office:text></office:body>"
        package.writestr("content.xml", content + "</office:document-content>")
    return buffer.getvalue()


def book_file(paragraphs: int) -> bytes:
    """An EPUB of ten chapters, each a page of a tenth of the paragraphs."""
    import zipfile

    chapters = [html_page(max(paragraphs // 10, 1)) for _ in range(10)]
    items = "".join(f'<item id="c{k}" href="c{k}.xhtml" media-type="application/xhtml+xml"/>' for k in range(10))
    opf = (
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>A book</dc:title><dc:language>en</dc:language></metadata><manifest>{items}</manifest></package>"
    )
    container = (
        '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf"/></rootfiles></container>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/container.xml", container)
        package.writestr("content.opf", opf)
        for k, chapter in enumerate(chapters):
            package.writestr(f"c{k}.xhtml", chapter)
    return buffer.getvalue()


def locale_file(paragraphs: int) -> bytes:
    """A Rails locale file of a message per paragraph, with a placeholder and a comment."""
    lines = [
        f'  key{k}: "{a} It is %{{name}} {b} nice. {c}"  # note {k}'
        for k, (a, b, c) in enumerate(map(paragraph, range(paragraphs)))
    ]
    return ("en:\n" + "\n".join(lines) + "\n").encode()


MAKERS = {"page.html": html_page, "readme.md": markdown_file, "letter.docx": word_file}
"""The documents of the speed comparison (`--speed-formats` adds others)."""

NEW_MAKERS = {
    "deck.pptx": slides_file,
    "book.xlsx": workbook_file,
    "film.vtt": captions_file,
    "app.json": resource_file,
    "project.xlf": xliff_file,
    "notes.odt": open_document_file,
    "novel.epub": book_file,
    "app.yml": locale_file,
}
"""The formats added since the first measure, timed too."""

IO_MAKERS = {**MAKERS, "notes.txt": text_file, **NEW_MAKERS}
"""The documents whose reading and writing is timed."""


def reading_and_writing(sizes: list[int], rounds: int, formats: list[str]) -> dict:
    """Seconds per unit to read, translate (capitals) and write each format, per size."""
    results: dict[str, dict[int, float]] = {}
    for name in formats:
        make = IO_MAKERS[name]
        results[name] = {}
        for size in sizes:
            data = make(250 * size)
            best = float("inf")
            for _ in range(rounds):
                gc.collect()
                gc.disable()
                start = time.perf_counter()
                read = read_document(data, name=name, options=ReadOptions("fr"))
                [done] = translate_read([read], uppercased, language="en")
                best = min(best, time.perf_counter() - start)
                gc.enable()
            results[name][size] = best / done.units
            per_unit = 1e6 * best / done.units
            print(
                f"{name:12} ×{size:<3} {done.units:7,} units {len(data):12,} bytes {per_unit:8.1f} µs/unit", flush=True
            )
    return results


def speed(model: str, rounds: int, beam_size: int, formats: list[str] | None = None) -> dict:
    """Sentences per second of translate_documents and of translate on the same sentences."""
    import rnnsearch

    translator = rnnsearch.load(model, device="cpu")
    chosen = {name: IO_MAKERS[name] for name in formats} if formats else MAKERS
    documents = [make(100) for make in chosen.values()]
    names = list(chosen)
    read = [read_document(d, name=n, options=ReadOptions("fr")) for d, n in zip(documents, names, strict=True)]
    seen: list[str] = []
    translate_read(read, lambda s: seen.extend(s) or uppercased(s), language="en")
    timings: dict[str, list[float]] = {"documents": [], "translate": []}
    for _ in range(rounds):
        start = time.perf_counter()
        translator.translate_documents(documents, names=names, beam_size=beam_size)
        timings["documents"].append(time.perf_counter() - start)
        start = time.perf_counter()
        translator.translate(seen, beam_size=beam_size)
        timings["translate"].append(time.perf_counter() - start)
    rates = {key: len(seen) / min(values) for key, values in timings.items()}
    print(
        f"{len(seen):,} sentences: translate_documents {rates['documents']:.1f}/s, translate "
        f"{rates['translate']:.1f}/s, ratio {rates['documents'] / rates['translate']:.3f}"
    )
    return {"sentences": len(seen), **rates, "ratio": rates["documents"] / rates["translate"]}


class _Paragraphs(html.parser.HTMLParser):
    """The text of each `<p>` of a page, tags left out."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.inside = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "p":
            self.inside = True
            self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        self.inside = self.inside and tag != "p"

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.texts[-1] += data


def paragraph_texts(page: str) -> list[str]:
    parser = _Paragraphs()
    parser.feed(page)
    return [" ".join(text.split()) for text in parser.texts]


def marked_paragraphs(sentences: list[str], seed: int) -> list[list[str]]:
    """Each paragraph as pieces of markup: its sentences with a `<b>` each, and in every
    other paragraph an `<a>` across a sentence boundary."""
    draw = random.Random(seed)
    paragraphs = []
    for first in range(0, len(sentences) - 2, 3):
        words = [sentence.split() for sentence in sentences[first : first + 3]]
        marked = []
        for sentence in words:
            width = draw.randint(1, min(3, len(sentence)))
            start = draw.randint(0, len(sentence) - width)
            tokens = [html.escape(word, quote=False) for word in sentence]
            tokens[start] = "<b>" + tokens[start]
            tokens[start + width - 1] += "</b>"
            marked.append(tokens)
        if (first // 3) % 2 == 0 and "b>" not in marked[0][-1] + marked[1][0]:  # no <b> or </b> there
            marked[0][-1] = '<a href="x.html">' + marked[0][-1]
            marked[1][0] += "</a>"
        paragraphs.append([" ".join(tokens) for tokens in marked])
    return paragraphs


def node_by_node(translator: object, paragraph: str, beam_size: int) -> str:
    """A paragraph translated a text node at a time: each piece between two tags alone."""
    from rnnsearch.markup.events import events

    nodes, current = [], []
    for event in events(paragraph):
        raw = paragraph[event.start : event.end]
        if event.kind in ("data", "reference"):
            current.append(html.unescape(raw))
        else:
            nodes.append("".join(current))
            current = []
    nodes.append("".join(current))
    texts = [node.strip() for node in nodes if node.strip()]
    translations = translator.translate(texts, beam_size=beam_size)  # type: ignore[attr-defined]
    return " ".join(translation.text for translation in translations)


def _ended(sentence: str) -> str:
    """A caption as a sentence of prose: with a full stop where it has no end of its own,
    so that a paragraph of captions cuts into the captions (the plain path is given them
    one by one, and 33 of the first 600 have none)."""
    sentence = sentence.rstrip()
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def whole_against_nodes(model: str, count: int, beam_size: int, seed: int) -> dict:
    """chrF of whole sentences, node by node, and without markup, against the references."""
    import sacrebleu

    import rnnsearch
    from rnnsearch.text.corpus import read_lines

    translator = rnnsearch.load(model, device="cpu")
    sources = [_ended(line) for line in read_lines(DATA / "test_2016_flickr.en.gz")[:count]]
    references = read_lines(DATA / "test_2016_flickr.fr.gz")[:count]
    paragraphs = marked_paragraphs(sources, seed)
    page = "<html><body>\n" + "".join(f"<p>{' '.join(p)}</p>\n" for p in paragraphs) + "</body></html>\n"
    [document] = translator.translate_documents([page.encode()], names=["flickr.html"], beam_size=beam_size)
    whole = paragraph_texts(document.data.decode())
    nodes = [node_by_node(translator, " ".join(p), beam_size) for p in paragraphs]
    plain_sentences = [t.text for t in translator.translate(sources[: 3 * len(paragraphs)], beam_size=beam_size)]
    plain = [" ".join(plain_sentences[k : k + 3]) for k in range(0, len(plain_sentences), 3)]
    reference = [[" ".join(references[k : k + 3]) for k in range(0, 3 * len(paragraphs), 3)]]
    scores = {
        name: sacrebleu.corpus_chrf(output, reference).score
        for name, output in (("whole sentences", whole), ("node by node", nodes), ("no markup", plain))
    }
    for name, score in scores.items():
        print(f"{name:16} chrF {score:.2f}")
    return {"paragraphs": len(paragraphs), **scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--formats", nargs="+", choices=list(IO_MAKERS), default=list(IO_MAKERS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parts", nargs="*", choices=("io", "speed"), default=["io", "speed"])
    parser.add_argument("--chrf", type=int, metavar="N", help="sentences of the whole-against-nodes comparison")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed-formats", nargs="+", choices=list(IO_MAKERS), help="the documents of the speed part")
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = {}
    if "io" in args.parts:
        results["reading_and_writing"] = reading_and_writing(args.sizes, args.rounds, args.formats)
    if args.model and "speed" in args.parts:
        results["speed"] = speed(args.model, args.rounds, args.beam_size, args.speed_formats)
    if args.model and args.chrf:
        results["chrf"] = whole_against_nodes(args.model, args.chrf, args.beam_size, args.seed)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
