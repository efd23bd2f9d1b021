"""Split Multi30k into a "general" corpus and a held-apart "domain" for fine-tuning figures.

    python bench/domain.py [--data data/multi30k] [--out runs/domain] [--pattern '\\bdogs?\\b']

Multi30k has no second domain, so one is made from it: every pair whose English side
matches `--pattern` (default: sentences about dogs, about 8% of the corpus) is held
apart. The general model trains on the rest and never sees the domain; fine-tuning then
adapts it on the domain's training pairs. Writes, under `--out`, gzipped German and
English files for each part:

    general.train   the training pairs without the domain
    domain.train    the training pairs of the domain
    domain.test     test_2016_flickr and test_2017_flickr pairs of the domain
    general.test    test_2016_flickr and test_2017_flickr pairs without the domain
    domain.valid    val pairs of the domain (validation while fine-tuning)

and prints how many pairs each part holds.
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

SPLITS = {"train": ["train"], "test": ["test_2016_flickr", "test_2017_flickr"], "valid": ["val"]}


def read(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return lines.read().split("\n")[:-1]


def write(path: Path, lines: list[str]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data/multi30k"))
    parser.add_argument("--out", type=Path, default=Path("runs/domain"))
    parser.add_argument("--pattern", default=r"\bdogs?\b")
    args = parser.parse_args()
    pattern = re.compile(args.pattern, re.IGNORECASE)
    args.out.mkdir(parents=True, exist_ok=True)
    for part, names in SPLITS.items():
        german = [line for name in names for line in read(args.data / f"{name}.de.gz")]
        english = [line for name in names for line in read(args.data / f"{name}.en.gz")]
        inside = [bool(pattern.search(line)) for line in english]
        for kind, wanted in (("domain", True), ("general", False)):
            if part == "valid" and kind == "general":
                continue
            for language, lines in (("de", german), ("en", english)):
                write(args.out / f"{kind}.{part}.{language}.gz", [x for x, i in zip(lines, inside) if i == wanted])
            print(f"{kind}.{part}: {sum(i == wanted for i in inside)} pairs")


if __name__ == "__main__":
    main()
