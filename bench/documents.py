"""What translating documents costs: reading and writing each format as its documents
grow (time per unit should stay flat: linear in size), and a document set's sentences
translated through `translate_documents` against the same sentences through `translate`.

    python bench/documents.py [--model runs/bench-alignment/en-fr] [--sizes 1 4 16]
                              [--rounds 3] [--beam-size 5] [--threads 2]

1. Reading and writing, without a model: an HTML page, a Word document and a Markdown
   file of `size` × 250 paragraphs (each with a bold word and a link, as real pages have
   them), read, cut into sentences and written back under a translation that changes
   every word (each word's capitals); seconds per unit, best of `--rounds`, per size,
   timed with Python's garbage collector held off (`gc.disable`, after a collection), so
   that what grows with the size is the reading and writing, not the collector's passes
   over a heap that holds every unit (they add up to a third, unevenly, with it on).
2. With `--model`: the sentences of a set of documents (an HTML page, a Markdown file and
   a Word document of 100 paragraphs each, English text from the model's own language)
   translated by `translate_documents` and, alternating in the same sitting, the same
   sentences by `translate`; sentences per second of each and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import time

import docx
import torch

from rnnsearch.translation.document_translation import SentenceTranslation, read_document, translate_read

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


MAKERS = {"page.html": html_page, "readme.md": markdown_file, "letter.docx": word_file}


def reading_and_writing(sizes: list[int], rounds: int, formats: list[str]) -> dict:
    """Seconds per unit to read, translate (capitals) and write each format, per size."""
    results: dict[str, dict[int, float]] = {}
    for name in formats:
        make = MAKERS[name]
        results[name] = {}
        for size in sizes:
            data = make(250 * size)
            best = float("inf")
            for _ in range(rounds):
                gc.collect()
                gc.disable()
                start = time.perf_counter()
                read = read_document(data, name=name, target_language="fr")
                [done] = translate_read([read], uppercased, language="en")
                best = min(best, time.perf_counter() - start)
                gc.enable()
            results[name][size] = best / done.units
            per_unit = 1e6 * best / done.units
            print(
                f"{name:12} ×{size:<3} {done.units:7,} units {len(data):12,} bytes {per_unit:8.1f} µs/unit", flush=True
            )
    return results


def speed(model: str, rounds: int, beam_size: int) -> dict:
    """Sentences per second of translate_documents and of translate on the same sentences."""
    import rnnsearch

    translator = rnnsearch.load(model, device="cpu")
    documents = [make(100) for make in MAKERS.values()]
    names = list(MAKERS)
    read = [read_document(d, name=n, target_language="fr") for d, n in zip(documents, names, strict=True)]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--formats", nargs="+", choices=list(MAKERS), default=list(MAKERS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = {"reading_and_writing": reading_and_writing(args.sizes, args.rounds, args.formats)}
    if args.model:
        results["speed"] = speed(args.model, args.rounds, args.beam_size)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
