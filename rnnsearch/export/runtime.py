"""An exported model run by ONNX Runtime, with the `encode` and `step` search calls.

`OnnxModel` offers what search uses of a model (`encode`, `step`, `has_alignment`) and
returns decoder states as PyTorch tensors that share the runtime's output memory, so
the batched greedy and beam searches, n-best lists, prefixes, batches in flight and
ensembles run it unchanged: only the arithmetic of a step moves into the graphs.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import google.protobuf.message
import numpy as np
import onnx
import onnxruntime
import torch
from safetensors import SafetensorError, safe_open
from torch import nn

from rnnsearch.errors import UserError
from rnnsearch.export.graphs import names_of_state
from rnnsearch.export.manifest import GRAPHS, MANIFEST, PACKAGE_FOLDER, file_digest, read_manifest
from rnnsearch.files.model_directory import BEST, read_info
from rnnsearch.model.decoder import DecoderState
from rnnsearch.model.settings import ModelConfig
from rnnsearch.model.state import RECURRENT, SOURCE_SIDE


def load_onnx_model(
    directory: str | Path, precision: str, *, config: ModelConfig, target_vocabulary: int, threads: int
) -> OnnxModel:
    """The graphs of an exported package at `precision` (fp32 or int8), each checked
    against the digest the manifest records and against what the package's model
    config fixes (`check_graph`), and the step graph's vocabulary against the package's
    target subword model."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    digests = manifest["graphs"].get(precision)
    if precision not in GRAPHS or digests is None:
        exported = ", ".join(sorted(manifest["graphs"])) or "none"
        hint = " (export it with --int8)" if precision == "int8" else ""
        raise UserError(f"{directory}: no {precision} graphs in this package{hint}; it has {exported}")
    paths = [directory / PACKAGE_FOLDER / name for name in GRAPHS[precision]]
    for path in paths:
        _require_digest(path, digests.get(path.name))
        _require_precision(path, precision)
    _require_exported_here(directory, manifest)
    model = OnnxModel(
        session(paths[0], threads),
        session(paths[1], threads),
        precision=precision,
        parameter_count=_parameter_count(directory / BEST),
    )
    check_graph(paths[0], model.encoder, ENCODER_INPUTS, {})
    check_graph(paths[1], model.step_graph, step_inputs(config), fixed_sizes(config))
    vocabulary = model.step_graph.get_outputs()[0].shape[1]
    if vocabulary != target_vocabulary:
        raise UserError(
            f"{paths[1]}: scores {vocabulary} target pieces but the package's target subword model has "
            f"{target_vocabulary}; the graphs and the model files do not belong together"
        )
    return model


ENCODER_INPUTS = ("src", "src_lengths")


def step_inputs(config: ModelConfig) -> tuple[str, ...]:
    """The step graph's inputs for a model of `config`: the previous tokens, the decoder
    state tensors it has and the rows to score."""
    names = names_of_state(
        lstm=config.decoder.cell == "lstm",
        input_feeding=config.decoder.input_feeding,
        alignment=config.attention != "none",
        coverage=config.attention != "none" and config.attention.coverage,
    )
    return ("prev_tokens", *names, "scored")


def fixed_sizes(config: ModelConfig) -> dict[str, list[int]]:
    """The trailing sizes of step inputs that the config fixes: s_{i-1} (layers × hidden
    size, and the LSTM's cells alike) and h_j (twice the encoder's size when bidirectional)."""
    state = [config.decoder.layers, config.decoder.hidden_size]
    annotation = config.encoder.hidden_size * (2 if config.encoder.bidirectional else 1)
    return {"state": state, "memory": state, "annotations": [annotation]}


def check_graph(
    path: Path, graph: onnxruntime.InferenceSession, inputs: tuple[str, ...], sizes: dict[str, list[int]]
) -> None:
    """Refuse a graph whose inputs are not those a model of the package's config has, or
    whose fixed sizes differ: another model's graph, whatever its digest says."""
    given = {node.name: node.shape for node in graph.get_inputs()}
    if tuple(given) != inputs:
        raise UserError(
            f"{path}: takes {', '.join(given)}, but a model of this package's config.yaml takes {', '.join(inputs)}; "
            "the graphs and the model files do not belong together"
        )
    for name, trailing in sizes.items():
        if name in given and given[name][-len(trailing) :] != trailing:
            raise UserError(
                f"{path}: {name} is {given[name]}, where this package's config.yaml fixes its last sizes at "
                f"{trailing}; the graphs and the model files do not belong together"
            )


_INTEGER_TYPES = {onnx.TensorProto.INT8, onnx.TensorProto.UINT8}


def _require_precision(path: Path, precision: str) -> None:
    """Refuse a graph listed under the other precision: int8 graphs hold int8 weights, fp32 graphs none."""
    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except (OSError, onnx.onnx_cpp2py_export.checker.ValidationError, google.protobuf.message.DecodeError):
        raise UserError(f"{path}: not a readable ONNX graph (corrupt exported package)") from None
    integers = any(tensor.data_type in _INTEGER_TYPES for tensor in graph.initializer)
    if integers != (precision == "int8"):
        found = "int8" if integers else "fp32"
        raise UserError(f"{path}: holds {found} weights but the manifest lists it as {precision}; export again")


