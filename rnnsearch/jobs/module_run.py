"""A whole alignment-module run (`rnnsearch train-aligner`, and each `self-train` round's):
the module trained (rnnsearch/training/aligner_training.py), then its jump table counted
from its own links of the text it learnt from and written beside its weights
(rnnsearch/alignments/counted_jumps.py has what the table is and why;
rnnsearch/files/model_directory.py, `aligner/jumps.json`, where it lies).

The table is counted for each module the run trained, once the run has ended. The module
aligns the first COUNTED_PAIRS pairs of its run's training corpora that it can read
(neither side blank, the source within search.max_source_length pieces), its rows read
with the fixed `CONTIGUITY`, whatever table it counted before. A run whose data is made
in memory (a synthetic task) has no corpora to count from, and its module reads with
`CONTIGUITY`.
"""

from __future__ import annotations

from pathlib import Path

import torch

from rnnsearch.alignments.counted_jumps import JumpTable, jump_counts
from rnnsearch.alignments.distortion import CONTIGUITY
from rnnsearch.alignments.words import read_translations
from rnnsearch.config import Config, load_config
from rnnsearch.devices import resolve_device
from rnnsearch.files import model_directory
from rnnsearch.text.corpus import is_blank, stream_parallel
from rnnsearch.training.aligner_training import train_aligner
from rnnsearch.training.console import say
from rnnsearch.training.schedule import Progress
from rnnsearch.translation.translator import Translator

COUNTED_PAIRS = 3_000  # pairs whose links are counted: tens of thousands of jumps (BENCHMARKS.md has the time)


def train_module(
    model_dir: str | Path,
    overrides: list[str],
    *,
    resume: bool,
    run_dir: Path | None = None,
    reverse_dir: Path | None = None,
    reverse_run_dir: Path | None = None,
) -> Progress:
    """Train the alignment module of `model_dir` (and with `reverse_dir` the reverse
    model's with it), as `train_aligner` takes its arguments, then count each trained
    module's jump table in its run's folder: the whole run, which every caller gets alike."""
    model_dir = Path(model_dir)
    progress = train_aligner(
        model_dir,
        overrides,
        resume=resume,
        run_dir=run_dir,
        reverse_dir=reverse_dir,
        reverse_run_dir=reverse_run_dir,
    )
    count_jumps(model_dir, run_dir or model_dir / model_directory.ALIGNER_DIR)
    if reverse_dir is not None:
        reverse_dir = Path(reverse_dir)
        count_jumps(reverse_dir, reverse_run_dir or reverse_dir / model_directory.ALIGNER_DIR)
    return progress


def count_jumps(model_dir: Path, folder: Path) -> JumpTable | None:
    """Count the jump table of the alignment module in `folder` (a run's folder, trained on
    the translation of `model_dir`) on the run's train.device, and write it there; None,
    with nothing written, where the run's corpora give too few jumps
    (counted_jumps.LEAST_JUMPS)."""
    (folder / model_directory.ALIGNER_JUMPS).unlink(missing_ok=True)
    config = load_config(folder / model_directory.CONFIG)
    sources, targets = _first_pairs(config)
    translator = _translator(model_dir, folder, resolve_device(config.train.device, "train.device"))
    readable = [
        not (is_blank(source) or is_blank(target)) and length <= translator.search.max_source_length
        for source, target, length in zip(sources, targets, translator.source_pieces(sources), strict=True)
    ]
    sources = [source for source, keep in zip(sources, readable, strict=True) if keep]
    targets = [target for target, keep in zip(targets, readable, strict=True) if keep]
    scored = translator.score(sources, targets) if sources else []
    aligned = read_translations([pair.as_translation() for pair in scored], reading="output", prior=CONTIGUITY)
    counts = jump_counts(words.pairs for words in aligned)
    table = JumpTable.counted(counts)
    if table is None:
        say(f"{folder}: {int(counts.sum()):,} jumps in {len(sources):,} pairs, too few to count a jump table")
        return None
    model_directory.write_jumps(folder, table, pairs=len(sources), jumps=int(counts.sum()))
    say(f"{folder}: jump table counted from {int(counts.sum()):,} jumps of its links of {len(sources):,} pairs")
    return table


def _first_pairs(config: Config) -> tuple[list[str], list[str]]:
    """The first COUNTED_PAIRS pairs of the training corpora of a run's `config`."""
    sources: list[str] = []
    targets: list[str] = []
    for corpus in config.data.train_corpora:
        for chunk in stream_parallel(corpus.src, corpus.tgt, chunk_lines=COUNTED_PAIRS):
            sources += chunk.sources[: COUNTED_PAIRS - len(sources)]
            targets += chunk.targets[: COUNTED_PAIRS - len(targets)]
            if len(sources) == COUNTED_PAIRS:
                return sources, targets
    return sources, targets


def _translator(model_dir: Path, folder: Path, device: torch.device) -> Translator:
    """A Translator of `model_dir`'s translation with the module of `folder` attached."""
    config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    model = model_directory.load_model(model_dir, config, src_subwords, tgt_subwords, aligner=False)
    model_directory.attach_aligner(model, folder, model_directory.weights_path(model_dir))
    return Translator(model.to(device), src_subwords, tgt_subwords, config)
