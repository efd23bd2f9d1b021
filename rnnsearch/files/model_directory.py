"""The model directory: its layout, and the files every command reads and writes.

    config.yaml                      the validated config the model was built from
    subwords.src.model / .tgt.model  SentencePiece models (no source model for speech)
    best.safetensors                 weights of the best validation so far (every weights file
                                     records a digest of its tensors, and those of config.yaml
                                     and the subword models it was trained with)
    last.safetensors                 weights + optimizer + RNG + data position: resume point
    metrics.jsonl, learning_curve.png
    alignments/step{N}-{k}.png       heatmaps of the first validation sentences, per validation
    checkpoints/step{N}.safetensors  with train.keep_checkpoints: the weights of the last
                                     validations (N: the step, 7 digits), for `rnnsearch average`
    prepared/                        the encoded training data (rnnsearch.prepared), unless
                                     data.prepared puts it elsewhere
    aligner/                         an alignment module added by `rnnsearch train-aligner`
                                     (rnnsearch.training.aligner_training); its weights.safetensors
                                     is attached on loading, while it matches the translation weights,
                                     and its jumps.json, the jump table counted from its links
                                     (rnnsearch.alignments.counted_jumps), while it matches the module

Everything is safetensors, YAML or JSON: no pickle. Every file is written to a
temporary and renamed into place (rnnsearch.files.atomic), so a kill at any moment leaves the
previous complete file, never a half-written one; the temporaries a kill leaves behind
are removed when training starts again. metrics.jsonl is appended to, a row at a time;
a kill in the middle of an append can leave a torn last row, which the next read drops.

This module is what training, translation, the server, export and the benchmarks share:
the file names, the config and subword models, and weights in safetensors. What only
training reads and writes (the resume point's optimizer state, the kept checkpoints,
the metrics log, starting from another model) is in rnnsearch.training.checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file as save_safetensors_file

from rnnsearch.alignments.counted_jumps import JumpTable, check_weights
from rnnsearch.config import Config, load_config
from rnnsearch.errors import UserError
from rnnsearch.files import atomic
from rnnsearch.files.atomic import atomic_write, replacing
from rnnsearch.model.seq2seq import RNNSearch, build_aligner, build_model
from rnnsearch.model.settings import MAX_WIDTH
from rnnsearch.text.subwords import Subwords

CONFIG = "config.yaml"
SRC_SUBWORDS = "subwords.src.model"
TGT_SUBWORDS = "subwords.tgt.model"
BEST = "best.safetensors"
LAST = "last.safetensors"
METRICS = "metrics.jsonl"
LEARNING_CURVE = "learning_curve.png"
ALIGNMENTS = "alignments"
KEPT = "checkpoints"
ALIGNER_DIR = "aligner"
ALIGNER_WEIGHTS = "weights.safetensors"
ALIGNER_JUMPS = "jumps.json"

log = logging.getLogger(__name__)


def write_tensors(path: Path, tensors: dict[str, torch.Tensor], info: dict[str, Any]) -> None:
    """A safetensors file of `tensors`, with `info` as JSON in its metadata.

    Streamed from the tensors' own memory to the file: building the file in memory
    first would hold two extra copies of weights and optimizer state at every save
    (BENCHMARKS.md, "Where the time goes, and how close to the machine's ceiling").
    """
    tensors = {name: t.detach().cpu().contiguous() for name, t in tensors.items()}
    metadata = {"info": json.dumps(info), "digest": tensors_digest(tensors)}
    with replacing(path) as temporary:
        try:
            save_safetensors_file(tensors, temporary, metadata=metadata)
        except SafetensorError as error:  # a full disk, say, reported in safetensors' own words
            raise atomic.write_failure(path, error) from None


def tensors_digest(tensors: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every tensor's name, type, shape and bytes, in name order: safetensors
    keeps no checksum, so a flipped bit in a weight would otherwise load as another model."""
    digest = hashlib.sha256()
    for name in sorted(tensors):
        tensor = tensors[name].detach().cpu().contiguous()
        digest.update(f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().data)
    return digest.hexdigest()


def read_tensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The tensors of `path` and their info, checked against the digest written with them
    (files written before the digest was kept are taken as they are)."""
    if not path.is_file():
        raise UserError(f"{path}: checkpoint missing")
    try:
        with safe_open(path, framework="pt") as checkpoint:
            tensors = {name: checkpoint.get_tensor(name) for name in checkpoint.keys()}
            metadata = checkpoint.metadata() or {}
    except (SafetensorError, OSError):
        raise UserError(f"{path}: corrupt checkpoint (not a readable safetensors file)") from None
    info = _info(metadata, path)
    if "digest" in metadata and tensors_digest(tensors) != metadata["digest"]:
        raise UserError(f"{path}: corrupt checkpoint (its tensors do not match the digest written with them)")
    return tensors, info


def stored_digest(path: Path) -> str | None:
    """The digest written with the tensors of `path` (None for files written before it was kept)."""
    return _metadata(path).get("digest")


def read_info(path: Path) -> dict[str, Any]:
    """The info stored with the tensors of `path`, without reading the tensors."""
    return _info(_metadata(path), path)


def _metadata(path: Path) -> dict[str, str]:
    """The metadata of the safetensors file `path`, without reading its tensors."""
    if not path.is_file():
        raise UserError(f"{path}: checkpoint missing")
    try:
        with safe_open(path, framework="pt") as checkpoint:
            return checkpoint.metadata() or {}
    except (SafetensorError, OSError):
        raise UserError(f"{path}: corrupt checkpoint (not a readable safetensors file)") from None


def _info(metadata: dict[str, str], path: Path) -> dict[str, Any]:
    """The info a safetensors file's metadata holds as JSON, checked to be an object."""
    try:
        info = json.loads(metadata.get("info", "{}"))
    except (ValueError, RecursionError):  # RecursionError: arrays nested past the stack
        info = None
    if not isinstance(info, dict):
        raise UserError(f"{path}: corrupt checkpoint (its info is not a JSON object)")
    return info


