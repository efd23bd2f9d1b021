"""A prepared dataset's manifest: the layout of its files, what it was built from, the
schema a manifest must follow, and why a dataset no longer serves a config (stale).

A dataset is reused while the inputs (size and modification time), the settings that
shape it and the subword models are those it was built from, and built again, saying
why, when one changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from rnnsearch.config import Config, SubwordConfig
from rnnsearch.config.data import DataConfig, TrainingFiles, files_section
from rnnsearch.errors import UserError
from rnnsearch.sections import Section
from rnnsearch.text.subwords import Subwords

FORMAT = 1  # the layout of the files; a dataset of another layout is built again
MANIFEST = "manifest.json"
SRC_SUBWORDS = "subwords.src.model"
TGT_SUBWORDS = "subwords.tgt.model"
SIDES = ("source", "target")
ARRAYS = tuple(f"{side}.{kind}" for side in SIDES for kind in ("tokens", "offsets", "lengths"))
LINK_ARRAYS = ("links", "links.offsets")  # beside them where a corpus has word alignments (links.py)


def prepared_dir(config: Config, model_dir: str | Path) -> Path:
    """Where the prepared data of `config` lives: data.prepared, else MODEL_DIR/prepared."""
    data = files_section(config.data)
    return Path(data.prepared) if data.prepared else Path(model_dir) / "prepared"


# ---- what a dataset is built from -------------------------------------------------------


def _file_identity(path: str) -> dict[str, Any]:
    """A file as the manifest records it: its absolute path, size and modification time."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    return {"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def inputs(corpora: Sequence[TrainingFiles]) -> list[dict[str, Any]]:
    """The training corpora as the manifest records them, with their word alignments' file if any."""
    return [
        {
            "src": _file_identity(c.src),
            "tgt": _file_identity(c.tgt),
            **({"alignments": _file_identity(c.alignments)} if c.alignments else {}),
        }
        for c in corpora
    ]


def settings(data: DataConfig) -> dict[str, Any]:
    """The config keys that change the prepared pairs, by their dotted names."""
    return {"data.max_length": data.max_length, "data.max_length_ratio": data.max_length_ratio}


def subword_settings(options: SubwordConfig) -> dict[str, Any]:
    """The config keys that change the subword models trained in preparation."""
    return {f"subwords.{key}": value for key, value in options.model_dump().items()}


# ---- what a manifest must hold ----------------------------------------------------------


_TYPES = Literal["uint16", "int32"]
_Digest = Annotated[str, StringConstraints(pattern="^[0-9a-f]{64}$")]


class _FileIdentity(Section):
    path: str
    size: int = Field(ge=0)
    mtime_ns: int


class _Input(Section):
    src: _FileIdentity
    tgt: _FileIdentity
    alignments: _FileIdentity | None = None


class _Filtered(Section):
    corpus: str
    kept: int = Field(ge=0)
    empty: int = Field(ge=0)
    too_long: int = Field(ge=0)
    uneven: int = Field(ge=0)
    unplaced: int = Field(0, ge=0)


class _Settings(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)
    max_length: int = Field(gt=0, alias="data.max_length")


class Manifest(Section):
    """What a manifest must hold, checked before anything it describes is read."""

    format: Literal[1]
    inputs: list[_Input] = Field(min_length=1)
    settings: _Settings
    subwords: list[_Digest] = Field(min_length=2, max_length=2)
    pairs: int = Field(ge=0)
    token_type: _TYPES
    length_type: _TYPES
    file_sizes: dict[Literal[ARRAYS + LINK_ARRAYS], Annotated[int, Field(ge=0)]]  # type: ignore[valid-type]
    # absent from datasets prepared before the arrays had digests, which are read as they are
    file_digests: dict[Literal[ARRAYS + LINK_ARRAYS], _Digest] | None = None  # type: ignore[valid-type]
    filtered: list[_Filtered]

    @model_validator(mode="after")
    def _every_array(self) -> Manifest:
        names = ARRAYS + LINK_ARRAYS if any(i.alignments for i in self.inputs) else ARRAYS
        for field in (self.file_sizes, self.file_digests):
            if field is not None and set(field) != set(names):
                raise ValueError(f"file_sizes and file_digests must name {', '.join(names)}")
        return self


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a prepared dataset; None where there is none or it is unreadable
    (no dataset, or an interrupted one)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: arrays nested past the stack
        return None
    return manifest if isinstance(manifest, dict) else None


def manifest_problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a manifest, on one line (its first problems), or None."""
    try:
        Manifest.model_validate(manifest)
    except ValidationError as error:
        problems = [f"{'.'.join(str(part) for part in e['loc']) or 'manifest'}: {e['msg']}" for e in error.errors()[:3]]
        return "; ".join(problems)
    return None


# ---- whether a dataset serves a config ---------------------------------------------------


def stale_reason(directory: Path, config: Config, subwords: tuple[Subwords, Subwords] | None = None) -> str | None:
    """Why the dataset in `directory` cannot serve `config`, or None if it can.

    `subwords`, when given (a resumed or fine-tuning run), are the models the data must be encoded
    with; otherwise the data's own models must come from today's subword settings.
    """
    manifest = read_manifest(directory)
    if manifest is None:
        return "there is none yet"
    if manifest.get("format") != FORMAT:
        return f"{directory} was prepared in another layout"
    problem = manifest_problem(manifest)
    if problem is not None:
        return f"{directory / MANIFEST} is not a valid manifest ({problem})"
    return _changed(manifest, files_section(config.data), config.subwords, subwords) or missing_array(
        directory, manifest
    )


def _changed(
    manifest: dict[str, Any], data: DataConfig, options: SubwordConfig, subwords: tuple[Subwords, Subwords] | None
) -> str | None:
    """The first input, setting or subword model that differs from the manifest's."""
    current_inputs = inputs(data.train_corpora)
    if [_paths(i) for i in manifest["inputs"]] != [_paths(i) for i in current_inputs]:
        return "data.train names other files"
    for recorded, current in zip(manifest["inputs"], current_inputs):
        for side in current:
            if recorded[side] != current[side]:
                return f"{current[side]['path']} changed since it was prepared"
    wanted = settings(data) if subwords else {**settings(data), **subword_settings(options)}
    for key, value in wanted.items():
        recorded = manifest["settings"].get(key, "not set")
        if recorded != value:
            return f"{key} changed ({recorded} → {value})"
    if subwords and [s.digest for s in subwords] != manifest["subwords"]:
        return "the model's subword models are not those that encoded it"
    return None


def _paths(recorded: dict[str, Any]) -> tuple[str | None, ...]:
    """The files of a corpus as the manifest records it: source, target, alignments or None."""
    return tuple(recorded[side]["path"] if recorded.get(side) else None for side in ("src", "tgt", "alignments"))


def missing_array(directory: Path, manifest: dict[str, Any]) -> str | None:
    """A data file whose size is not the manifest's (deleted or cut short), if any."""
    for name, size in manifest["file_sizes"].items():
        path = directory / name
        if not path.is_file() or path.stat().st_size != size:
            return f"{path} is missing or has the wrong size"
    return None


def changed_array(directory: Path, manifest: dict[str, Any]) -> str | None:
    """A data file whose bytes are not those the manifest's digest records, if any (one
    read of every array, once, as the first epoch reads them anyway)."""
    for name, expected in (manifest.get("file_digests") or {}).items():
        with open(directory / name, "rb") as data:
            if hashlib.file_digest(data, "sha256").hexdigest() != expected:
                return f"{directory / name}: its bytes do not match the manifest's digest (changed or corrupt)"
    return None
