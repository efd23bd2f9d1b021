"""Training on a large corpus: time to the first step and memory of `rnnsearch train`, by corpus size.

    python bench/corpus.py [--sizes 100000,1000000] [--join 2] [--seed 1] [--work runs/bench-corpus]
                           [--config configs/multi30k_de_en.yaml] [--encode-lines 200000]
                           [--valid-lines 100] [--limit-minutes 8] [--json out.json]

For each size, a synthetic parallel corpus of that many pairs is made from Multi30k's
training set: each pair joins `--join` random aligned Multi30k pairs (the same indices on
both sides) into one line, reproducibly from `--seed`, as plain text files in `--work`
(kept, and reused when their line counts match). Then `rnnsearch train` runs on it as a
child process, one at a time, for 3 steps with a fresh model directory; it validates once,
at the end, on the first `--valid-lines` pairs of Multi30k's validation set, the same for
every size. Measured from outside:

- corpus ready: seconds from start until the trainer reports the encoded training data;
- first step: seconds from start until the first row appears in metrics.jsonl (log_every=1);
- total: seconds until the process exits (the final validation and save included);
- peak RSS of the train process (its own rusage, from wait4);
- the corpus files' size on disk.

Then SentencePiece encoding alone, the ceiling of any encoding stage: the subword models
that run wrote encode the first `--encode-lines` pairs (both sides) in batches, in this one
process, as the trainer calls them. A run past `--limit-minutes` is stopped and reported so.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.processor import describe_cpu  # noqa: E402
from rnnsearch.text.subwords import Subwords  # noqa: E402

MULTI30K = (Path("data/multi30k/train.de.gz"), Path("data/multi30k/train.en.gz"))
MULTI30K_VALID = (Path("data/multi30k/val.de.gz"), Path("data/multi30k/val.en.gz"))
CORPUS_READY = "training data "  # the trainer's line once the training pairs are encoded
ENCODE_BATCH = 10_000
POLL_SECONDS = 0.05


@dataclass
class Result:
    """The figures of one corpus size; None where the run was stopped before reaching them."""

    pairs: int
    corpus_bytes: int
    corpus_ready_s: float | None
    first_step_s: float | None
    total_s: float
    peak_rss_bytes: int
    stopped: bool
    encode_pairs_per_s: float | None


def read_gzip_lines(path: Path) -> list[str]:
    """The lines of a gzip text file, without their newlines."""
    with gzip.open(path, "rt", encoding="utf-8") as file:
        return file.read().splitlines()


def count_lines(path: Path) -> int:
    """Newlines in `path`, read in blocks (the corpora are too large to read as text just to count)."""
    count = 0
    with path.open("rb") as file:
        while block := file.read(1 << 24):
            count += block.count(b"\n")
    return count


def build_corpus(work: Path, pairs: int, join: int, seed: int) -> tuple[Path, Path]:
    """Source and target files of `pairs` synthetic pairs, each `join` aligned Multi30k pairs in one line.

    Files already there with the right line count are reused: making 1M pairs takes a while.
    """
    src_path, tgt_path = (work / f"corpus-{pairs}-join{join}-seed{seed}.{side}" for side in ("de", "en"))
    if all(path.exists() and count_lines(path) == pairs for path in (src_path, tgt_path)):
        return src_path, tgt_path
    sources, targets = (read_gzip_lines(path) for path in MULTI30K)
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    with src_path.open("w", encoding="utf-8") as src, tgt_path.open("w", encoding="utf-8") as tgt:
        for _ in range(pairs):
            picks = [rng.randrange(len(sources)) for _ in range(join)]
            src.write(" ".join(sources[i] for i in picks) + "\n")
            tgt.write(" ".join(targets[i] for i in picks) + "\n")
    return src_path, tgt_path


def build_valid(work: Path, lines: int) -> tuple[Path, Path]:
    """The first `lines` pairs of Multi30k's validation set: the untrained model's greedy search
    runs to its length limit on every sentence, and on all 1,014 takes minutes."""
    paths = tuple(work / f"valid-{lines}.{side}" for side in ("de", "en"))
    work.mkdir(parents=True, exist_ok=True)
    for source, path in zip(MULTI30K_VALID, paths):
        path.write_text("".join(line + "\n" for line in read_gzip_lines(source)[:lines]), encoding="utf-8")
    return paths


def train_command(config: Path, corpus: tuple[Path, Path], valid: tuple[Path, Path], model_dir: Path) -> list[str]:
    """`rnnsearch train` for 3 steps on the corpus, a metrics row per step, validating at the end only."""
    settings = {
        "data.train.src": corpus[0],
        "data.train.tgt": corpus[1],
        "data.valid.src": valid[0],
        "data.valid.tgt": valid[1],
        "train.model_dir": model_dir,
        "train.max_steps": 3,
        "train.valid_every": 1000,
        "train.log_every": 1,
    }
    command = [sys.executable, "-m", "rnnsearch", "train", str(config)]
    for key, value in settings.items():
        command += ["--set", f"{key}={value}"]
    return command


def has_first_row(metrics: Path) -> bool:
    """Whether metrics.jsonl holds a complete first row."""
    try:
        with metrics.open("rb") as file:
            return b"\n" in file.readline()
    except FileNotFoundError:
        return False


def log_says(log: Path, marker: str) -> bool:
    """Whether the run's log has a line starting with `marker`."""
    return any(line.startswith(marker) for line in log.read_text(encoding="utf-8", errors="replace").splitlines())


