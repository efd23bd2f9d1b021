"""`rnnsearch self-train`: rounds in which a model's alignment module and its reverse
model's learn from their own links, both directions combined, on pairs that carry no
word links of their own (Zenkel et al. 2020, Chen et al. 2020: self-training on the
symmetrised alignments of the trained aligner).

A round:
1. aligns every pair of the corpora the model's module learnt from (its train-aligner
   run's, with the links it was taught) with both modules (the model's, and the reverse
   model's reading each pair the other way round), the two directions combined by
   `--symmetrize`;
2. writes, for each corpus, one Pharaoh line per pair: the corpus's own links where its
   `alignments` file has a non-empty line for the pair (a teacher's links are kept), the
   modules' combined links elsewhere;
3. trains a new module for each direction on those links (`train-aligner`'s run, with
   the round's data section; the reverse model reads the same pairs the other way round,
   the links transposed), counts its jump table from its links (module_run.py), and
   makes both the model's module's, so that the next round's links are read with the
   table of the modules that align them. The new modules keep the
   size, the NULL option and the agreement of the run that trained the first (both
   directions train together, agreeing, where it did), --set on top.

Its files, in each of the two model directories:

    self-training/round-0.safetensors   the module the first round started from
    self-training/round-R/corpus-K.links the round's links for training corpus K, in
                                        this direction's orientation (source word first)
    self-training/round-R/aligner/      the round's module run (train-aligner's files, and the
                                        jump table counted from its links: module_run.py)
    self-training/round-R/aligner/finished  written when that run has ended

Every file is written whole or not at all, so a run killed at any moment resumes
(`--resume`) where it stopped: a round's links are aligned again only if their file is
missing, and its module runs resume from their last checkpoint, drawing the same
batches, so the resumed round's module is the uninterrupted one's bit for bit.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rnnsearch.alignments.symmetrisation import COMBINATIONS
from rnnsearch.alignments.words import transposed_pharaoh
from rnnsearch.config import load_config
from rnnsearch.config.data import TrainingFiles, check_reverse
from rnnsearch.errors import UserError
from rnnsearch.files import atomic, model_directory
from rnnsearch.jobs.module_run import train_module
from rnnsearch.text.corpus import is_blank, stream_raw_parallel
from rnnsearch.training.aligner_training import run_config
from rnnsearch.training.console import say
from rnnsearch.training.module_resume import assignments, recorded_settings
from rnnsearch.translation.translator import Translator, load

SELF_TRAINING = "self-training"
FINISHED = "finished"
KEPT_SETTINGS = ("model.aligner_size", "model.aligner_null", "train.aligner_agreement_weight")
"""What a round's modules keep of the starting module's training (`_taught_settings`)."""
CHUNK_PAIRS = 2_000  # pairs aligned at once: a chunk's weights stay well within memory


@dataclass(frozen=True)
class Direction:
    """One of the two models a run trains: its directory and where its round files go."""

    model_dir: Path

    @property
    def folder(self) -> Path:
        return self.model_dir / SELF_TRAINING

    def round_dir(self, number: int) -> Path:
        return self.folder / f"round-{number}"

    def links(self, number: int, corpus: int) -> Path:
        return self.round_dir(number) / f"corpus-{corpus}.links"

    def run_dir(self, number: int) -> Path:
        return self.round_dir(number) / model_directory.ALIGNER_DIR

    @property
    def module(self) -> Path:
        return self.model_dir / model_directory.ALIGNER_DIR / model_directory.ALIGNER_WEIGHTS


def self_train(
    model_dir: str | Path,
    reverse_dir: str | Path,
    *,
    rounds: int,
    symmetrize: str,
    overrides: list[str],
    resume: bool,
) -> int:
    """Run `rounds` rounds of self-training (see the module docstring) on the modules of
    `model_dir` and of `reverse_dir`, a model of the other direction; `overrides` are
    train-aligner's --set for every round's runs. Returns the rounds done."""
    forward, backward = Direction(Path(model_dir)), Direction(Path(reverse_dir))
    _check(forward, backward, rounds=rounds, symmetrize=symmetrize, overrides=overrides, resume=resume)
    corpora = _taught_corpora(forward)
    overrides = [*_taught_settings(forward), *overrides]
    for direction, reverse in ((forward, False), (backward, True)):  # refused now, not after a round's aligning
        run_config(direction.model_dir, [*overrides, _round_data(direction, corpora, 1, reverse=reverse)])
    for direction in (forward, backward):
        direction.folder.mkdir(exist_ok=True)
        start = direction.folder / "round-0.safetensors"
        if not start.exists():
            atomic.atomic_write(start, direction.module.read_bytes())
    for number in range(1, rounds + 1):
        if not all((d.run_dir(number) / FINISHED).exists() for d in (forward, backward)):
            _write_links(forward, backward, corpora, number=number, symmetrize=symmetrize)
            round_data = _round_data(forward, corpora, number, reverse=False)
            if run_config(forward.model_dir, [*overrides, round_data]).train.aligner_agreement_weight:
                _train_together(forward, backward, corpora, number=number, overrides=overrides)
            else:
                for direction, reverse in ((forward, False), (backward, True)):
                    _train_round(direction, corpora, number=number, reverse=reverse, overrides=overrides)
        for direction in (forward, backward):
            _install(direction, number)
        say(f"self-training round {number} of {rounds} done")
    return rounds


def _taught_settings(direction: Direction) -> list[str]:
    """What every round's modules keep of how the model's module was trained (its run's
    settings, `recorded_settings`): their size, their NULL option and the directions'
    agreement; nothing where it was trained with the translation, whose config the rounds
    read. A round's objective and budget are the model's config's, or --set's."""
    recorded = direction.module.parent / model_directory.CONFIG
    if not recorded.is_file():
        return []
    return assignments(recorded_settings(load_config(recorded), KEPT_SETTINGS))


def _taught_corpora(direction: Direction) -> list[TrainingFiles]:
    """The corpora the model's module learnt from, with the links it was taught (its
    run's data section, where train-aligner set one: word links added, say), else the
    model's training corpora."""
    recorded = direction.module.parent / model_directory.CONFIG
    if recorded.is_file():
        return load_config(recorded).data.train_corpora
    return model_directory.load_model_files(direction.model_dir)[0].data.train_corpora


