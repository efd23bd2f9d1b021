"""Synthetic transduction tasks whose sentence length is under control.

Multi30k sentences are short, so the fixed-context bottleneck barely shows there.
These tasks make the source length a free variable (e.g. 5–80 symbols): a
fixed-length summary must squeeze the whole sequence into one vector, while an
alignment model only has to find the right position. Each task is deterministic
given its seed.

    reverse   x_1 … x_n → x_n … x_1             (alignment: the anti-diagonal)
    map       x_1 … x_n → f(x_1) … f(x_n)        (f a fixed permutation; the diagonal)
"""

from __future__ import annotations

import random
from pathlib import Path

TASKS = ("reverse", "map")


def _symbols(vocabulary: int) -> list[str]:
    return [f"w{i}" for i in range(vocabulary)]


def make_pairs(
    task: str, count: int, min_length: int, max_length: int, vocabulary: int, seed: int
) -> list[tuple[str, str]]:
    """`count` (source, target) sentence pairs of space-separated symbols."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    rng = random.Random(f"{task}:{seed}")
    symbols = _symbols(vocabulary)
    mapping = dict(zip(symbols, random.Random(f"map:{vocabulary}").sample(symbols, len(symbols))))
    pairs = []
    for _ in range(count):
        source = [rng.choice(symbols) for _ in range(rng.randint(min_length, max_length))]
        target = source[::-1] if task == "reverse" else [mapping[s] for s in source]
        pairs.append((" ".join(source), " ".join(target)))
    return pairs


def write_task(
    folder: str | Path,
    task: str,
    sizes: dict[str, int],
    min_length: int,
    max_length: int,
    vocabulary: int,
    seed: int,
) -> list[Path]:
    """Write `{split}.src` / `{split}.tgt` for each split in `sizes`; return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for offset, (split, count) in enumerate(sizes.items()):
        pairs = make_pairs(task, count, min_length, max_length, vocabulary, seed + offset)
        for side, index in (("src", 0), ("tgt", 1)):
            path = folder / f"{split}.{side}"
            path.write_text("".join(pair[index] + "\n" for pair in pairs), encoding="utf-8")
            written.append(path)
    return written
