"""Where a model's word alignments are read from (its attention α or its alignment
module's β, `ALIGNMENT_SOURCES`) and which row of them stands for each target piece
(`READINGS`); rnnsearch/alignments/words.py turns those rows into word alignments.

The decoder computes one row of α per step: row i is α_i, the attention of the
step that outputs target piece y_i (computed from s_{i-1} in Bahdanau's wiring, from s_i
in Luong's), and the next step takes y_i as its input, with α_{i+1}. Either row can stand
for piece i (`READINGS`): "output" reads row i, "input" reads row i + 1 (the Shift-Att
reading of Chen et al. 2020, for Transformers), "both" the mean of the two. Which one
matches the true alignment is a property of the trained model, not of the formula:
BENCHMARKS.md measures them. Against human English–French alignments, and by eye on
Multi30k, "output" is right (the default, DEFAULT_READING); a model trained to reverse
sequences of symbols attends instead, at the step that outputs a symbol, mostly to the
source of the symbol before it, and there "input" is right.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rnnsearch.alignments.distortion import CONTIGUITY, JumpPrior
from rnnsearch.alignments.symmetrisation import DEFAULT_METHOD
from rnnsearch.errors import ArgumentValueError


def output_rows(alignment: np.ndarray) -> np.ndarray:
    """Target piece i read from row i: α_i, the attention of the step that outputs y_i."""
    return np.asarray(alignment)


def input_rows(alignment: np.ndarray) -> np.ndarray:
    """Target piece i read from row i + 1: α_{i+1}, the attention of the step that takes
    y_i as its input. The last piece ("</s>", part of no word) gets a row of zeros."""
    rows = np.asarray(alignment)
    shifted = np.zeros_like(rows)
    shifted[:-1] = rows[1:]
    return shifted


def both_rows(alignment: np.ndarray) -> np.ndarray:
    """Target piece i read from the mean of rows i and i + 1: the two steps that involve
    y_i, the one that outputs it and the one that takes it as input."""
    return (output_rows(alignment) + input_rows(alignment)) / 2


READINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "output": output_rows,
    "input": input_rows,
    "both": both_rows,
}
DEFAULT_READING = "output"


@dataclass(frozen=True)
class AlignmentSource:
    """Where a model's alignments are read from (`alignment_from`).

    described: what the alignment is, as a result's view says it
    readings: the readings (READINGS) its rows can be read with
    from_module: its rows are the alignment module's β (rnnsearch.model.aligner), which
      the model's members must carry; a teacher-forced pass computes them, after search
      has chosen the pieces, so that search itself is unchanged
    null_mass: what its rows fall short of 1 is their mass on NULL, which a target word
      may prefer to every source word (the module's NULL option); else nothing, the
      source's "</s>" being a column of its own
    prior: the jump prior its word weights are read with (distortion.py): each target
      word's weights become its posterior given its neighbours'; None: read as they are
    combination: how two directions' alignments of it are combined where none is asked
      for (a name of symmetrisation.COMBINATIONS): the measured best (BENCHMARKS.md)
    """

    name: str
    described: str
    readings: tuple[str, ...]
    from_module: bool = False
    null_mass: bool = False
    prior: JumpPrior | None = None
    combination: str = DEFAULT_METHOD


ALIGNMENT_SOURCES: dict[str, AlignmentSource] = {
    source.name: source
    for source in (
        AlignmentSource("attention", "alignment read from the attention α", tuple(READINGS)),
        AlignmentSource(
            "aligner",
            "alignment read from the model's alignment module β, which sees each target word it aligns",
            (DEFAULT_READING,),
            from_module=True,
            null_mass=True,
            prior=CONTIGUITY,
            combination="soft",
        ),
    )
}
"""What a model's alignment can be read from, by name: its attention α (row i of which
`READINGS` may shift), or its alignment module's β, whose row i aligns y_i itself. The
commands, the API, the server and the views read this registry, and branch on what an
entry says, never on its name."""


ATTENTION = ALIGNMENT_SOURCES["attention"]
"""Search's own α: what a result's alignment is read from unless it says otherwise."""


def default_source(*, modules: bool, shown: bool) -> str:
    """What alignments are read from when no source is asked for: the alignment module
    where the model has one (`modules`) and the alignments are `shown`, else the
    attention, search's own α, which costs nothing more."""
    return "aligner" if modules and shown else "attention"


def check_reading(reading: str, source: AlignmentSource) -> None:
    """Refuse a reading that the rows of `source` are not read with (a shifted reading of
    the alignment module's rows, which need none)."""
    if reading not in source.readings:
        raise ArgumentValueError(
            f"reading: {reading!r} does not apply to the {source.described}; read it as "
            f"{' or '.join(map(repr, source.readings))} (or take alignment_from 'attention')"
        )


def reading_rows(alignment: np.ndarray, reading: str) -> np.ndarray:
    """The (target pieces × source pieces) weights of `alignment` as `reading` reads them."""
    if reading not in READINGS:
        raise ValueError(f"unknown alignment reading {reading!r}; choose one of {', '.join(READINGS)}")
    return READINGS[reading](alignment)