def _distinct_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict with each tensor once: a tied weight (one tensor under two names)
    is kept under its first name only, since safetensors stores no aliases."""
    seen: set[int] = set()
    distinct = {}
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            distinct[name] = tensor
    return distinct


def assign_weights(
    model: torch.nn.Module,
    tensors: dict[str, torch.Tensor],
    path: Path,
    *,
    prefix: str = "model.",
    described: str = "the model described by config.yaml",
) -> None:
    """Copy the `prefix`* tensors into `model`; they must match its parameters exactly."""
    weights = {name[len(prefix) :]: t for name, t in tensors.items() if name.startswith(prefix)}
    expected = _distinct_weights(model)
    if set(weights) != set(expected) or any(weights[n].shape != expected[n].shape for n in expected):
        raise UserError(f"{path}: weights do not match {described}")
    model.load_state_dict(weights, strict=False)  # the names left out are aliases of names given


def load_weights(model: torch.nn.Module, path: Path) -> dict[str, Any]:
    """Load `path`'s weights into `model`; return the info stored with them."""
    tensors, info = read_tensors(path)
    assign_weights(model, tensors, path)
    return info


def files_record(directory: Path, src_subwords: Subwords | None, tgt_subwords: Subwords) -> dict[str, Any]:
    """What weights record of the files they belong with, in their info: the digests of
    the subword models they are trained with and of the directory's config.yaml, so that
    a model directory whose subword models were swapped for others of the same size, or
    whose config was cut short or changed, is refused rather than run as another model."""
    return {
        "subwords": {"src": src_subwords and src_subwords.digest, "tgt": tgt_subwords.digest},
        "config": hashlib.sha256((directory / CONFIG).read_bytes()).hexdigest(),
    }


def check_files(info: dict[str, Any], path: Path, src_subwords: Subwords | None, tgt_subwords: Subwords) -> None:
    """Refuse subword models or a config.yaml other than those the weights in `path`
    record (weights written before the record was kept have none, and are taken as they are)."""
    recorded = info.get("subwords")
    if isinstance(recorded, dict):
        for side, name, subwords in (("src", SRC_SUBWORDS, src_subwords), ("tgt", TGT_SUBWORDS, tgt_subwords)):
            if subwords is not None and recorded.get(side) not in (None, subwords.digest):
                raise UserError(
                    f"{path.parent / name}: not the subword model {path.name} was trained with (its digest "
                    "differs from the one the weights record); put back the model directory's own"
                )
    config = path.parent / CONFIG
    if "config" in info and hashlib.sha256(config.read_bytes()).hexdigest() != info["config"]:
        raise UserError(
            f"{config}: not the config {path.name} was written with (its digest differs from the one the weights "
            "record: damaged or edited); put back the model directory's own"
        )


def model_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {f"model.{name}": t for name, t in _distinct_weights(model).items()}


def save_model_files(directory: Path, config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords) -> None:
    """The config and the subword models; a speech model has no source subwords."""
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write(directory / CONFIG, config.to_yaml().encode("utf-8"))
    if src_subwords is not None:
        atomic_write(directory / SRC_SUBWORDS, src_subwords.model_bytes)
    atomic_write(directory / TGT_SUBWORDS, tgt_subwords.model_bytes)


def load_model_files(directory: str | Path) -> tuple[Config, Subwords | None, Subwords]:
    """The config and subword models of a model directory (no source subwords for speech)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: no such model directory")
    config = load_config(directory / CONFIG)
    src_subwords = Subwords.load(directory / SRC_SUBWORDS) if config.data.source_subwords else None
    return config, src_subwords, Subwords.load(directory / TGT_SUBWORDS)


def weights_path(directory: str | Path) -> Path:
    """The weights a trained model translates with: the best validation, else the last."""
    directory = Path(directory)
    best = directory / BEST
    return best if best.exists() else directory / LAST


def source_and_target_sizes(
    config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords
) -> tuple[int, int, bool]:
    """build_model's size arguments: source vocabulary (or feature size), target vocabulary, vector input."""
    if config.data.vector_size is not None:
        return config.data.vector_size, len(tgt_subwords), True
    if src_subwords is None:
        raise ValueError("a model that reads subword ids needs its source subword model")
    return len(src_subwords), len(tgt_subwords), False