def _check(
    forward: Direction, backward: Direction, *, rounds: int, symmetrize: str, overrides: list[str], resume: bool
) -> None:
    """Refuse, in one line, what a run cannot start from."""
    if rounds < 1:
        raise UserError(f"--rounds {rounds}: give at least one round")
    for assignment in overrides:
        if assignment.partition("=")[0].split(".")[:2] == ["data", "train"]:
            raise UserError(
                f"--set {assignment.partition('=')[0]}: each round trains on its own links; it sets data.train"
            )
    if symmetrize not in COMBINATIONS:
        raise UserError(f"--symmetrize {symmetrize}: choose one of {', '.join(COMBINATIONS)}")
    for direction in (forward, backward):
        if not direction.module.is_file():
            raise UserError(
                f"{direction.model_dir}: no alignment module to start from; "
                f"train one first with `rnnsearch train-aligner {direction.model_dir}`"
            )
        if direction.folder.exists() and not resume:
            raise UserError(f"{direction.folder}: already holds self-training rounds; use --resume to continue them")
        done = _rounds_held(direction)
        if resume and done > rounds:
            raise UserError(
                f"{direction.folder}: holds {done} rounds, and --rounds {rounds} would make round {rounds}'s modules "
                f"the models' again; give --rounds {done} or more to go on"
            )
    check_reverse(
        model_directory.load_model_files(forward.model_dir)[0].data,
        model_directory.load_model_files(backward.model_dir)[0].data,
        name=f"--reverse {backward.model_dir}",
    )


def _rounds_held(direction: Direction) -> int:
    """The highest round whose folder `direction` holds (0: none)."""
    if not direction.folder.is_dir():
        return 0
    numbers = [path.name.removeprefix("round-") for path in direction.folder.glob("round-*") if path.is_dir()]
    return max((int(number) for number in numbers if number.isascii() and number.isdigit()), default=0)


def _write_links(
    forward: Direction, backward: Direction, corpora: list[TrainingFiles], *, number: int, symmetrize: str
) -> None:
    """The round's links of every corpus, for both directions, each file written whole;
    those of a corpus whose two files are both written already are kept (a resumed round)."""

    def written(k: int) -> bool:
        return forward.links(number, k).exists() and backward.links(number, k).exists()

    if all(written(k) for k in range(len(corpora))):
        return
    translator, reverse = load(forward.model_dir, device="cpu"), load(backward.model_dir, device="cpu")
    for k, corpus in enumerate(corpora):
        if written(k):
            continue
        say(f"self-training round {number}: aligning {corpus.src} and {corpus.tgt} with both modules")
        lines = list(_round_lines(translator, reverse, corpus, symmetrize=symmetrize))
        forward.round_dir(number).mkdir(parents=True, exist_ok=True)
        backward.round_dir(number).mkdir(parents=True, exist_ok=True)
        atomic.atomic_write(forward.links(number, k), "".join(f"{line}\n" for line in lines).encode("utf-8"))
        transposed = "".join(f"{transposed_pharaoh(line)}\n" for line in lines)
        atomic.atomic_write(backward.links(number, k), transposed.encode("utf-8"))


