"""Training on a large corpus prepared once on disk: `rnnsearch prepare`, then `rnnsearch train`
reusing it, by corpus size.

    python bench/corpus.py [--sizes 100000,1000000,4000000] [--join 2] [--seed 1]
                           [--work runs/bench-corpus] [--config configs/multi30k_de_en.yaml]
                           [--encode-lines 200000] [--valid-lines 100] [--speed-blocks 6]
                           [--speed-steps 20] [--speed-warmup 10] [--limit-minutes 15] [--json out.json]

For each size, a synthetic parallel corpus of that many pairs is made from Multi30k's
training set: each pair joins `--join` random aligned Multi30k pairs (the same indices on
both sides) into one line, reproducibly from `--seed`, as plain text files in `--work`
(kept, and reused when their line counts match). Then, one child process at a time:

1. `rnnsearch prepare` on it (the config with data.train set to the corpus and
   data.prepared to WORK/prepared-N, deleted first, so the prepare is fresh). Measured:
   - wall seconds until the process exits;
   - from its stderr: reading and sampling plus SentencePiece training seconds, and the
     encoding stage's seconds and pairs/s (lines read per second);
   - peak RSS of the prepare process: wait4's figure (the larger of its own peak and that
     of its largest child, an encoding worker), and its own VmHWM, last read before it
     exited;
   - peak of the summed VmRSS of the process and all its descendants (the encoding
     workers and multiprocessing's resource tracker), read from /proc every 50 ms
     (descendants found by the parent pid in /proc/*/stat; a sample costs this process
     about 1.5 ms of CPU); shared pages (libraries) count once per process, and a peak
     shorter than 50 ms can be missed;
   - the prepared directory's size (the files' sizes).
2. `rnnsearch train` for 3 steps with a fresh model directory and data.prepared at that
   directory, so that it reuses it (checked in its log); validating once, at the end, on
   the first `--valid-lines` pairs of Multi30k's validation set. Measured: seconds until
   the first row of metrics.jsonl (log_every=1), seconds until it exits, and its peak RSS
   (wait4; it has no children).
3. SentencePiece's own encoding rate, the ceiling of the encoding stage for the same
   workers: as many processes as prepare used workers (data.workers, else one per core
   above SMALL_CORPUS_BYTES of corpus), started together (spawned, then released at a barrier once
   each holds its share of the first `--encode-lines` pairs in memory and the prepared
   directory's subword models), each encoding its share (both sides, batches of 10,000,
   as the workers call SentencePiece). Pairs/s is all the pairs over the time from the
   first process's start to the last one's end. One process alone is measured too, with
   its CPU seconds per wall second (SentencePiece encodes a batch on several threads).

Then a training-speed check of the data path, in this process (`--speed-blocks 0` skips
it): the config's own Multi30k training data prepared once into WORK/prepared-multi30k,
and an in-memory copy of it (every pair's ids as two array('i'), the way the trainer held
its corpus before preparing it on disk), which give the same epoch_batches order; the
config's model, trained with the trainer's training_step (configure_cpu, flushing
denormals) for `--speed-warmup` steps, then `--speed-blocks` blocks of `--speed-steps`
steps alternating between the two sources (prepared first in even pairs of blocks,
in-memory first in odd ones), both blocks of a pair on the same batches. Each block's time
includes building its batches (make_batch of the pairs read from its source). Target
tokens/s of each source over all its blocks, their ratio, and milliseconds per batch of
make_batch alone from each source, on the same batches.

Last, a projection to 40M pairs: each figure extended along the line through the two
largest sizes. A child run past `--limit-minutes` is stopped and reported so.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.processor import describe_cpu  # noqa: E402
from rnnsearch import kernels  # noqa: E402
from rnnsearch.config import load_config  # noqa: E402
from rnnsearch.prepared.manifest import SRC_SUBWORDS, TGT_SUBWORDS  # noqa: E402
from rnnsearch.prepared.workers import SMALL_CORPUS_BYTES  # noqa: E402
from rnnsearch.text.subwords import Subwords  # noqa: E402
from rnnsearch.training.loss import Objective  # noqa: E402

MULTI30K = (Path("data/multi30k/train.de.gz"), Path("data/multi30k/train.en.gz"))
MULTI30K_VALID = (Path("data/multi30k/val.de.gz"), Path("data/multi30k/val.en.gz"))
ENCODE_BATCH = 10_000
POLL_SECONDS = 0.05
PROJECTED_PAIRS = 40_000_000
SUBWORDS_LINE = re.compile(r"subwords learnt from ([\d,]+) pairs in ([\d.]+) s, after ([\d.]+) s of reading")
ENCODED_LINE = re.compile(r"^training data .*; encoded in ([\d.]+) s, ([\d,]+) pairs/s", re.MULTILINE)
REUSED_LINE = re.compile(r"^training data: ([\d,]+) prepared pairs in .*, reused", re.MULTILINE)
# the targets of preparing on disk, checked at the end
PREPARE_RSS_TARGET = 2e9
TRAIN_RSS_TARGET = 1.2e9
TRAIN_RSS_GROWTH_TARGET = 0.20
ENCODING_SHARE_TARGET = 0.70
SPEED_RATIO_TARGET = 0.05


@dataclass
class Result:
    """The figures of one corpus size; None where a run was stopped before reaching them."""

    pairs: int
    corpus_bytes: int
    workers: int
    prepare_s: float
    prepare_stopped: bool
    reading_sampling_s: float | None
    subwords_s: float | None
    encoding_s: float | None
    encoding_pairs_per_s: float | None
    prepare_peak_rss_bytes: int  # wait4: the process's, or its largest child's if larger
    prepare_own_hwm_bytes: int | None  # VmHWM of the process itself, last read before it exited
    prepare_tree_peak_rss_bytes: int  # the largest sampled sum of VmRSS over the process tree
    prepare_tree_processes: int  # the most processes seen in the tree at once
    prepared_bytes: int
    train_reused: bool
    first_step_s: float | None
    train_total_s: float
    train_stopped: bool
    train_peak_rss_bytes: int
    ceiling_pairs_per_s: float | None = None  # SentencePiece alone, `workers` processes
    one_process_pairs_per_s: float | None = None
    one_process_cpu_per_wall: float | None = None
    ceiling_lines: int = 0

    @property
    def sampling_and_subwords_s(self) -> float | None:
        if self.reading_sampling_s is None or self.subwords_s is None:
            return None
        return self.reading_sampling_s + self.subwords_s

    @property
    def encoding_share(self) -> float | None:
        if self.encoding_pairs_per_s is None or not self.ceiling_pairs_per_s:
            return None
        return self.encoding_pairs_per_s / self.ceiling_pairs_per_s


# ---- corpora -----------------------------------------------------------------------------


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

    Files already there with the right line count are reused: making millions of pairs takes a while.
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


def directory_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.iterdir() if path.is_file())


# ---- child processes ---------------------------------------------------------------------


def command_line(verb: str, config: Path, settings: dict[str, object]) -> list[str]:
    command = [sys.executable, "-m", "rnnsearch", verb, str(config)]
    for key, value in settings.items():
        command += ["--set", f"{key}={value}"]
    return command


def corpus_settings(corpus: tuple[Path, Path], prepared: Path) -> dict[str, object]:
    return {"data.train.src": corpus[0], "data.train.tgt": corpus[1], "data.prepared": prepared}


def train_settings(corpus: tuple[Path, Path], prepared: Path, valid: tuple[Path, Path], model_dir: Path) -> dict:
    """`rnnsearch train` for 3 steps on the prepared corpus, a metrics row per step, validating at the end only."""
    return {
        **corpus_settings(corpus, prepared),
        "data.valid.src": valid[0],
        "data.valid.tgt": valid[1],
        "train.model_dir": model_dir,
        "train.max_steps": 3,
        "train.valid_every": 1000,
        "train.log_every": 1,
    }


def parent_pids() -> dict[int, int]:
    """Every process's parent, from /proc/*/stat."""
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return parents


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, parent in parent_pids().items():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for parent in frontier for child in children.get(parent, [])]
        found += frontier
    return found


