"""What a glossary costs and whether its terms are written: the first `--sentences`
German captions of Multi30k's test_2016_flickr translated at `--beam-size` with no
glossary, with one that matches nothing, and with one of 1 to 3 terms per sentence (each
caption's first three words of four letters or more, each given a made-up target, its
letters reversed, so that no model writes it unforced), alternating in one sitting; the
seconds of each (the best of `--rounds`), whether the glossary that matches nothing
changes any output, and how many of the terms found are written (and how many as a word of
their own, not run on into a longer word).

    python bench/glossary_terms.py --model MODEL_DIR [--sentences 500] [--beam-size 5]
                                   [--rounds 2] [--threads 2]

It calls only `rnnsearch.load` and `Translator.translate`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

import rnnsearch
from rnnsearch.text.corpus import read_lines
from rnnsearch.text.glossary import Glossary

DATA = Path(__file__).resolve().parent.parent / "data" / "multi30k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model, device="cpu")
    sources = read_lines(DATA / "test_2016_flickr.de.gz")[: args.sentences]
    terms: dict[str, str] = {}
    for line in sources:
        for word in [word for word in line.split() if len(word) >= 4 and word.isalpha()][:3]:
            terms.setdefault(word, word.lower()[::-1])
    glossaries = {"none": None, "matching nothing": {"Xylophonzzz": "xylo"}, "1-3 terms a sentence": terms}
    best = dict.fromkeys(glossaries, float("inf"))
    outputs = {}
    for _ in range(args.rounds):
        for name, glossary in glossaries.items():
            started = time.perf_counter()
            outputs[name] = translator.translate(sources, beam_size=args.beam_size, glossary=glossary)
            best[name] = min(best[name], time.perf_counter() - started)
    free = [(t.text, t.score) for t in outputs["none"]]
    unchanged = free == [(t.text, t.score) for t in outputs["matching nothing"]]
    glossary = Glossary.of(terms)
    found = [
        (m.term.target, t.text)
        for line, t in zip(sources, outputs["1-3 terms a sentence"])
        for m in glossary.matches(line)
    ]
    written = sum(target in text for target, text in found)
    whole = sum(target in text.split() for target, text in found)
    for name, seconds in best.items():
        print(f"{name}: {seconds:.2f} s ({seconds / best['none']:.2f}× no glossary)")
    print(
        f"matching nothing gives the same outputs: {unchanged}; terms written: {written} of {len(found)}, "
        f"{whole} of them as a word of their own (not run on into a longer word)"
    )


if __name__ == "__main__":
    main()