def _parameter_count(weights: Path) -> int:
    """The number of weights the package's safetensors file holds (a tied weight once), read from its header."""
    try:
        with safe_open(weights, framework="pt") as tensors:
            return sum(math.prod(tensors.get_slice(name).get_shape()) for name in tensors.keys())
    except (SafetensorError, OSError):
        raise UserError(f"{weights}: corrupt or missing weights in the exported package") from None


def _require_exported_here(directory: Path, manifest: dict) -> None:
    """Refuse graphs other than those exported from the package's own weights, which
    record them (weights exported before the record was kept are taken as they are)."""
    recorded = read_info(directory / BEST).get("graphs")
    if recorded is not None and recorded != manifest["graphs"]:
        raise UserError(
            f"{directory / PACKAGE_FOLDER / MANIFEST}: lists graphs other than those exported from "
            f"{directory / BEST}; the graphs and the model files do not belong together (export again)"
        )


def _require_digest(path: Path, expected: object) -> None:
    if not path.is_file():
        raise UserError(f"{path}: graph missing from the exported package")
    if file_digest(path) != expected:
        raise UserError(f"{path}: does not match the digest in the manifest (changed or corrupt since export)")


_arena_registered = False


def _share_one_arena() -> None:
    """One memory arena for every session of the process, grown by what is asked of it
    rather than in doubling chunks, one arena per session. Without an arena every large
    temporary of a step is fresh memory from the system, which slowed beam search
    (BENCHMARKS.md, "ONNX Runtime packages")."""
    global _arena_registered
    if _arena_registered:
        return
    cpu = onnxruntime.OrtMemoryInfo(
        "Cpu", onnxruntime.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, onnxruntime.OrtMemType.DEFAULT
    )
    same_as_requested = 1  # the arena_extend_strategy; 0 and -1 leave the other settings at their defaults
    onnxruntime.create_and_register_allocator(cpu, onnxruntime.OrtArenaCfg(0, same_as_requested, -1, -1))
    _arena_registered = True


def session(path: Path, threads: int) -> onnxruntime.InferenceSession:
    """A CPU session of the graph in `path`, on `threads` threads; a missing or unreadable
    graph is a one-line error naming it."""
    if not path.is_file():
        raise UserError(f"{path}: graph missing from the exported package")
    _share_one_arena()
    options = onnxruntime.SessionOptions()
    options.add_session_config_entry("session.use_env_allocators", "1")
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Its threads sleep between calls rather than spin: search runs PyTorch operations
    # between steps, whose own threads would otherwise compete with spinning ones for
    # the cores (BENCHMARKS.md, "ONNX Runtime packages").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No memory pattern: the runtime plans and keeps one per set of input shapes, and a
    # search feeds a new set at almost every step (rows retire, sources differ in length),
    # so the plans held memory without being reused (BENCHMARKS.md, "ONNX Runtime packages").
    options.enable_mem_pattern = False
    options.log_severity_level = 3  # errors only: the runtime's notes are not the user's concern
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types, not OSError
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserError(f"{path}: not a loadable ONNX graph ({reason})") from None


class OnnxModel(nn.Module):
    """The encoder and step graphs of an exported package; see the module's docstring."""

    def __init__(
        self,
        encoder: onnxruntime.InferenceSession,
        step: onnxruntime.InferenceSession,
        *,
        precision: str = "fp32",
        parameter_count: int = 0,
    ):
        """precision names the graphs' weights (fp32 or int8); parameter_count is the
        exported model's, which the graphs hold as constants, not as parameters."""
        super().__init__()
        self.precision = precision
        self.parameter_count = parameter_count
        self.encoder = encoder
        self.step_graph = step
        self.state_names = tuple(output.name for output in encoder.get_outputs())
        self.step_inputs = tuple(graph_input.name for graph_input in step.get_inputs())
        self.step_outputs = tuple(output.name for output in step.get_outputs())

    @property
    def graphs(self) -> str | None:
        """The graphs' weights: fp32 or int8."""
        return self.precision

    @property
    def has_alignment(self) -> bool:
        """False for the fixed-context baseline, whose step graph returns no weights."""
        return "weights" in self.step_outputs

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        """src (B, S) ids, src_lengths (B,) → the decoder's initial state over the annotations."""
        outputs = self.encoder.run(None, {"src": _array(src), "src_lengths": _array(src_lengths)})
        given = {name: torch.from_numpy(value) for name, value in zip(self.state_names, outputs)}
        return DecoderState.from_names(given)

    def step(
        self, prev_tokens: torch.Tensor, state: DecoderState, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One decoding step: log-probabilities (of the `scored` rows only, if given), next
        state, alignment row; as RNNSearch.step."""
        rows = state.state.size(0)
        feed = {"prev_tokens": prev_tokens, "scored": torch.arange(rows) if scored is None else scored}
        feed |= {name: getattr(state, name) for name in (*RECURRENT, *SOURCE_SIDE)}
        outputs = self.step_graph.run(None, {name: _array(feed[name]) for name in self.step_inputs})
        returned = {name: torch.from_numpy(value) for name, value in zip(self.step_outputs, outputs)}
        recurrent = {name: returned[f"next_{name}"] for name in RECURRENT if f"next_{name}" in returned}
        changed: dict[str, Any] = {name: recurrent.get(name) for name in RECURRENT}
        new_state = replace(state, **changed)  # the source side stays
        return returned["log_probs"], new_state, returned.get("weights")


def _array(tensor: torch.Tensor) -> np.ndarray:
    """A C-contiguous numpy view of a CPU tensor (a copy only where it is not contiguous)."""
    return np.ascontiguousarray(tensor.numpy())