def memory_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of `pid` in bytes (none for a process gone or a zombie)."""
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return values


@dataclass
class TreeMemory:
    """Peaks of a process tree's memory, from samples of /proc."""

    peak_rss: int = 0
    own_hwm: int | None = None
    most_processes: int = 0

    def sample(self, pid: int) -> None:
        root = memory_status(pid)
        if "VmHWM" in root:
            self.own_hwm = root["VmHWM"]
        others = descendants(pid)
        total = root.get("VmRSS", 0) + sum(memory_status(other).get("VmRSS", 0) for other in others)
        self.peak_rss = max(self.peak_rss, total)
        self.most_processes = max(self.most_processes, 1 + len(others))


@dataclass
class ChildRun:
    seconds: float
    peak_rss: int  # wait4's ru_maxrss
    stopped: bool
    marks: dict[str, float] = field(default_factory=dict)


def run_child(command: list[str], log: Path, limit_s: float, poll: Callable[[int], Iterable[str]]) -> ChildRun:
    """Run `command` with its output in `log`, calling `poll(pid)` every 50 ms until it exits.

    `poll` returns the names of moments it sees, each stamped the first time with the
    seconds since the start.
    """
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    stopped, marks = False, {}
    while True:
        elapsed = time.perf_counter() - start
        for name in poll(process.pid):
            marks.setdefault(name, elapsed)
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if elapsed > limit_s and not stopped:
            process.kill()
            stopped = True
        time.sleep(POLL_SECONDS)
    seconds = time.perf_counter() - start
    returncode = os.waitstatus_to_exitcode(status)
    if returncode and not stopped:
        raise SystemExit(f"{' '.join(command)} failed ({returncode}); see {log}")
    return ChildRun(seconds, usage.ru_maxrss * 1024, stopped, marks)


