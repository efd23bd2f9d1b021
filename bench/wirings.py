"""Training speed of the two decoder wirings, measured in one run on the same batches.

    python bench/wirings.py [--config configs/peer_comparable.yaml] [--steps 60] [--rounds 2]
                            [--prepared runs/bench-speed/prepared]

Luong's wiring without input feeding runs the decoder RNN over the whole target in
one call and attends to all positions in one batched product; with input feeding,
and in Bahdanau's wiring, each step needs the one before. Variants are measured in
alternating rounds so that a slow moment of the machine does not favour one of
them; the table gives the best round of each and its ratio to Bahdanau's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processor import describe_cpu  # noqa: E402
from speed import training_speed  # noqa: E402

from rnnsearch.config import load_config  # noqa: E402
from rnnsearch.training.environment import configure_cpu, flushing_denormals  # noqa: E402

VARIANTS = {
    "bahdanau": [],
    "luong, input feeding": ["model.decoder.wiring=luong", "model.decoder.input_feeding=true"],
    "luong, no input feeding": ["model.decoder.wiring=luong"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/peer_comparable.yaml")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prepared", default="runs/bench-speed/prepared", help="the prepared training data")
    args = parser.parse_args()
    configure_cpu(load_config(args.config).train.threads)
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name, overrides in VARIANTS.items():
            with flushing_denormals():
                config = load_config(args.config, overrides)
                result = training_speed(config, args.steps, args.warmup, torch.device("cpu"), Path(args.prepared))
            if name not in best or result["train_target_tokens_per_s"] > best[name]["train_target_tokens_per_s"]:
                best[name] = result
    print(f"{time.strftime('%Y-%m-%d')}, {describe_cpu(torch.get_num_threads())}, {args.config}")
    print("| wiring | parameters | train target tok/s | vs bahdanau |")
    print("|---|---|---|---|")
    reference = best["bahdanau"]["train_target_tokens_per_s"]
    for name, result in best.items():
        speed = result["train_target_tokens_per_s"]
        print(f"| {name} | {result['parameters']:,} | {speed:,.0f} | {speed / reference:.2f}× |")


if __name__ == "__main__":
    main()
