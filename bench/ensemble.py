"""BLEU and decoding speed of ensembles against their members.

    python bench/ensemble.py MODEL_DIR MODEL_DIR [MODEL_DIR …] [--src F --ref F]
                             [--beam-size 5] [--json out.json]

Translates the test set (default: Multi30k's test_2016_flickr, German → English) with
every member alone, then with the ensemble of the first 2, 3, … members, each in
turn in the same sitting, and prints detokenised sacreBLEU and sentences per second for
each. The ensembles decode inside the same batched search as one model, so the time of
an ensemble of M members is compared with M times a member's.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch

import rnnsearch
from rnnsearch.evaluation.metrics import bleu
from rnnsearch.text.corpus import read_lines


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def run(models: str | list[str], sources: list[str], references: list[str], beam_size: int) -> dict:
    translator = rnnsearch.load(models, device="cpu")
    start = time.perf_counter()
    hypotheses = [t.text for t in translator.translate(sources, beam_size=beam_size)]
    seconds = time.perf_counter() - start
    return {
        "models": models if isinstance(models, list) else [models],
        "bleu": round(bleu(hypotheses, references).value, 2),
        "seconds": round(seconds, 1),
        "sentences_per_second": round(len(sources) / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+")
    parser.add_argument("--src", default="data/multi30k/test_2016_flickr.de.gz")
    parser.add_argument("--ref", default="data/multi30k/test_2016_flickr.en.gz")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    sources, references = read_lines(args.src), read_lines(args.ref)
    print(
        f"{len(sources)} sentences of {args.src}, beam {args.beam_size}, "
        f"{torch.get_num_threads()} threads, {cpu_name()}"
    )
    rows = [run(model, sources, references, args.beam_size) for model in args.models]
    rows += [run(args.models[:size], sources, references, args.beam_size) for size in range(2, len(args.models) + 1)]
    member_seconds = sum(row["seconds"] for row in rows[: len(args.models)]) / len(args.models)
    for row in rows:
        name = row["models"][0] if len(row["models"]) == 1 else f"ensemble of {len(row['models'])}"
        ratio = row["seconds"] / member_seconds
        print(
            f"{name:24} BLEU {row['bleu']:6.2f}  {row['sentences_per_second']:6.1f} sent/s  "
            f"{ratio:4.2f}× a member's time"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"cpu": cpu_name(), "beam_size": args.beam_size, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