def has_first_row(metrics: Path) -> bool:
    """Whether metrics.jsonl holds a complete first row."""
    try:
        with metrics.open("rb") as file:
            return b"\n" in file.readline()
    except FileNotFoundError:
        return False


def number(text: str) -> float:
    return float(text.replace(",", ""))


# ---- SentencePiece alone -----------------------------------------------------------------


def first_lines(path: Path, lines: int) -> list[str]:
    with path.open(encoding="utf-8") as file:
        return [line.rstrip("\n") for line, _ in zip(file, range(lines))]


def encode_share(prepared: Path, corpus: tuple[Path, Path], begin: int, end: int, barrier, results) -> None:
    """One process of the ceiling: load the models and its lines, wait for the others, encode."""
    subwords = [Subwords.load(prepared / name) for name in (SRC_SUBWORDS, TGT_SUBWORDS)]
    texts = [first_lines(path, end)[begin:] for path in corpus]
    barrier.wait()
    started, cpu = time.monotonic(), time.process_time()
    for batch in range(0, len(texts[0]), ENCODE_BATCH):
        for side in (0, 1):
            subwords[side].encode(texts[side][batch : batch + ENCODE_BATCH])
    results.put((started, time.monotonic(), time.process_time() - cpu, len(texts[0])))


def encode_rate(prepared: Path, corpus: tuple[Path, Path], lines: int, processes: int) -> tuple[float, float]:
    """Pairs/s of `processes` processes encoding the first `lines` pairs between them, started
    together; and their CPU seconds per wall second."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    shares = [(lines * k // processes, lines * (k + 1) // processes) for k in range(processes)]
    workers = [
        context.Process(target=encode_share, args=(prepared, corpus, begin, end, barrier, results))
        for begin, end in shares
    ]
    for worker in workers:
        worker.start()
    finished = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    start, end = min(f[0] for f in finished), max(f[1] for f in finished)
    return sum(f[3] for f in finished) / (end - start), sum(f[2] for f in finished) / (end - start)


# ---- one size ----------------------------------------------------------------------------


def worker_count(config_path: Path, corpus: tuple[Path, Path], prepared: Path) -> int:
    """The encoding workers prepare starts, by its rule: data.workers, else one per core above SMALL_CORPUS_BYTES."""
    config = load_config(str(config_path), [f"{k}={v}" for k, v in corpus_settings(corpus, prepared).items()])
    if config.data.workers is not None:
        return config.data.workers
    size = sum(path.stat().st_size for path in corpus)
    return 1 if size <= SMALL_CORPUS_BYTES else len(os.sched_getaffinity(0))


def measure(args: argparse.Namespace, pairs: int) -> Result:
    """Build (or reuse) the corpus of `pairs`, prepare it afresh, train on it, and time SentencePiece alone."""
    corpus = build_corpus(args.work, pairs, args.join, args.seed)
    prepared = args.work / f"prepared-{pairs}"
    shutil.rmtree(prepared, ignore_errors=True)
    limit_s = args.limit_minutes * 60

    prepare_log = args.work / f"prepare-{pairs}.log"
    tree = TreeMemory()

    def sample_tree(pid: int) -> tuple[str, ...]:
        tree.sample(pid)
        return ()

    prepare = run_child(
        command_line("prepare", args.config, corpus_settings(corpus, prepared)), prepare_log, limit_s, sample_tree
    )
    text = prepare_log.read_text(encoding="utf-8", errors="replace")
    subwords, encoded = SUBWORDS_LINE.search(text), ENCODED_LINE.search(text)

    model_dir = args.work / f"model-{pairs}"
    shutil.rmtree(model_dir, ignore_errors=True)
    train_log = args.work / f"train-{pairs}.log"
    metrics = model_dir / "metrics.jsonl"
    valid = build_valid(args.work, args.valid_lines)
    train = run_child(
        command_line("train", args.config, train_settings(corpus, prepared, valid, model_dir)),
        train_log,
        limit_s,
        lambda _: ("first_step",) if has_first_row(metrics) else (),
    )
    reused = REUSED_LINE.search(train_log.read_text(encoding="utf-8", errors="replace")) is not None

    workers = worker_count(args.config, corpus, prepared)
    result = Result(
        pairs=pairs,
        corpus_bytes=sum(path.stat().st_size for path in corpus),
        workers=workers,
        prepare_s=prepare.seconds,
        prepare_stopped=prepare.stopped,
        reading_sampling_s=float(subwords[3]) if subwords else None,
        subwords_s=float(subwords[2]) if subwords else None,
        encoding_s=float(encoded[1]) if encoded else None,
        encoding_pairs_per_s=number(encoded[2]) if encoded else None,
        prepare_peak_rss_bytes=prepare.peak_rss,
        prepare_own_hwm_bytes=tree.own_hwm,
        prepare_tree_peak_rss_bytes=tree.peak_rss,
        prepare_tree_processes=tree.most_processes,
        prepared_bytes=directory_bytes(prepared) if prepared.exists() else 0,
        train_reused=reused,
        first_step_s=train.marks.get("first_step"),
        train_total_s=train.seconds,
        train_stopped=train.stopped,
        train_peak_rss_bytes=train.peak_rss,
    )
    if (prepared / TGT_SUBWORDS).exists():
        lines = min(args.encode_lines, pairs)
        result.ceiling_lines = lines
        result.ceiling_pairs_per_s, _ = encode_rate(prepared, corpus, lines, workers)
        result.one_process_pairs_per_s, result.one_process_cpu_per_wall = encode_rate(prepared, corpus, lines, 1)
    return result


# ---- training speed from prepared and in-memory pairs -------------------------------------


def training_speed_check(args: argparse.Namespace) -> dict:
    """Target tokens/s of the config's model trained on batches from the prepared data and from
    an in-memory copy, in alternating blocks on the same batches; and make_batch alone from each."""
    import numpy as np  # torch and numpy only here: the encoding processes import this module too
    import torch

    from rnnsearch.model.seq2seq import build_model
    from rnnsearch.prepared import PreparedPairs, ensure_prepared, prepared_dir
    from rnnsearch.text.batches import InMemoryPairs, epoch_batches, make_batch
    from rnnsearch.training.environment import configure_cpu, flushing_denormals
    from rnnsearch.training.loop import StepContext, training_step
    from rnnsearch.translation.translator import resolve_device

    config = load_config(str(args.config), [f"data.prepared={args.work / 'prepared-multi30k'}"])
    configure_cpu(config.train.threads)
    device = resolve_device(config.train.device, "train.device")
    directory = prepared_dir(config, config.train.model_dir)
    src_subwords, tgt_subwords = ensure_prepared(config, directory)
    prepared = PreparedPairs(directory)
    in_memory = InMemoryPairs(
        [(array("i", s.tolist()), array("i", t.tolist())) for s, t in map(prepared.__getitem__, range(len(prepared)))]
    )
    train = config.train
    orders = [
        epoch_batches(pairs, train.batch_tokens, train.max_batch_sentences, train.seed, 0)
        for pairs in (prepared, in_memory)
    ]
    if not all(np.array_equal(a, b) for a, b in zip(vars(orders[0]).values(), vars(orders[1]).values())):
        raise SystemExit("the prepared and in-memory pairs give different batches")
    order = orders[0]
    batches_needed = args.speed_warmup + (args.speed_blocks + 1) // 2 * args.speed_steps
    if batches_needed > len(order):
        raise SystemExit(f"{batches_needed} batches asked for, the epoch has {len(order)}")
    sources = {"prepared": prepared, "in_memory": in_memory}
    torch.manual_seed(train.seed)
    model = build_model(config.model, len(src_subwords), len(tgt_subwords)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=train.learning_rate, fused=True)
    model.train()

    def steps(pairs, batches) -> tuple[int, float]:
        tokens, started = 0, time.perf_counter()
        for indices in batches:
            batch = make_batch([pairs[i] for i in indices]).to(device)
            tokens += training_step(StepContext(model, optimizer, Objective.of(config), train.clip_norm), batch)[1]
        return tokens, time.perf_counter() - started

    blocks = []
    chosen = kernels.choose(device, purpose="train", precision=train.precision)
    with flushing_denormals(), kernels.use(chosen):
        steps(prepared, [order[k] for k in range(args.speed_warmup)])
        for block in range(args.speed_blocks):
            pair, second = divmod(block, 2)
            names = ["prepared", "in_memory"] if pair % 2 == 0 else ["in_memory", "prepared"]
            first = args.speed_warmup + pair * args.speed_steps
            batches = [order[k] for k in range(first, first + args.speed_steps)]
            tokens, seconds = steps(sources[names[second]], batches)
            blocks.append({"source": names[second], "first_batch": first, "tokens": tokens, "seconds": seconds})
    figures: dict = {
        "epoch_pairs": len(prepared),
        "warmup_steps": args.speed_warmup,
        "steps_per_block": args.speed_steps,
        "blocks": blocks,
    }
    used = [order[k] for k in range(args.speed_warmup, batches_needed)]
    for name, pairs in sources.items():
        mine = [b for b in blocks if b["source"] == name]
        figures[f"{name}_tokens_per_s"] = sum(b["tokens"] for b in mine) / sum(b["seconds"] for b in mine)
        figures[f"{name}_make_batch_ms"] = min(batch_building_ms(pairs, used, make_batch) for _ in range(3))
    figures["ratio"] = figures["prepared_tokens_per_s"] / figures["in_memory_tokens_per_s"]
    return figures


def batch_building_ms(pairs, batches, make_batch) -> float:
    """Milliseconds per batch of reading its pairs from `pairs` and making its tensors."""
    started = time.perf_counter()
    for indices in batches:
        make_batch([pairs[i] for i in indices])
    return 1000 * (time.perf_counter() - started) / len(batches)


# ---- report ------------------------------------------------------------------------------

PROJECTED = {
    "prepare_s": "prepare wall s",
    "prepare_tree_peak_rss_bytes": "prepare peak RSS, whole tree",
    "prepare_peak_rss_bytes": "prepare peak RSS, own (wait4)",
    "train_peak_rss_bytes": "train peak RSS",
    "first_step_s": "train: first step s",
    "prepared_bytes": "prepared data on disk",
    "corpus_bytes": "corpus on disk",
}


def projection(results: list[Result], pairs: int = PROJECTED_PAIRS) -> dict[str, dict[str, float]]:
    """Each figure at `pairs`, along the line through the two largest sizes; and its slope per million pairs."""
    done = sorted((r for r in results if not (r.prepare_stopped or r.train_stopped)), key=lambda r: r.pairs)
    if len(done) < 2 or done[-1].pairs == done[-2].pairs:
        return {}
    small, large = done[-2], done[-1]
    projected = {}
    for name in PROJECTED:
        a, b = getattr(small, name), getattr(large, name)
        if a is None or b is None:
            continue
        slope = (b - a) / (large.pairs - small.pairs)
        projected[name] = {"per_million": slope * 1e6, "value": b + slope * (pairs - large.pairs)}
    return projected


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def gib(value: float | None) -> str:
    return "—" if value is None else f"{value / 2**30:.2f} GiB"


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


TABLE_HEAD = (
    "| pairs | prepare wall (s) | of which sampling + subwords (s) | encoding (s) | encoding pairs/s "
    "| % of SentencePiece ceiling | prepare peak RSS, own / whole tree | train: first step (s) "
    "| train peak RSS | prepared data on disk | corpus on disk |\n" + "|---" * 11 + "|"
)


def table_row(result: Result) -> str:
    share = "—" if result.encoding_share is None else f"{100 * result.encoding_share:.0f}%"
    rate = "—" if result.encoding_pairs_per_s is None else f"{result.encoding_pairs_per_s:,.0f}"
    cells = [
        f"{result.pairs:,}",
        seconds(result.prepare_s) + (" (stopped)" if result.prepare_stopped else ""),
        seconds(result.sampling_and_subwords_s),
        seconds(result.encoding_s),
        rate,
        share,
        f"{gib(result.prepare_peak_rss_bytes)} / {gib(result.prepare_tree_peak_rss_bytes)}",
        seconds(result.first_step_s) + ("" if result.train_reused else " (not reused!)"),
        gib(result.train_peak_rss_bytes) + (" (stopped)" if result.train_stopped else ""),
        mib(result.prepared_bytes),
        mib(result.corpus_bytes),
    ]
    return "| " + " | ".join(cells) + " |"


def ceiling_line(result: Result) -> str:
    if result.ceiling_pairs_per_s is None:
        return f"{result.pairs:,}: no subword models, no ceiling"
    return (
        f"{result.pairs:,}: SentencePiece alone on {result.ceiling_lines:,} pairs, {result.workers} process(es) "
        f"{result.ceiling_pairs_per_s:,.0f} pairs/s, 1 process {result.one_process_pairs_per_s:,.0f} pairs/s "
        f"({result.one_process_cpu_per_wall:.2f} CPU s per s); prepare's own VmHWM "
        f"{gib(result.prepare_own_hwm_bytes)}, at most {result.prepare_tree_processes} processes in its tree; "
        f"train total {result.train_total_s:.1f} s"
    )


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def targets(results: list[Result], speed: dict | None) -> list[str]:
    """Each target of preparing on disk, with the figures that meet or miss it."""
    lines = []
    prepare_peak = max(max(r.prepare_peak_rss_bytes, r.prepare_tree_peak_rss_bytes) for r in results)
    lines.append(
        f"prepare peak RSS ≤ 2 GB at every size (largest, own or tree: {prepare_peak / 1e9:.2f} GB): "
        + verdict(prepare_peak <= PREPARE_RSS_TARGET)
    )
    train_peak = max(r.train_peak_rss_bytes for r in results)
    lines.append(
        f"train peak RSS ≤ 1.2 GB at every size (largest: {train_peak / 1e9:.2f} GB): "
        + verdict(train_peak <= TRAIN_RSS_TARGET)
    )
    by_size = sorted(results, key=lambda r: r.pairs)
    growth = by_size[-1].train_peak_rss_bytes / by_size[0].train_peak_rss_bytes - 1
    lines.append(
        f"train peak RSS at {by_size[-1].pairs:,} within 20% of {by_size[0].pairs:,} "
        f"({100 * growth:+.1f}%): " + verdict(abs(growth) <= TRAIN_RSS_GROWTH_TARGET)
    )
    shares = [r.encoding_share for r in results if r.encoding_share is not None]
    if shares:
        lines.append(
            f"prepare encoding ≥ 70% of SentencePiece alone, same workers (lowest: {100 * min(shares):.0f}%): "
            + verdict(min(shares) >= ENCODING_SHARE_TARGET)
        )
    if speed:
        lines.append(
            f"training tokens/s from prepared data within ±5% of in-memory (ratio {speed['ratio']:.3f}): "
            + verdict(abs(speed["ratio"] - 1) <= SPEED_RATIO_TARGET)
        )
    return lines


def write_json(path: Path | None, report: dict) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000,4000000", help="pairs per corpus, comma-separated")
    parser.add_argument("--join", type=int, default=2, help="Multi30k pairs joined into one synthetic pair")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("runs/bench-corpus"))
    parser.add_argument("--config", type=Path, default=Path("configs/multi30k_de_en.yaml"))
    parser.add_argument("--encode-lines", type=int, default=200_000, help="pairs SentencePiece encodes alone")
    parser.add_argument("--valid-lines", type=int, default=100, help="Multi30k validation pairs validated on")
    parser.add_argument("--speed-blocks", type=int, default=6, help="alternating training blocks; 0 skips the check")
    parser.add_argument("--speed-steps", type=int, default=20, help="training steps per block")
    parser.add_argument("--speed-warmup", type=int, default=10, help="training steps before the first block")
    parser.add_argument("--limit-minutes", type=float, default=15.0, help="stop a prepare or train run after this")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report: dict = {
        "date": datetime.date.today().isoformat(),
        "cpu": describe_cpu(len(os.sched_getaffinity(0))),
        "command": " ".join(sys.argv),
        "sizes": [],
    }
    print(f"{report['date']}, {report['cpu']}")
    print(f"`{report['command']}`\n")
    results = []
    for pairs in (int(size) for size in args.sizes.split(",")):
        results.append(measure(args, pairs))
        report["sizes"].append({**asdict(results[-1]), "encoding_share": results[-1].encoding_share})
        write_json(args.json, report)
        print(f"done: {table_row(results[-1])}", flush=True)
    print(f"\n{TABLE_HEAD}")
    for result in results:
        print(table_row(result))
    print()
    for result in results:
        print(ceiling_line(result))
    speed = None
    if args.speed_blocks > 0:
        speed = report["training_speed"] = training_speed_check(args)
        print(
            f"\ntraining on Multi30k, {speed['steps_per_block']} steps a block, after {speed['warmup_steps']} "
            f"warm-up steps: prepared {speed['prepared_tokens_per_s']:,.0f} target tokens/s, in memory "
            f"{speed['in_memory_tokens_per_s']:,.0f} (ratio {speed['ratio']:.3f}); make_batch "
            f"{speed['prepared_make_batch_ms']:.2f} ms a batch from prepared, {speed['in_memory_make_batch_ms']:.2f} "
            "ms in memory"
        )
        for block in speed["blocks"]:
            rate = block["tokens"] / block["seconds"]
            print(f"  {block['source']:9} from batch {block['first_batch']}: {rate:,.0f} tokens/s")
    projected = report["projection_40m"] = projection(results)
    if projected:
        print(f"\nat {PROJECTED_PAIRS:,} pairs, along the line through the two largest sizes:")
        for name, values in projected.items():
            is_bytes = name.endswith("bytes")
            value = gib(values["value"]) if is_bytes else f"{values['value']:,.0f} s"
            slope = gib(values["per_million"]) if is_bytes else f"{values['per_million']:,.1f} s"
            print(f"  {PROJECTED[name]}: {value} ({slope} per million pairs)")
    report["targets"] = targets(results, speed)
    print("\ntargets:")
    for line in report["targets"]:
        print(f"  {line}")
    write_json(args.json, report)


if __name__ == "__main__":
    main()
