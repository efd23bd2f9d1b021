"""Search on a GPU: fixed shapes replayed as CUDA graphs, against the eager search.

    python bench/graphs.py --model-dir runs/de-en [--rounds 3] [--precision bf16]
                           [--in-flight 64 256] [--profile] [--latency 50]

Translates the model's test set (data.test of its config) on CUDA with greedy and
beam-5 search, alternating the two searches in one process, `--rounds` times each, for
each number of sentences in flight (search.batch_sentences). The fixed-shape search
(`rnnsearch.search.fixed_shape`, what the translator runs on a GPU) captures its
graphs afresh in every call, and that time is counted. Reports sentences per second,
detokenised BLEU, the peak GPU memory of each search, and how many outputs differ.
`--profile` instead prints where one graphed call of each search spends its time, and
`--latency N` the milliseconds per call when the first N sentences come one per call, as
single requests to a server do (every graphed call captures its graph afresh).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rnnsearch  # noqa: E402
import rnnsearch.search.choice as choice_module  # noqa: E402
from rnnsearch.evaluation.metrics import bleu  # noqa: E402
from rnnsearch.files.model_directory import load_model_files  # noqa: E402
from rnnsearch.search.beam import beam_search  # noqa: E402
from rnnsearch.search.fixed_shape import fixed_shape_beam_search, fixed_shape_greedy_search  # noqa: E402
from rnnsearch.search.greedy import greedy_search  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402

SEARCHES = {
    "graphs": (fixed_shape_greedy_search, fixed_shape_beam_search),
    "eager": (greedy_search, beam_search),
}


def use(name: str) -> None:
    """Make the search choice's GPU path run the named searches."""
    choice_module.fixed_shape_greedy_search, choice_module.fixed_shape_beam_search = SEARCHES[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="runs/de-en")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[64])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--latency", type=int, metavar="N")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    translator = rnnsearch.load(args.model_dir, device="cuda", precision=args.precision)
    config = load_model_files(args.model_dir)[0]
    sources, references = read_lines(config.data.test.src), read_lines(config.data.test.tgt)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {len(sources)} sentences, {args.precision}")
    if args.profile:
        profile(translator, sources)
        return
    if args.latency:
        latency(translator, sources[: args.latency], args.rounds)
        return
    for in_flight in args.in_flight:
        translator.search = translator.search.model_copy(update={"batch_sentences": in_flight})
        for beam_size in (1, 5):
            compare(
                translator, sources, references, beam_size, args.rounds, f"{in_flight:4} in flight, beam {beam_size}"
            )
    use("graphs")


def profile(translator, sources: list[str]) -> None:
    """cProfile's view of one graphed call per search, after a warm-up call."""
    for beam_size in (1, 5):
        translator.translate(sources[:64], beam_size=beam_size)
        profiler = cProfile.Profile()
        profiler.enable()
        translator.translate(sources, beam_size=beam_size)
        torch.cuda.synchronize()
        profiler.disable()
        print(f"beam {beam_size}")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def latency(translator, sources: list[str], rounds: int) -> None:
    """Milliseconds per one-sentence call, median over the sentences, for each search."""
    for beam_size in (1, 5):
        times: dict[str, list[float]] = {}
        for round_ in range(rounds):
            for name in list(SEARCHES) if round_ % 2 == 0 else list(SEARCHES)[::-1]:
                use(name)
                translator.translate(sources[:1], beam_size=beam_size)  # warm-up
                for source in sources:
                    torch.cuda.synchronize()
                    started = time.perf_counter()
                    translator.translate([source], beam_size=beam_size)
                    times.setdefault(name, []).append(1000 * (time.perf_counter() - started))
        for name, values in times.items():
            values.sort()
            print(f"beam {beam_size}  {name:6}  one sentence a call: median {values[len(values) // 2]:.1f} ms")


def compare(translator, sources: list[str], references: list[str], beam_size: int, rounds: int, label: str) -> None:
    speeds: dict[str, list[float]] = {}
    outputs: dict[str, list[str]] = {}
    memory: dict[str, int] = {}
    for name in SEARCHES:  # warm-up
        use(name)
        translator.translate(sources[:64], beam_size=beam_size)
    for round_ in range(rounds):
        for name in list(SEARCHES) if round_ % 2 == 0 else list(SEARCHES)[::-1]:
            use(name)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            started = time.perf_counter()
            outputs[name] = [t.text for t in translator.translate(sources, beam_size=beam_size)]
            speeds.setdefault(name, []).append(len(sources) / (time.perf_counter() - started))
            memory[name] = max(memory.get(name, 0), torch.cuda.max_memory_allocated())
    for name, runs in speeds.items():
        print(
            f"{label}  {name:6}  sentences/s {', '.join(f'{s:.0f}' for s in runs)}  best {max(runs):.0f}"
            f"  BLEU {bleu(outputs[name], references).value:.2f}  peak {memory[name] / 2**20:.0f} MiB"
        )
    differing = sum(a != b for a, b in zip(outputs["graphs"], outputs["eager"]))
    print(f"{label}  outputs that differ: {differing} of {len(sources)}")


if __name__ == "__main__":
    main()
