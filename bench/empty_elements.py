"""How many inline elements come back with no words: the first `--sentences` German
captions of Multi30k's test_2016_flickr, each with a link around its second word and an
emphasis around its last two, translated with `markup="html"`; the links and emphases of
the outputs that hold no word, counted for each alignment source the model has.

    python bench/empty_elements.py --model MODEL_DIR [--sentences 1000] [--beam-size 2]

The script calls only `rnnsearch.load` and `Translator.translate`, so it also runs
another checkout of the package (PYTHONPATH=that checkout), to set the code before a
change against the code after it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import rnnsearch
from rnnsearch.markup import parse
from rnnsearch.text.corpus import read_lines

DATA = Path(__file__).resolve().parent.parent / "data" / "multi30k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--beam-size", type=int, default=2)
    args = parser.parse_args()
    translator = rnnsearch.load(args.model, device="cpu")
    lines = [_marked(line) for line in read_lines(DATA / "test_2016_flickr.de.gz")[: args.sentences]]
    lines = [line for line in lines if line is not None]
    sources = ["attention", "aligner"] if translator.model.aligner is not None else ["attention"]
    for source in sources:
        results = translator.translate(lines, markup="html", beam_size=args.beam_size, alignment_from=source)
        empty = {"a": 0, "em": 0}
        for result in results:
            for element in parse(result.marked_up or "", "html").elements:
                if element.name in empty and not element.has_words:
                    empty[element.name] += 1
        print(f"{source}: {len(lines)} sentences, {empty['a']} links and {empty['em']} emphases with no word")


def _marked(line: str) -> str | None:
    """The caption with a link around its second word and an emphasis around its last two."""
    words = line.split()
    if len(words) < 4:
        return None
    words[1] = f'<a href="x">{words[1]}</a>'
    words[-2], words[-1] = f"<em>{words[-2]}", f"{words[-1]}</em>"
    return " ".join(words)


if __name__ == "__main__":
    main()
