"""Loading and assembling the models a translator runs: a model directory's PyTorch
model, an exported package's graphs on ONNX Runtime, or an ensemble of either.

The model directory's files are read by rnnsearch.files.model_directory; this module decides
what runs them (PyTorch or ONNX Runtime, which device, which precision) and puts the
members of an ensemble together, refusing members that cannot decode together.
`rnnsearch.translation.translator.load` wraps what it assembles in a Translator.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import torch

from rnnsearch.arguments import checked_count, checked_real
from rnnsearch.config import Config
from rnnsearch.config.search import RUNTIMES, SEARCH_PRECISIONS, SearchConfig
from rnnsearch.devices import resolve_device
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError, UserError
from rnnsearch.export.manifest import is_package, require_whole_package
from rnnsearch.files import model_directory
from rnnsearch.files.model_directory import load_model, load_model_files
from rnnsearch.model.ensemble import Ensemble, side_numbers
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.search.contract import SearchModule
from rnnsearch.text.subwords import Subwords

ModelDirs = str | os.PathLike | Sequence[str | os.PathLike]
ModelFiles = tuple[Config, Subwords | None, Subwords]


@dataclass(frozen=True)
class Assembled:
    """A model ready to search, with what reads its input and output.

    config: the (first) member's config, its search section overridden as asked
    source_sides: the source subword models by side number (see Ensemble), side 0
      first; [None] for a speech model, which reads audio
    exported: whether a member is an exported package (whose graphs or weights carry
      no alignment module)
    described: the model as a message names it: its directory, or an ensemble's
    """

    model: SearchModule
    config: Config
    source_sides: list[Subwords | None]
    tgt_subwords: Subwords
    exported: bool = False
    described: str = "this model"


def assemble(
    model_dir: ModelDirs,
    device: str = "auto",
    precision: str | None = None,
    batch_sentences: int | None = None,
    *,
    runtime: str | None = None,
    coverage_penalty: float | None = None,
    search: Mapping[str, object] | None = None,
) -> Assembled:
    """The model in `model_dir`, or the ensemble of the models in a list of directories,
    as `rnnsearch.translation.translator.load` documents its arguments."""
    search = _search_overrides(precision, batch_sentences, runtime, coverage_penalty, search)
    SearchConfig().overridden(search)  # refused before any model loads
    given = [model_dir] if isinstance(model_dir, (str, os.PathLike)) else _model_dirs(model_dir)
    directories = [Path(directory) for directory in given]
    packages = [is_package(directory) for directory in directories]
    on_onnx = [_runs_on_onnx(d, package, runtime, precision) for d, package in zip(directories, packages)]
    target = torch.device("cpu") if all(on_onnx) and device == "auto" else resolve_device(device)
    if any(on_onnx) and target.type != "cpu":
        raise UserError(f"device {device!r}: an exported package runs on the CPU; pass --runtime torch for a GPU")
    if any(on_onnx):
        search["precision"] = "fp32"  # the graphs' own precision is chosen as they load
    elif precision is not None:
        search["precision"] = precision
    files = [load_model_files(directory) for directory in directories]
    _require_compatible(directories, files)
    graph_precision = precision if precision == "int8" else "fp32"
    models = [
        _load_onnx(directory, *member, graph_precision) if onnx else load_model(directory, *member).to(target)
        for directory, member, onnx in zip(directories, files, on_onnx)
    ]
    config, src_subwords, tgt_subwords = files[0]
    config = config.model_copy(update={"search": config.search.overridden(search)})
    if isinstance(model_dir, (str, os.PathLike)):
        return Assembled(models[0], config, [src_subwords], tgt_subwords, any(packages), str(directories[0]))
    ensemble, source_sides = _ensemble(models, [src_subwords for _, src_subwords, _ in files])
    described = f"the ensemble of {', '.join(map(str, directories))}"
    return Assembled(ensemble, config, source_sides, tgt_subwords, any(packages), described)


def _search_overrides(
    precision: str | None,
    batch_sentences: int | None,
    runtime: str | None,
    coverage_penalty: float | None,
    settings: Mapping[str, object] | None,
) -> dict[str, object]:
    """The search settings a load overrides, `settings` and the keywords of their own but
    precision (which an exported package decides), the keywords' types checked here and
    their values with the rest by `SearchConfig.overridden`; and the precision and the
    runtime asked for, checked."""
    if settings is not None and not (isinstance(settings, Mapping) and all(isinstance(k, str) for k in settings)):
        raise ArgumentTypeError(f"search: expected a mapping of search keys to values, got {type(settings).__name__}")
    search: dict[str, object] = dict(settings or {})
    if precision is not None and precision not in SEARCH_PRECISIONS:
        raise UserError(f"precision {precision!r}: choose from {', '.join(SEARCH_PRECISIONS)}")
    if batch_sentences is not None:
        search["batch_sentences"] = checked_count(batch_sentences, "batch_sentences")
    if coverage_penalty is not None:
        search["coverage_penalty"] = checked_real(coverage_penalty, "coverage_penalty")
    if runtime is not None and runtime not in RUNTIMES:
        raise UserError(f"runtime {runtime!r}: choose from {', '.join(RUNTIMES)}")
    return search


def _ensemble(models: list[SearchModule], sources: list[Subwords | None]) -> tuple[Ensemble, list[Subwords | None]]:
    """The members as one Ensemble, and the source subword models by side: members whose
    source subword models are the same read the same side."""
    members = cast(list[RNNSearch], models)  # an exported package's model stands in for an RNNSearch
    keys = [None if subwords is None else subwords.model_bytes for subwords in sources]
    sides = side_numbers(keys, [model.has_alignment for model in members])
    by_side = {side: subwords for side, subwords in zip(sides, sources)}
    return Ensemble(members, sides).eval(), [by_side[side] for side in range(len(by_side))]


def _runs_on_onnx(directory: Path, package: bool, runtime: str | None, precision: str | None) -> bool:
    """Whether the model in `directory` (an exported `package` or not) runs on ONNX
    Runtime, refusing a runtime or a precision it cannot run with."""
    if runtime != "torch":
        require_whole_package(directory)
    if runtime == "torch":
        if precision == "int8":
            raise UserError("precision int8: runs on an exported package's graphs, not with --runtime torch")
        return False
    if runtime == "onnx" or precision == "int8":
        if not package:
            asked = "runtime onnx" if runtime == "onnx" else "precision int8"
            command = f"rnnsearch export {directory} -o OUT_DIR" + (" --int8" if precision == "int8" else "")
            raise UserError(f"{asked}: {directory} is not an exported package; write one with `{command}`")
    if package and precision == "bf16":
        raise UserError(
            f"precision bf16: {directory} runs on ONNX Runtime at fp32 or int8; pass --runtime torch for bf16"
        )
    return package


def _load_onnx(
    directory: Path, config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords, precision: str
) -> SearchModule:
    """The graphs of an exported package, on as many threads as PyTorch uses, its subword
    models checked to be those its weights record."""
    from rnnsearch.export.runtime import load_onnx_model

    best = Path(directory) / model_directory.BEST
    model_directory.check_files(model_directory.read_info(best), best, src_subwords, tgt_subwords)
    return load_onnx_model(
        directory,
        precision,
        config=config.model,
        target_vocabulary=len(tgt_subwords),
        threads=torch.get_num_threads(),
    ).eval()


def _model_dirs(model_dirs: object) -> list[str | os.PathLike]:
    """A checked, non-empty list of model directories."""
    if not isinstance(model_dirs, (list, tuple)):
        raise ArgumentTypeError(f"model_dir: expected a str, a path or a list of them, got {type(model_dirs).__name__}")
    if not model_dirs:
        raise ArgumentValueError("model_dir: an empty list; an ensemble needs at least one model directory")
    for index, directory in enumerate(model_dirs):
        if not isinstance(directory, (str, os.PathLike)):
            raise ArgumentTypeError(f"model_dir[{index}]: expected a str or a path, got {type(directory).__name__}")
    return list(model_dirs)


def _require_compatible(directories: list[Path], files: list[ModelFiles]) -> None:
    """Refuse members that cannot decode together, naming the first that differs from the first member."""
    first, (first_config, _, first_target) = directories[0], files[0]
    for directory, (config, _, target) in zip(directories[1:], files[1:]):
        if config.data.reads != first_config.data.reads:
            kinds = (config.data.reads, first_config.data.reads)
            raise UserError(f"{directory}: reads {kinds[0]} but {first} reads {kinds[1]}; an ensemble reads one kind")
        if target.model_bytes != first_target.model_bytes:
            raise UserError(
                f"{directory}: its target subword model is not that of {first}; "
                "the members of an ensemble must share the target vocabulary"
            )
        settings = config.data.input_settings()
        differing = [key for key, value in settings.items() if value != first_config.data.input_settings()[key]]
        if differing:
            raise UserError(
                f"{directory}: its data.{differing[0]} differ from those of {first}; "
                "the members of an ensemble must read the same input vectors"
            )
