"""Search speed with and without packed oneDNN weights, in one process.

    python bench/packing.py [--model-dir runs/de-en] [--rounds 3]

First times single matrix products at the decoder's shapes, MKL (`F.linear`) against
oneDNN with a packed weight, in GFLOP/s. Then translates the model's test set
(data.test of its config) with greedy and beam-5 search, alternating runs with packed
weights (the default) and with oneDNN switched off
(`torch.backends.mkldnn.enabled = False`: every product on MKL), `--rounds` times each,
in alternating order. One process, so both see the same machine load as closely as
this noisy machine allows. Reports sentences per second for every run, their mean,
and how many outputs differ between the two; last, the milliseconds per sentence when
the first 40 test sentences are translated one call each, as a server does for single
requests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rnnsearch  # noqa: E402
from rnnsearch.files.model_directory import load_model_files  # noqa: E402
from rnnsearch.kernels.packed import linear, packed_weights  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402

MODES = {"packed": True, "mkl": False}
SHAPES = [(57, 256, 8000), (64, 256, 8000), (57, 512, 1536), (57, 512, 512), (57, 1280, 512), (320, 256, 8000)]
SINGLE_SENTENCES = 40


def seconds_per_call(product, *args: torch.Tensor, calls: int = 300) -> float:
    """The best of three timings of `calls` calls of product(*args), after a warm-up."""
    for _ in range(20):
        product(*args)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(calls):
            product(*args)
        best = min(best, (time.perf_counter() - started) / calls)
    return best


@torch.no_grad()
def product_speeds() -> None:
    """GFLOP/s of x Wᵀ + b at the decoder's shapes (rows × in → out), MKL and packed."""
    for rows, inputs, outputs in SHAPES:
        x, weight, bias = torch.randn(rows, inputs), torch.randn(outputs, inputs), torch.randn(outputs)
        flops = 2 * rows * inputs * outputs
        mkl = seconds_per_call(F.linear, x, weight, bias)
        with packed_weights():
            packed = seconds_per_call(linear, x, weight, bias)
        print(
            f"{rows} x {inputs} -> {outputs}: MKL {flops / mkl / 1e9:.0f} GFLOP/s,"
            f" packed {flops / packed / 1e9:.0f} GFLOP/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="runs/de-en")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    product_speeds()
    translator = rnnsearch.load(args.model_dir, device="cpu")
    sources = read_lines(load_model_files(args.model_dir)[0].data.test.src)
    translator.translate(sources[:64], beam_size=5)  # warm-up
    speeds: dict[tuple[str, int], list[float]] = {}
    outputs: dict[tuple[str, int], list[str]] = {}
    for round_ in range(args.rounds):
        for mode in list(MODES) if round_ % 2 == 0 else list(MODES)[::-1]:
            torch.backends.mkldnn.enabled = MODES[mode]
            for beam in (1, 5):
                started = time.perf_counter()
                outputs[mode, beam] = [t.text for t in translator.translate(sources, beam_size=beam)]
                speeds.setdefault((mode, beam), []).append(len(sources) / (time.perf_counter() - started))
    torch.backends.mkldnn.enabled = True
    for beam in (1, 5):
        differing = sum(a != b for a, b in zip(outputs["packed", beam], outputs["mkl", beam]))
        for mode in MODES:
            runs = speeds[mode, beam]
            print(
                f"beam {beam}  {mode:6}  sentences/s {', '.join(f'{s:.0f}' for s in runs)}"
                f"  mean {sum(runs) / len(runs):.0f}"
            )
        print(f"beam {beam}  outputs that differ: {differing} of {len(sources)}")
    for mode in MODES:
        torch.backends.mkldnn.enabled = MODES[mode]
        for beam in (1, 5):
            started = time.perf_counter()
            for source in sources[:SINGLE_SENTENCES]:
                translator.translate([source], beam_size=beam)
            milliseconds = 1000 * (time.perf_counter() - started) / SINGLE_SENTENCES
            print(f"beam {beam}  {mode:6}  one sentence a call: {milliseconds:.1f} ms a sentence")
    torch.backends.mkldnn.enabled = True


if __name__ == "__main__":
    main()
