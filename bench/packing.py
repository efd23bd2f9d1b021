"""Search speed with and without packed oneDNN weights, in one process.

    python bench/packing.py [--model-dir runs/de-en] [--rounds 3]

Translates the model's test set (data.test of its config) with greedy and beam-5
search, alternating runs with packed weights (the default) and with oneDNN switched off
(`torch.backends.mkldnn.enabled = False`: every product on MKL), `--rounds` times each,
in alternating order. One process, so both see the same machine load as closely as
this noisy machine allows. Reports sentences per second for every run, their mean,
and how many outputs differ between the two.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rnnsearch  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402
from rnnsearch.training.checkpoint import load_model_files  # noqa: E402

MODES = {"packed": True, "mkl": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="runs/de-en")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
