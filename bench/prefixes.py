"""What forcing target prefixes costs: the same source sentences translated with and
without prefixes, alternating in the same sitting, greedy and at beam 5.

    python bench/prefixes.py [--model runs/bench-alignment/en-fr] [--sentences 500]
                             [--rounds 3] [--threads 2]

The first `--sentences` English sentences of Multi30k's test_2016_flickr, three in four
with a prefix: the first 1 to 3 words of their French reference (sentence k takes k mod 4
words). Sentences per second of each search, the best of `--rounds`. The script calls
only `rnnsearch.load` and `Translator.translate`, so it also times another checkout of
the package (PYTHONPATH=that checkout), to set the code before a change against the
code after it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

import rnnsearch
from rnnsearch.text.corpus import read_lines

DATA = Path(__file__).resolve().parent.parent / "data" / "multi30k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/bench-alignment/en-fr")
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model, device="cpu")
    sources = read_lines(DATA / "test_2016_flickr.en.gz")[: args.sentences]
    references = read_lines(DATA / "test_2016_flickr.fr.gz")[: args.sentences]
    prefixes = [" ".join(reference.split()[: k % 4]) for k, reference in enumerate(references)]
    translator.translate(sources[:50], beam_size=5, prefixes=prefixes[:50])  # warm up
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for beam in (1, 5):
            for name, given in (("prefixed", prefixes), ("free", None)):
                start = time.perf_counter()
                translator.translate(sources, beam_size=beam, prefixes=given)
                rate = len(sources) / (time.perf_counter() - start)
                key = f"beam {beam}, {name}"
                best[key] = max(best.get(key, 0.0), rate)
    for key, rate in best.items():
        print(f"{key}: {rate:.1f} sentences/s")


if __name__ == "__main__":
    main()
