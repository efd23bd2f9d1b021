"""Training and decoding speed of rnnsearch on this machine.

    python bench/speed.py [--config configs/peer_comparable.yaml] [--set section.key=value ...]
                          [--steps 60] [--model-dir runs/peer] [--json out.json]

Training: steady-state target tokens per second over `--steps` batches after a
warm-up, on the config's real training batches, from a freshly initialised model.
Decoding: greedy and beam-5 sentences per second on a trained model's test set
(`--model-dir`; data.test of its config), with detokenised BLEU.
Peak RSS is the process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rnnsearch  # noqa: E402
from rnnsearch.config import load_config  # noqa: E402
from rnnsearch.evaluation.metrics import bleu  # noqa: E402
from rnnsearch.model.seq2seq import build_model  # noqa: E402
from rnnsearch.text.batches import epoch_batches, make_batch  # noqa: E402
from rnnsearch.text.corpus import read_lines, read_parallel  # noqa: E402
from rnnsearch.training.checkpoint import load_model_files  # noqa: E402
from rnnsearch.training.trainer import configure_cpu, encode_pairs, train_vocabularies, training_step  # noqa: E402


def training_speed(config, steps: int, warmup: int) -> dict:
    sources, targets = read_parallel(config.data.train.src, config.data.train.tgt)
    src_sw, tgt_sw = train_vocabularies(config, sources, targets)
    pairs, _ = encode_pairs(sources, targets, src_sw, tgt_sw, config.data.max_length)
    torch.manual_seed(config.train.seed)
    model = build_model(config.model, len(src_sw), len(tgt_sw))
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.learning_rate)
    order = epoch_batches(pairs, config.train.batch_tokens, config.train.max_batch_sentences, config.train.seed, 0)
    model.train()
    tokens, started = 0, None
    for step, indices in enumerate(order[: warmup + steps]):
        if step == warmup:
            tokens, started = 0, time.perf_counter()
        batch = make_batch([pairs[i] for i in indices])
        _, n = training_step(model, optimizer, batch, config.train.label_smoothing, config.train.clip_norm)
        tokens += n
    seconds = time.perf_counter() - started
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab": [len(src_sw), len(tgt_sw)],
        "train_steps": steps,
        "train_target_tokens_per_s": tokens / seconds,
        "train_sentences_per_batch": sum(len(b) for b in order[warmup : warmup + steps]) / steps,
    }


def decoding_speed(model_dir: str) -> dict:
    translator = rnnsearch.load(model_dir, device="cpu")
    test = load_model_files(model_dir)[0].data.test
    sources, references = read_lines(test.src), read_lines(test.tgt)
    results = {}
    for beam in (1, 5):
        started = time.perf_counter()
        hypotheses = [t.text for t in translator.translate(sources, beam_size=beam)]
        seconds = time.perf_counter() - started
        name = "greedy" if beam == 1 else f"beam{beam}"
        results[f"{name}_sentences_per_s"] = len(sources) / seconds
        results[f"{name}_bleu"] = bleu(hypotheses, references).value
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/peer_comparable.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--model-dir", help="trained model for the decoding figures")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    config = load_config(args.config, args.set)
    configure_cpu(config.train.threads)
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}",
        "config": " ".join([args.config, *args.set]),
        **training_speed(config, args.steps, args.warmup),
    }
    if args.model_dir:
        results.update(decoding_speed(args.model_dir))
    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for key, value in results.items():
        print(f"{key:32} {value:,.2f}" if isinstance(value, float) else f"{key:32} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