def _round_lines(
    translator: Translator, reverse: Translator, corpus: TrainingFiles, *, symmetrize: str
) -> Iterator[str]:
    """One Pharaoh line per pair of `corpus`: its own links where it has a non-empty line
    of them, else both modules' links combined by `symmetrize`; a pair the modules cannot
    align (a blank side, a side longer than a model reads) gets an empty line."""
    for raw in stream_raw_parallel(corpus.src, corpus.tgt, chunk_lines=CHUNK_PAIRS, alignments=corpus.alignments):
        chunk = raw.decode()
        taught = chunk.links or [""] * len(chunk.sources)
        readable = _alignable(translator, reverse, chunk.sources, chunk.targets)
        todo = [k for k, links in enumerate(taught) if is_blank(links) and readable[k]]
        aligned = translator.align(
            [chunk.sources[k] for k in todo],
            [chunk.targets[k] for k in todo],
            reverse=reverse,
            symmetrize=symmetrize,
        )
        lines = [" ".join(links.split()) for links in taught]
        for k, words in zip(todo, aligned, strict=True):
            lines[k] = words.pharaoh()
        yield from lines


def _alignable(translator: Translator, reverse: Translator, sources: list[str], targets: list[str]) -> list[bool]:
    """Which pairs both models read their side of: neither side blank nor longer than the
    model's search.max_source_length pieces (which `align` refuses)."""
    source_pieces = translator.input_kind.pieces(sources)
    target_pieces = reverse.input_kind.pieces(targets)
    return [
        not (is_blank(source) or is_blank(target))
        and forward_length <= translator.search.max_source_length
        and backward_length <= reverse.search.max_source_length
        for source, target, forward_length, backward_length in zip(
            sources, targets, source_pieces, target_pieces, strict=True
        )
    ]


def _round_data(direction: Direction, corpora: list[TrainingFiles], number: int, *, reverse: bool) -> str:
    """The --set of a round's run: its corpora as `direction` reads them, with the round's links."""
    data = [
        {
            "src": str(Path(corpus.tgt if reverse else corpus.src).resolve()),
            "tgt": str(Path(corpus.src if reverse else corpus.tgt).resolve()),
            "alignments": str(direction.links(number, k).resolve()),
        }
        for k, corpus in enumerate(corpora)
    ]
    return f"data.train={json.dumps(data)}"


def _train_round(
    direction: Direction, corpora: list[TrainingFiles], *, number: int, reverse: bool, overrides: list[str]
) -> None:
    """The round's new module of `direction`, trained on the round's links (resumed where
    a run was killed), then marked finished."""
    run_dir = direction.run_dir(number)
    if (run_dir / FINISHED).exists():
        return
    say(f"self-training round {number}: training {direction.model_dir}'s module on the round's links")
    started = (run_dir / model_directory.LAST).exists()
    run = [*overrides, _round_data(direction, corpora, number, reverse=reverse)]
    train_module(direction.model_dir, run, resume=started, run_dir=run_dir)
    atomic.atomic_write(run_dir / FINISHED, b"")


def _train_together(
    forward: Direction, backward: Direction, corpora: list[TrainingFiles], *, number: int, overrides: list[str]
) -> None:
    """Both directions' new modules of the round trained together, agreeing
    (train.aligner_agreement_weight), on the round's links read both ways; then marked finished."""
    run_dir = forward.run_dir(number)
    say(f"self-training round {number}: training both directions' modules together on the round's links")
    started = (run_dir / model_directory.LAST).exists()
    run = [*overrides, _round_data(forward, corpora, number, reverse=False)]
    reverse_run_dir = backward.run_dir(number)
    train_module(
        forward.model_dir,
        run,
        resume=started,
        run_dir=run_dir,
        reverse_dir=backward.model_dir,
        reverse_run_dir=reverse_run_dir,
    )
    for folder in (run_dir, reverse_run_dir):
        atomic.atomic_write(folder / FINISHED, b"")


def _install(direction: Direction, number: int) -> None:
    """The round's module as the model's own (the files loading attaches: its weights and
    the jump table counted from its links, where there is one), each replaced whole."""
    jumps = direction.module.parent / model_directory.ALIGNER_JUMPS
    jumps.unlink(missing_ok=True)
    with atomic.replacing(direction.module) as temporary:
        shutil.copyfile(direction.run_dir(number) / model_directory.ALIGNER_WEIGHTS, temporary)
    counted = direction.run_dir(number) / model_directory.ALIGNER_JUMPS
    if counted.exists():
        with atomic.replacing(jumps) as temporary:
            shutil.copyfile(counted, temporary)
