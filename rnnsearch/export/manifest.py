"""An exported package's manifest: what it holds, and whether a directory is one.

Kept apart from the runtime so that telling a package from a plain model directory, which
every `rnnsearch.load` does, does not load ONNX Runtime.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rnnsearch.errors import UserError

PACKAGE_FOLDER = "onnx"  # beside a model directory's files: the graphs and the manifest
MANIFEST = "manifest.json"
FORMAT = "rnnsearch-onnx"
VERSION = 2  # 2: the fixed-context baseline's c travels as its own tensor, fixed_context
GRAPHS = {"fp32": ("encoder.onnx", "step.onnx"), "int8": ("encoder.int8.onnx", "step.int8.onnx")}


def is_package(directory: str | Path) -> bool:
    """True for a directory `rnnsearch export` wrote (it has the manifest)."""
    return (Path(directory) / PACKAGE_FOLDER / MANIFEST).is_file()


def require_whole_package(directory: str | Path) -> None:
    """Refuse a directory whose package folder is there without its manifest (a damaged or
    half-written package, or a file in the folder's place): run on PyTorch instead, it
    would quietly be another model than the one exported."""
    folder = Path(directory) / PACKAGE_FOLDER
    if folder.exists() and not is_package(directory):
        raise UserError(
            f"{folder}: an exported package without {MANIFEST} (damaged or half-written); export again with "
            f"`rnnsearch export`, or pass --runtime torch to run the model directory's weights on PyTorch"
        )


def read_manifest(directory: str | Path) -> dict:
    """The exported package's manifest, checked to be one this version reads."""
    path = Path(directory) / PACKAGE_FOLDER / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # nested past the stack
        raise UserError(f"{path}: not a readable manifest (corrupt exported package)") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UserError(f"{path}: not an rnnsearch ONNX manifest")
    if manifest.get("version") != VERSION:
        raise UserError(f"{path}: package version {manifest.get('version')!r}; this rnnsearch reads version {VERSION}")
    if not _graph_digests(manifest.get("graphs")):
        raise UserError(
            f"{path}: 'graphs' is not a digest for each graph of fp32 and, with --int8, int8 (corrupt exported package)"
        )
    return manifest


def _graph_digests(graphs: object) -> bool:
    """Whether `graphs` is {precision: {graph file: digest}} for the precisions GRAPHS names, fp32 among them."""
    return (
        isinstance(graphs, dict)
        and "fp32" in graphs
        and all(
            precision in GRAPHS
            and isinstance(digests, dict)
            and set(digests) == set(GRAPHS[precision])
            and all(isinstance(digest, str) for digest in digests.values())
            for precision, digests in graphs.items()
        )
    )


def file_digest(path: Path) -> str:
    with open(path, "rb") as graph:
        return hashlib.file_digest(graph, "sha256").hexdigest()
