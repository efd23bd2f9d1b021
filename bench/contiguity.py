"""The contiguity prior the alignment module's word weights are read with
(rnnsearch/alignments/distortion.py): chosen on one half of the Hansards, reported on the other.

    python bench/contiguity.py [--work runs/bench-alignment] --modules FOLDER ...
                               [--choose-on FOLDER ...] [--json out.json]

1. Each folder of `--modules` (in `--work`, holding en-fr and fr-en models with modules, as
   bench/aligner.py leaves them) aligns the 447 Hansards pairs both ways by its modules,
   and the rows are kept.
2. Their word weights are read with every jump prior of the grid (λ × κ × ν × φ) and
   with none: each direction's links and every combination of the two (the heuristics and
   `soft`), AER against the human links of the first half of the pairs (1–223) and of the
   second (224–447).
3. The prior chosen is, of those that keep a word the rows are 99% sure of on its word
   at every distance up to FARTHEST words (`sure_link_posterior` at least 1/2: what a
   language with long jumps, a German verb at the end of its clause, needs), the one
   with the lowest mean AER, over those readings and the folders of `--choose-on`
   (default: all of them), on the first half (`CONTIGUITY` is the one `align` uses).
   Reported, on the second half only: each folder read with no prior, with the chosen
   one, and with the best of the grid on the first half, sure links kept or not; beside
   them eflomal's links, from the files bench/alignment.py left in `--work`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aligner  # noqa: E402  (bench/aligner.py: each direction's links and every combination's)
import alignment as bench  # noqa: E402  (bench/alignment.py: the corpus and the tables)

from rnnsearch.alignments.distortion import CONTIGUITY, JumpPrior, sure_link_posterior  # noqa: E402

DECAYS = (0.25, 0.5, 0.75, 1.0)
STAYS = (0.3, 0.1)
NULLS = (0.05, 0.1, 0.2)
FLOORS = (0.0, 0.02, 0.05, 0.1)
FARTHEST = 40
HALF = 223  # the first half's pairs: 1 to HALF


def aligned_pairs(folder: Path) -> tuple[list, list]:
    """The Hansards pairs scored by `folder`'s modules both ways, as Translations with their rows."""
    import rnnsearch

    pairs = bench.hansards_pairs()
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    sides = []
    for direction, (sources, targets) in (("en-fr", (english, french)), ("fr-en", (french, english))):
        translator = rnnsearch.load(folder / direction, device="cpu")
        chunks = translator.align_chunks([(sources, targets)], alignment_from="aligner")
        sides.append([aligned.pair for chunk in chunks for aligned in chunk])
    return sides[0], sides[1]


def readings(forward: list, backward: list, prior: JumpPrior | None) -> dict[str, list]:
    """Each direction's links and every combination's, the word weights read with `prior`."""
    from rnnsearch.alignments.words import read_translation

    ahead = [read_translation(pair, reading="output", prior=prior) for pair in forward]
    back = [read_translation(pair, reading="output", prior=prior) for pair in backward]
    return aligner.combined(ahead, back, label="module")


def halves(systems: dict[str, list], gold: list) -> dict[str, dict[str, float]]:
    """AER of each reading on the first half of the pairs and on the second."""
    from rnnsearch.evaluation.alignment_error import alignment_error_rate

    spans = {"first": slice(0, HALF), "second": slice(HALF, None)}
    return {
        half: {name: round(alignment_error_rate(links[span], gold[span]).aer, 2) for name, links in systems.items()}
        for half, span in spans.items()
    }


def keeps_sure_links(prior: JumpPrior) -> bool:
    """Whether `prior` keeps a link the rows are 99% sure of at every distance up to FARTHEST."""
    return all(sure_link_posterior(prior, jump=jump) >= 0.5 for jump in range(1, FARTHEST + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "runs" / "bench-alignment")
    parser.add_argument("--modules", nargs="+", required=True, help="folders of --work with en-fr and fr-en modules")
    parser.add_argument("--choose-on", nargs="*", help="the folders the prior is chosen on (default: all)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from rnnsearch.evaluation.alignment_error import read_gold

    gold = read_gold(bench.HANSARDS / "enfr.gold", one_based=True)
    priors: list[JumpPrior | None] = [None, CONTIGUITY]
    priors += [JumpPrior(*values) for values in itertools.product(DECAYS, STAYS, NULLS, FLOORS)]
    scores: dict[str, dict] = {}
    for folder in args.modules:
        forward, backward = aligned_pairs(args.work / folder)
        scores[folder] = {repr(prior): halves(readings(forward, backward, prior), gold) for prior in priors}
    chosen_on = args.choose_on or args.modules

    def first_half_mean(prior: JumpPrior | None) -> float:
        values = [v for folder in chosen_on for v in scores[folder][repr(prior)]["first"].values()]
        return sum(values) / len(values)

    keeping = [prior for prior in priors[2:] if keeps_sure_links(prior)]
    best = min(keeping, key=first_half_mean)
    unbounded = min(priors[2:], key=first_half_mean)
    print(f"chosen on pairs 1–{HALF} of {', '.join(chosen_on)}: {best} (mean AER {first_half_mean(best):.2f})")
    print(f"the best of every prior, sure links kept or not: {unbounded} ({first_half_mean(unbounded):.2f})")
    for folder in args.modules:
        print(f"\n## {folder}, pairs {HALF + 1}–447\n")
        names = list(scores[folder][repr(None)]["second"])
        print("| prior | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
        for label, prior in (("none", None), ("chosen", best), ("best, sure links kept or not", unbounded)):
            row = scores[folder][repr(prior)]["second"]
            print(f"| {label} | " + " | ".join(f"{row[name]:.1f}" for name in names) + " |")
    eflomal = halves(bench.eflomal_links(args.work), gold)["second"]
    print(f"\n{HALF + 1}–447, eflomal: " + ", ".join(f"{name} {aer:.1f}" for name, aer in eflomal.items()))
    if args.json:
        args.json.write_text(json.dumps({"chosen": repr(best), "scores": scores}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
