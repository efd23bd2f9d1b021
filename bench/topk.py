"""Beam search's choice of extensions: chunked top-k against one top-k over all K·V.

    python bench/topk.py [--model-dir runs/de-en] [--rounds 6]

First times the selection alone at beam 5's shape (64 sentences × 5 hypotheses × the
model's vocabulary): `rnnsearch.search.beam.top_extensions`, which ranks chunks of the
vocabulary by their maxima before ranking entries, against adding the hypotheses'
scores to all K·V extensions and taking one top-k over them, the plain way. Then
translates the model's test set (data.test of its config) with beam 5, alternating
the two in one process, `--rounds` times each, and reports sentences per second and how
many outputs differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packing import seconds_per_call  # noqa: E402  (this script's folder comes first on sys.path)

import rnnsearch  # noqa: E402
import rnnsearch.search.beam as beam_module  # noqa: E402
from rnnsearch.files.model_directory import load_model_files  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402

BEAM, SENTENCES = 5, 64


def full_top_k(
    log_prob: torch.Tensor, log_probs: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One top-k over every sentence's K·V extensions: scores, hypotheses, tokens."""
    vocab = log_probs.size(1)
    top, index = (log_prob.view(-1, 1) + log_probs).view(log_prob.size(0), -1).topk(k, dim=1)
    return top, index // vocab, index % vocab


SELECTIONS = {"chunked": beam_module.top_extensions, "full": full_top_k}


def selection_speeds(vocab: int) -> None:
    """Microseconds a step for each selection, on random log-probabilities of the model's vocabulary size."""
    log_probs = torch.randn(SENTENCES * BEAM, vocab).log_softmax(-1)
    log_prob = torch.randn(SENTENCES, BEAM)
    for name, select in SELECTIONS.items():
        print(f"{name:8} {1e6 * seconds_per_call(select, log_prob, log_probs, BEAM):.0f} µs a step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="runs/de-en")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    translator = rnnsearch.load(args.model_dir, device="cpu")
    selection_speeds(translator.model.decoder.output_layer.out_features)
    sources = read_lines(load_model_files(args.model_dir)[0].data.test.src)
    translator.translate(sources[:SENTENCES], beam_size=BEAM)  # warm-up
    speeds: dict[str, list[float]] = {}
    outputs: dict[str, list[str]] = {}
    for round_ in range(args.rounds):
        for name in list(SELECTIONS) if round_ % 2 == 0 else list(SELECTIONS)[::-1]:
            beam_module.top_extensions = SELECTIONS[name]
            started = time.perf_counter()
            outputs[name] = [t.text for t in translator.translate(sources, beam_size=BEAM)]
            speeds.setdefault(name, []).append(len(sources) / (time.perf_counter() - started))
    beam_module.top_extensions = SELECTIONS["chunked"]
    for name, runs in speeds.items():
        print(
            f"beam {BEAM}  {name:8} sentences/s {', '.join(f'{s:.0f}' for s in runs)}  mean {sum(runs) / len(runs):.0f}"
        )
    differing = sum(a != b for a, b in zip(outputs["chunked"], outputs["full"]))
    print(f"outputs that differ: {differing} of {len(sources)}")


if __name__ == "__main__":
    main()