def run_train(
    command: list[str], model_dir: Path, log: Path, limit_s: float
) -> tuple[dict[str, float | None], int, bool]:
    """Run the trainer, polling its log and metrics; its times, peak RSS and whether it was stopped.

    wait4 gives this child's own rusage, so the peak RSS is the train process's alone.
    """
    times: dict[str, float | None] = {"corpus_ready_s": None, "first_step_s": None}
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    stopped = False
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        elapsed = time.perf_counter() - start
        if times["corpus_ready_s"] is None and log_says(log, CORPUS_READY):
            times["corpus_ready_s"] = elapsed
        if times["first_step_s"] is None and has_first_row(model_dir / "metrics.jsonl"):
            times["first_step_s"] = elapsed
        if pid:
            break
        if elapsed > limit_s and not stopped:
            process.kill()
            stopped = True
        time.sleep(POLL_SECONDS)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode and not stopped:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}); see {log}")
    times["total_s"] = elapsed
    return times, usage.ru_maxrss * 1024, stopped


def encode_rate(model_dir: Path, src: Path, tgt: Path, lines: int) -> float:
    """Pairs per second that the run's subword models encode (both sides), in batches, in this process."""
    src_subwords, tgt_subwords = (Subwords.load(model_dir / f"subwords.{side}.model") for side in ("src", "tgt"))
    texts = []
    for path in (src, tgt):
        with path.open(encoding="utf-8") as file:
            texts.append([line.rstrip("\n") for line, _ in zip(file, range(lines))])
    start = time.perf_counter()
    for begin in range(0, len(texts[0]), ENCODE_BATCH):
        src_subwords.encode(texts[0][begin : begin + ENCODE_BATCH])
        tgt_subwords.encode(texts[1][begin : begin + ENCODE_BATCH])
    return len(texts[0]) / (time.perf_counter() - start)


def measure(args: argparse.Namespace, pairs: int) -> Result:
    """Build (or reuse) the corpus of `pairs`, train on it from a fresh model directory, and time encoding."""
    src, tgt = build_corpus(args.work, pairs, args.join, args.seed)
    model_dir = args.work / f"model-{pairs}"
    shutil.rmtree(model_dir, ignore_errors=True)
    command = train_command(args.config, (src, tgt), build_valid(args.work, args.valid_lines), model_dir)
    times, peak_rss, stopped = run_train(command, model_dir, args.work / f"train-{pairs}.log", args.limit_minutes * 60)
    can_encode = (model_dir / "subwords.tgt.model").exists()
    return Result(
        pairs=pairs,
        corpus_bytes=src.stat().st_size + tgt.stat().st_size,
        peak_rss_bytes=peak_rss,
        stopped=stopped,
        encode_pairs_per_s=encode_rate(model_dir, src, tgt, args.encode_lines) if can_encode else None,
        **times,
    )


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def table_row(result: Result) -> str:
    """One Markdown row: pairs, corpus ready, first step, total, peak RSS, corpus size, encoding rate."""
    rate = "—" if result.encode_pairs_per_s is None else f"{result.encode_pairs_per_s:,.0f}"
    total = seconds(result.total_s) + (" (stopped)" if result.stopped else "")
    cells = [
        f"{result.pairs:,}",
        seconds(result.corpus_ready_s),
        seconds(result.first_step_s),
        total,
        f"{result.peak_rss_bytes / 2**30:.2f} GiB",
        f"{result.corpus_bytes / 2**20:,.0f} MiB",
        rate,
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="pairs per corpus, comma-separated")
    parser.add_argument("--join", type=int, default=2, help="Multi30k pairs joined into one synthetic pair")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("runs/bench-corpus"))
    parser.add_argument("--config", type=Path, default=Path("configs/multi30k_de_en.yaml"))
    parser.add_argument("--encode-lines", type=int, default=200_000)
    parser.add_argument("--valid-lines", type=int, default=100, help="Multi30k validation pairs validated on")
    parser.add_argument("--limit-minutes", type=float, default=8.0, help="stop a train run after this long")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(f"{datetime.date.today().isoformat()}, {describe_cpu(len(os.sched_getaffinity(0)))}")
    print(f"`{' '.join(sys.argv)}`\n")
    print("| pairs | corpus ready (s) | first step (s) | total (s) | peak RSS | corpus on disk | encoding, pairs/s |")
    print("|---|---|---|---|---|---|---|")
    results = []
    for pairs in (int(size) for size in args.sizes.split(",")):
        results.append(measure(args, pairs))
        print(table_row(results[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(result) for result in results], indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
