"""How reading and placing markup scale with the size of a line: the time per tag of
`parse` and `transfer` on lines of growing size, for the shapes that hostile or
machine-made markup takes (thousands of sibling elements, deep nesting, tags left open,
one word formatted thousands of times and copied by the translation).

    python bench/markup_scaling.py [--sizes 1000 4000 16000] [--rounds 3] [--json out.json]

Each line is read as html and its words placed on a translation of as many words whose
links reverse their order, so that every element's span meets its earlier siblings'. The
best of `--rounds` runs of each size is reported, in microseconds per tag: flat across
the sizes means time linear in the line.
"""

from __future__ import annotations

import argparse
import json
import time

from rnnsearch.markup import parse, transfer

SHAPES = {
    "empty siblings <i></i>": lambda n: "Ein " + "<i></i>" * n + " Hund",
    "siblings with words": lambda n: " ".join(f"<i>w{k}</i>" for k in range(n)),
    "nested <b>…</b>": lambda n: "<b>" * n + "x" + "</b>" * n + " y",
    "nested around words": lambda n: "y " + "<b>" * n + "x " * n + "</b>" * n,
    "left open <a": lambda n: "Ein Hund " + "<a " * n,
    "one word copied <b>ein</b>": lambda n: "<b>ein</b> " * n,
}
COPIED = {"one word copied <b>ein</b>"}
"""The shapes whose translation copies the source's words (a name written as it stands),
so that each element has as many copied places as the line has elements."""


def seconds(line: str, copied: bool = False) -> float:
    """One read and placement of `line` (on a translation that copies its words where
    `copied`), timed."""
    started = time.perf_counter()
    marked = parse(line, "html")
    targets = len(marked.words)
    words = [word.upper() for word in marked.words] if copied else [f"t{k}" for k in range(targets)]
    transfer(marked, words, [(k, targets - 1 - k) for k in range(targets)])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    results = {}
    print(f"{'shape':26}" + "".join(f"{n:>12,}" for n in args.sizes) + "   µs per tag")
    for name, make in SHAPES.items():
        per_tag: list[float | None] = []
        for n in args.sizes:
            line = make(n)
            try:
                per_tag.append(1e6 * min(seconds(line, name in COPIED) for _ in range(args.rounds)) / n)
            except RecursionError:  # what a recursive writer meets past Python's recursion limit
                per_tag.append(None)
        results[name] = dict(zip(map(str, args.sizes), per_tag, strict=True))
        print(f"{name:26}" + "".join("   recursion" if value is None else f"{value:12.1f}" for value in per_tag))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
