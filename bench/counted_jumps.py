"""Whether a jump prior counted from the alignment module's own links of its training
pairs reads its word weights better than `CONTIGUITY`, the fixed symmetric prior `align`
uses (rnnsearch/alignments/distortion.py).

    python bench/counted_jumps.py [--work runs/bench-alignment] --modules FOLDER ...
                                  [--pairs 3000] [--floors 0.02 ...] [--tempers 1 ...] [--json out.json]

1. Each folder of `--modules` (in `--work`, holding en-fr and fr-en models with modules, as
   bench/aligner.py leaves them) aligns the first `--pairs` pairs of the models' training
   text (`--work`/train.en and train.fr, as bench/alignment.py wrote them; no human links)
   each way by its module, read with `CONTIGUITY`, and counts, for every linked target word
   after the first, the jump from the last linked source word to its first linked one.
2. Each direction's counts become a jump table: a jump of d words weighs its count over
   the count of +1 (staying, d = 0, its own count too), raised to each power of
   `--tempers` (`tempered`; default 1, the table as `align` reads it) with each floor of
   `--floors` (any jump at least that; default `FLOOR`), ∅ `CONTIGUITY`'s ν. Each
   reading's hold on a link the rows are 99% sure of, 10 and 40 words away
   (`sure_link_posterior`), is printed beside it.
3. The 447 Hansards pairs, aligned both ways, are read with `CONTIGUITY` and with each
   reading of the tables: AER of each direction and of every combination against the
   human links, on all pairs and on the second half (224–447, where bench/contiguity.py
   reports).

Prints Markdown tables. The tables are counted from links that `CONTIGUITY` read, on the
models' own (in-domain) training text, not on the scored pairs, as `train-aligner` now
counts them (rnnsearch/alignments/counted_jumps.py), here with a floor of one's choice.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aligner  # noqa: E402  (bench/aligner.py: each direction's links and every combination's)
import alignment as bench  # noqa: E402  (bench/alignment.py: the corpus and the tables)
import contiguity  # noqa: E402  (bench/contiguity.py: the Hansards pairs aligned by a folder's modules)

from rnnsearch.alignments.counted_jumps import FARTHEST, FLOOR, JumpTable, jump_counts  # noqa: E402
from rnnsearch.alignments.distortion import CONTIGUITY, sure_link_posterior  # noqa: E402

HALF = contiguity.HALF


def counted_prior(folder: Path, direction: str, sources: list[str], targets: list[str]) -> JumpTable:
    """The jump table of `folder`'s `direction` module, counted from its links of the pairs."""
    import rnnsearch
    from rnnsearch.alignments.words import read_translations

    translator = rnnsearch.load(folder / direction, device="cpu")
    chunks = translator.align_chunks([(sources, targets)], alignment_from="aligner")
    pairs = [aligned.pair for chunk in chunks for aligned in chunk]
    counts = jump_counts(words.pairs for words in read_translations(pairs, reading="output", prior=CONTIGUITY))
    table = JumpTable.counted(counts)
    if table is None:
        raise SystemExit(f"{folder / direction}: too few jumps in {len(pairs):,} pairs to count a table")
    return table


def tempered(table: JumpTable, temper: float, floor: float) -> JumpTable:
    """`table` with each weight raised to the power `temper` and the least weight `floor`:
    at a power below 1 its jumps weigh more alike, the floor aside."""
    return replace(table, weights=tuple(weight**temper for weight in table.weights), floor=floor)


def scored(forward: list, backward: list, priors: tuple, gold: list) -> dict[str, tuple[float, float]]:
    """AER of each direction and combination, all pairs and the second half, read with `priors`."""
    from rnnsearch.alignments.words import read_translations
    from rnnsearch.evaluation.alignment_error import alignment_error_rate

    ahead = read_translations(forward, reading="output", prior=priors[0])
    back = read_translations(backward, reading="output", prior=priors[1])
    return {
        name.split(" ", 1)[1]: (
            round(alignment_error_rate(links, gold).aer, 2),
            round(alignment_error_rate(links[HALF:], gold[HALF:]).aer, 2),
        )
        for name, links in aligner.combined(ahead, back, label="module").items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "runs" / "bench-alignment")
    parser.add_argument("--modules", nargs="+", required=True, help="folders of --work with en-fr and fr-en modules")
    parser.add_argument("--pairs", type=int, default=3000, help="training pairs the tables are counted from")
    parser.add_argument("--floors", nargs="+", type=float, default=[FLOOR], help="least weights of a jump, beside +1")
    parser.add_argument("--tempers", nargs="+", type=float, default=[1.0], help="powers of the weights")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from rnnsearch.evaluation.alignment_error import read_gold

    gold = read_gold(bench.HANSARDS / "enfr.gold", one_based=True)
    english = (args.work / "train.en").read_text(encoding="utf-8").splitlines()[: args.pairs]
    french = (args.work / "train.fr").read_text(encoding="utf-8").splitlines()[: args.pairs]
    results = {}
    for folder in args.modules:
        tables = (
            counted_prior(args.work / folder, "en-fr", english, french),
            counted_prior(args.work / folder, "fr-en", french, english),
        )
        forward, backward = contiguity.aligned_pairs(args.work / folder)
        rows = {"CONTIGUITY": scored(forward, backward, (CONTIGUITY, CONTIGUITY), gold)}
        held = {}
        for temper in args.tempers:
            for floor in args.floors:
                read = tuple(tempered(table, temper, floor) for table in tables)
                label = f"counted, power {temper:g}, floor {floor:g}"
                rows[label] = scored(forward, backward, read, gold)
                held[label] = [round(sure_link_posterior(read[0], jump=jump), 2) for jump in (10, 40)]
        print(f"\n## {folder}: tables from {args.pairs:,} pairs\n")
        for label, kept in held.items():
            print(f"- {label}: en→fr keeps a 99%-sure link {kept[0]} at 10 words, {kept[1]} at 40")
        print("en→fr jumps −3…+3: " + ", ".join(f"{w:.3f}" for w in tables[0].weights[FARTHEST - 3 : FARTHEST + 4]))
        names = list(rows["CONTIGUITY"])
        print("\n| prior, AER all 447 (224–447) | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
        for label, row in rows.items():
            print(f"| {label} | " + " | ".join(f"{row[n][0]:.2f} ({row[n][1]:.2f})" for n in names) + " |")
        results[folder] = {"tables": [list(t.weights) for t in tables], "sure": held, "aer": rows}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