def require_finite(
    tensors: dict[str, torch.Tensor], path: Path, *, refusal: str = "these weights cannot translate"
) -> None:
    """Refuse tensors read from `path` with a NaN or an infinity, naming the first such
    tensor and ending in `refusal`: a model with one cannot translate (its scores are NaN,
    and search would fail or give empty output), and a run resumed from one would train
    on NaN from its first update."""
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise UserError(f"{path}: tensor {name} holds NaN or infinite values; {refusal} (did training diverge?)")


def load_model(
    directory: str | Path,
    config: Config,
    src_subwords: Subwords | None,
    tgt_subwords: Subwords,
    *,
    aligner: bool = True,
) -> RNNSearch:
    """The model a model directory translates with (its best weights, else its last, with
    a warning on the `rnnsearch.files.model_directory` logger, which Python prints as one line on
    standard error unless logging is configured), its weights checked to be finite, on
    the CPU, in eval mode; its files are already loaded. With `aligner`, the alignment
    module `train-aligner` added is attached (`attach_aligner`)."""
    model = build_model(config.model, *source_and_target_sizes(config, src_subwords, tgt_subwords))
    path = weights_path(directory)
    if path.name == LAST and path.exists():
        log.warning(f"{directory}: no {BEST}; translating with {LAST}, the weights of the last checkpoint")
    check_files(load_weights(model, path), path, src_subwords, tgt_subwords)
    require_finite({f"model.{name}": tensor for name, tensor in model.state_dict().items()}, path)
    if aligner:
        attach_aligner(model, Path(directory) / ALIGNER_DIR, path)
    return model.eval()


def attach_aligner(model: RNNSearch, folder: Path, translation: Path) -> None:
    """The alignment module in `folder` (a model directory's aligner/, trained there by
    `rnnsearch train-aligner` on the weights of `translation`), with the jump table counted
    from its links where there is one, in place of any the model was trained with. A module
    trained on other weights (the model trained on after it) reads annotations it never
    saw: it is left out, with a warning, and the model aligns as it would without it."""
    path = folder / ALIGNER_WEIGHTS
    if not path.is_file():
        return
    tensors, info = read_tensors(path)
    if info.get("translation") != stored_digest(translation):
        log.warning(
            f"{path}: trained on other weights than {translation.name}, so left out; train it again with "
            f"`rnnsearch train-aligner {folder.parent}` after deleting {folder}"
        )
        return
    require_finite(tensors, path)
    size = info.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_WIDTH:
        raise UserError(f"{path}: corrupt alignment module (its info has no size from 1 to {MAX_WIDTH})")
    null = info.get("null", False)  # modules written before the NULL option have none
    if not isinstance(null, bool):
        raise UserError(f"{path}: corrupt alignment module (its info's null is not true or false)")
    module = build_aligner(model, size=size, null=null)
    assign_weights(module, tensors, path, prefix="aligner.", described="the alignment module they are for")
    module.jumps = read_jumps(path.parent, stored_digest(path))
    model.aligner = module


def write_jumps(folder: Path, table: JumpTable, *, pairs: int, jumps: int) -> None:
    """`table`, counted from a module's links of `pairs` pairs (`jumps` jumps), as the
    jumps.json of the module in `folder`, recording the digest of its weights."""
    record = {
        "module": stored_digest(folder / ALIGNER_WEIGHTS),
        "pairs": pairs,
        "jumps": jumps,
        "weights": list(table.weights),
    }
    atomic_write(folder / ALIGNER_JUMPS, (json.dumps(record, indent=1) + "\n").encode("utf-8"))


def read_jumps(folder: Path, module: str | None) -> tuple[float, ...] | None:
    """The weights of the jump table in `folder`'s jumps.json, counted from the links of
    the module whose weights' digest is `module`; None where there is none, or where it
    was counted from other weights (the module trained again since), with a warning."""
    path = folder / ALIGNER_JUMPS
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        weights = tuple(record["weights"])
        check_weights(weights)
    except RecursionError:
        raise UserError(
            f"{path}: corrupt jump table (nested too deep); delete it to read with the fixed prior"
        ) from None
    except (ValueError, TypeError, KeyError) as error:
        raise UserError(f"{path}: corrupt jump table ({error}); delete it to read with the fixed prior") from None
    if record.get("module") != module:
        log.warning(f"{path}: counted from other weights than {ALIGNER_WEIGHTS}, so left out")
        return None
    return weights


def require_new_output(source: Path, out_dir: Path, *, made_by: str, product: str) -> None:
    """Refuse an output directory that is `source` itself or already holds a model, whose
    files the new `product` (an average, a package) would silently replace; `made_by`
    says what is done to `source` (averaged, exported)."""
    if out_dir.resolve() == source.resolve():
        raise UserError(f"{out_dir}: is the model directory being {made_by}; write the {product} to another")
    if any((out_dir / name).exists() for name in (CONFIG, BEST, LAST)):
        raise UserError(f"{out_dir}: already holds a model; write the {product} to another directory")
