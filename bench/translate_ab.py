"""Translation time of two checkouts of the package, alternating in one sitting: what a
change of the layers above the search costs, measured as a ratio.

    git worktree add /tmp/old <commit>
    python bench/translate_ab.py --old /tmp/old --model runs/translators/en-fr [--rounds 3]

Each round runs each checkout in a fresh process (its own `rnnsearch`, first on the path):
the first 80 EUR-Lex test-glossary sentences of `../shared/data/xliff-tags/`, without their
tags, translated with beam 5 plainly, with a four-term glossary and with a two-word avoid
list, after a warm-up of four. Prints each run's seconds and the medians' ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = ROOT.parent / "shared" / "data" / "xliff-tags" / "test-glossary.en"

RUN = """
import json, sys, time
import torch
torch.set_num_threads(2)
import rnnsearch
from rnnsearch.markup import parse
translator = rnnsearch.load(sys.argv[1], device="cpu")
texts = [" ".join(parse(line, "xml").words) for line in open(sys.argv[2], encoding="utf-8").read().splitlines()[:80]]
glossary = {"Commission": "Commission", "Member States": "États membres", "Regulation": "règlement"}
glossary["Council"] = "Conseil"
seconds = {}
for name, options in (("plain", {}), ("glossary", {"glossary": glossary}), ("avoid", {"avoid": ["the", "of"]})):
    translator.translate(texts[:4], beam_size=5, **options)
    start = time.perf_counter()
    translator.translate(texts, beam_size=5, **options)
    seconds[name] = time.perf_counter() - start
print(json.dumps(seconds))
"""


def timed(tree: Path, model: str) -> dict[str, float]:
    """One run of the checkout at `tree`, in a process of its own."""
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", RUN, model, str(SENTENCES)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        for name, tree in (("old", Path(args.old)), ("new", ROOT)):
            runs[name].append(timed(tree, str(Path(args.model).resolve())))
            print(name, json.dumps(runs[name][-1]), flush=True)
    for case in runs["old"][0]:
        old = statistics.median(run[case] for run in runs["old"])
        new = statistics.median(run[case] for run in runs["new"])
        print(f"{case}: old {old:.2f} s, new {new:.2f} s, new/old {new / old:.3f}")


if __name__ == "__main__":
    main()
