"""`rnnsearch compare` and `rnnsearch synthetic`: experiments, variants of a config
trained alike and tasks whose sentence length is controlled."""

from __future__ import annotations

import argparse

from rnnsearch.text.synthetic import TASKS


def register(commands: argparse._SubParsersAction) -> None:
    """Add `compare` and `synthetic` to the `rnnsearch` command."""
    compare = commands.add_parser("compare", help="train variants of a config alike and compare them")
    compare.add_argument(
        "experiment", help="experiment YAML: base config, budget, variants (see rnnsearch/jobs/comparison.py)"
    )
    compare.set_defaults(run=run_compare)

    synthetic = commands.add_parser("synthetic", help="write a synthetic task whose sentence length is controlled")
    synthetic.add_argument(
        "task", choices=TASKS, help="reverse: x reversed; map: each symbol through a fixed permutation"
    )
    synthetic.add_argument("output", help="folder for {train,valid,test}.{src,tgt}")
    synthetic.add_argument("--train", type=int, default=50000, help="training pairs")
    synthetic.add_argument("--valid", type=int, default=500, help="validation pairs")
    synthetic.add_argument("--test", type=int, default=1000, help="test pairs")
    synthetic.add_argument("--min-length", type=int, default=5)
    synthetic.add_argument("--max-length", type=int, default=80)
    synthetic.add_argument("--vocabulary", type=int, default=20, help="distinct symbols")
    synthetic.add_argument("--seed", type=int, default=1)
    synthetic.set_defaults(run=run_synthetic)


def run_compare(args: argparse.Namespace) -> None:
    """Train the experiment's variants and print its results table."""
    from rnnsearch.jobs.comparison import compare

    output = compare(args.experiment)
    print((output / "results.md").read_text(encoding="utf-8"), end="")
    print(f"results.md, results.csv and bleu_by_length.png written to {output}")


def run_synthetic(args: argparse.Namespace) -> None:
    """Write the task's train, valid and test files."""
    from rnnsearch.text.synthetic import write_task

    sizes = {"train": args.train, "valid": args.valid, "test": args.test}
    paths = write_task(args.output, args.task, sizes, args.min_length, args.max_length, args.vocabulary, args.seed)
    print(f"wrote {len(paths)} files to {args.output}: " + ", ".join(p.name for p in paths))
