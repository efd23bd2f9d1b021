"""Search speed, BLEU and memory of an exported ONNX Runtime package against PyTorch.

    python bench/export.py MODEL_DIR [--package OUT_DIR] [--src F --ref F] [--rounds 2]
                           [--batch-sentences 64] [--json out.json]

Exports MODEL_DIR with int8 graphs (or reads the package `--package` names, which must
be MODEL_DIR's), then translates the test set (default: Multi30k's test_2016_flickr,
German → English) greedily and with beam 5, `--batch-sentences` sentences in flight,
with three runners in turn: PyTorch fp32 (the model directory), the package's fp32
graphs and its int8 graphs. The runners alternate within each of `--rounds` rounds, so
that a machine that slows down or speeds up during the sitting weighs on all alike; a
runner's time is its fastest round. Reported per runner and search: sentences per
second, the ratio to PyTorch fp32, detokenised BLEU, and how many translations are
identical to PyTorch fp32's. Peak RSS is measured in a fresh process per runner that
loads the model and translates the test set's first 256 sentences with beam 5, as a
serving process would.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processor import describe_cpu  # noqa: E402  (this script's folder comes first on sys.path)

import rnnsearch  # noqa: E402
from rnnsearch.evaluation.metrics import bleu  # noqa: E402
from rnnsearch.export.package import export_package  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402

RUNNERS = {"torch fp32": ("torch", "fp32"), "onnx fp32": ("onnx", "fp32"), "onnx int8": ("onnx", "int8")}
SEARCHES = {"greedy": 1, "beam 5": 5}
RSS_SENTENCES = 256


def load(runner: str, model_dir: str, package: str, batch_sentences: int) -> rnnsearch.Translator:
    runtime, precision = RUNNERS[runner]
    directory = model_dir if runtime == "torch" else package
    return rnnsearch.load(
        directory, device="cpu", precision=precision, batch_sentences=batch_sentences, runtime=runtime
    )


def timed(translator, sources: list[str], beam_size: int) -> tuple[float, list[str]]:
    start = time.perf_counter()
    texts = [t.text for t in translator.translate(sources, beam_size=beam_size)]
    return time.perf_counter() - start, texts


def peak_rss(runner: str, model_dir: str, package: str, src: str, batch_sentences: int) -> float:
    """MiB of peak resident memory of a fresh process that loads and translates with `runner`."""
    command = [sys.executable, __file__, model_dir, "--package", package, "--src", src]
    command += ["--batch-sentences", str(batch_sentences), "--rss-child", runner]
    return float(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip())


def rss_child(args: argparse.Namespace) -> None:
    translator = load(args.rss_child, args.model_dir, args.package, args.batch_sentences)
    translator.translate(read_lines(args.src)[:RSS_SENTENCES], beam_size=5)
    print(high_water_mib())


def high_water_mib() -> float:
    """This process's peak resident memory (VmHWM): unlike getrusage's, not carried over
    from the parent that started it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--package", help="MODEL_DIR exported with --int8 (default: export it to a temporary)")
    parser.add_argument("--src", default="data/multi30k/test_2016_flickr.de.gz")
    parser.add_argument("--ref", default="data/multi30k/test_2016_flickr.en.gz")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-sentences", type=int, default=64)
    parser.add_argument("--json")
    parser.add_argument("--rss-child", choices=RUNNERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args)
        return
    with tempfile.TemporaryDirectory() as scratch:
        if args.package is None:
            args.package = str(Path(scratch) / "package")
            export_package(args.model_dir, args.package, int8=True)
        report = measure(args)
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def measure(args: argparse.Namespace) -> dict:
    sources, references = read_lines(args.src), read_lines(args.ref)
    print(f"{len(sources)} sentences of {args.src}, {args.batch_sentences} in flight, {machine()}", flush=True)
    translators = {runner: load(runner, args.model_dir, args.package, args.batch_sentences) for runner in RUNNERS}
    seconds: dict[tuple[str, str], float] = {}
    texts: dict[tuple[str, str], list[str]] = {}
    for round_index in range(args.rounds):
        order = list(RUNNERS) if round_index % 2 == 0 else list(reversed(RUNNERS))
        for search, beam_size in SEARCHES.items():
            for runner in order:
                elapsed, texts[runner, search] = timed(translators[runner], sources, beam_size)
                seconds[runner, search] = min(elapsed, seconds.get((runner, search), float("inf")))
    rows = []
    for search in SEARCHES:
        reference_texts = texts["torch fp32", search]
        for runner in RUNNERS:
            rows.append(
                {
                    "runner": runner,
                    "search": search,
                    "sentences_per_second": round(len(sources) / seconds[runner, search], 1),
                    "speedup": round(seconds["torch fp32", search] / seconds[runner, search], 2),
                    "bleu": round(bleu(texts[runner, search], references).value, 2),
                    "identical_to_torch_fp32": sum(a == b for a, b in zip(texts[runner, search], reference_texts)),
                }
            )
    rss = {
        runner: round(peak_rss(runner, args.model_dir, args.package, args.src, args.batch_sentences))
        for runner in RUNNERS
    }
    return {
        "machine": machine(),
        "sentences": len(sources),
        "batch_sentences": args.batch_sentences,
        "rounds": args.rounds,
        "rows": rows,
        "peak_rss_mib": rss,
    }


def machine() -> str:
    return describe_cpu(torch.get_num_threads())


def print_report(report: dict) -> None:
    for row in report["rows"]:
        print(
            f"{row['search']:7} {row['runner']:11} {row['sentences_per_second']:7.1f} sent/s  "
            f"{row['speedup']:4.2f}× torch fp32  BLEU {row['bleu']:6.2f}  "
            f"{row['identical_to_torch_fp32']}/{report['sentences']} identical to torch fp32"
        )
    print("peak RSS (MiB): " + ", ".join(f"{runner} {mib}" for runner, mib in report["peak_rss_mib"].items()))


if __name__ == "__main__":
    main()
