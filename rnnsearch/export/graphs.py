"""A trained model as two ONNX graphs: the encoder, and one decoder step.

The encoder graph maps source ids and lengths to the decoder's initial state, the
step graph one state and the previous tokens to the next state and log p(y_i): the
score e_ij, the weights α_ij, the context c_i, the recurrence s_i, the readout and the
log-softmax, all in one graph that a runtime runs without returning to Python.
Search (greedy and beam, n-best, prefixes, batches in flight) stays in rnnsearch and
drives either a PyTorch model or these graphs through the same `encode` and `step`.

Both graphs take any batch and source length. The step graph also takes any number of
rows per sentence: a beam's K hypotheses share their sentence's source side (see
DecoderState), and K is read from the shapes, rows ÷ sentences, so one graph serves
greedy search (K = 1) and every beam size.

A state's tensors are graph inputs and outputs by name; the ones a model lacks (an
LSTM's memory for a GRU, the attentional vector h̃ without input feeding, the
coverage C without coverage, α for the fixed-context baseline) are left out of both
graphs. A covering model's step graph takes C_{i-1} and returns C_i, as it does s_i.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

from rnnsearch import kernels
from rnnsearch.errors import UserError
from rnnsearch.model.decoder import DecoderState
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.model.state import RECURRENT, SOURCE_SIDE
from rnnsearch.reserved import EOS, PAD

OPSET = 17


def state_names(model: RNNSearch) -> tuple[str, ...]:
    """The decoder state tensors this model has, of RECURRENT and SOURCE_SIDE."""
    decoder = model.decoder
    return names_of_state(
        lstm=decoder.rnn.is_lstm,
        input_feeding=decoder.input_feeding,
        alignment=model.has_alignment,
        coverage=decoder.attention.covers,
    )


def names_of_state(*, lstm: bool, input_feeding: bool, alignment: bool, coverage: bool = False) -> tuple[str, ...]:
    """The decoder state tensors of a model with (or without) LSTM cells, input feeding,
    an alignment model and coverage: what its graphs pass from step to step, by name."""
    present = {
        "memory": lstm,
        "feed": input_feeding,
        "coverage": coverage,
        "keys": alignment,
        "fixed_context": not alignment,
    }
    return tuple(name for name in (*RECURRENT, *SOURCE_SIDE) if present.get(name, True))


class EncoderGraph(nn.Module):
    """src (B, S) ids, src_lengths (B,) → the initial decoder state's tensors, by `state_names`."""

    def __init__(self, model: RNNSearch):
        super().__init__()
        self.model = model
        self.names = state_names(model)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        state = self.model.encode(src, src_lengths)
        return tuple(getattr(state, name) for name in self.names)


class StepGraph(nn.Module):
    """prev_tokens (R,), the state's tensors, scored (L,) → log p(y_i) of the scored rows
    (L, V), the next recurrent tensors, and α_i (R, S) where the model has an alignment."""

    def __init__(self, model: RNNSearch):
        super().__init__()
        self.model = model
        self.names = state_names(model)

    def forward(self, prev_tokens: torch.Tensor, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        *fields, scored = tensors
        given = dict(zip(self.names, fields, strict=True))
        rows, sentences = given["state"].size(0), given["padding"].size(0)
        beam = rows // sentences  # K, traced from the shapes
        if not self.model.has_alignment:  # c, one small vector per row, in place of a shared source side
            given["fixed_context"] = given["fixed_context"].index_select(0, torch.arange(rows) // beam)
            beam = 1
        state = DecoderState.from_names(given, beam=beam)
        log_probs, state, weights = self.model.step(prev_tokens, state, scored)
        recurrent = tuple(getattr(state, name) for name in RECURRENT if name in given)
        return log_probs, *recurrent, *(() if weights is None else (weights,))


def step_output_names(model: RNNSearch) -> tuple[str, ...]:
    recurrent = tuple(f"next_{name}" for name in state_names(model) if name in RECURRENT)
    return "log_probs", *recurrent, *(("weights",) if model.has_alignment else ())


def export_encoder(model: RNNSearch, path: Path) -> None:
    """Write the encoder graph of `model` (in eval mode, on the CPU) to `path`."""
    src, lengths = _example_sources()
    names = state_names(model)
    axes = {"src": {0: "sentences", 1: "source_length"}, "src_lengths": {0: "sentences"}}
    axes |= {name: _axes(name, model) for name in names}
    _export(EncoderGraph(model), (src, lengths), path, ["src", "src_lengths"], list(names), axes)


def export_step(model: RNNSearch, path: Path) -> None:
    """Write the decoder step graph of `model` (in eval mode, on the CPU) to `path`.

    Traced with two sentences of a beam of 2 and three of the four rows scored, so that
    no size of the example is 1 or repeats where the graph must stay general.
    """
    with torch.no_grad():
        start = model.encode(*_example_sources()).tile_beams(2)
    names = state_names(model)
    prev = torch.tensor([4, 5, 6, 7])
    scored = torch.tensor([0, 1, 3])
    inputs = (prev, *(getattr(start, name) for name in names), scored)
    input_names = ["prev_tokens", *names, "scored"]
    outputs = step_output_names(model)
    axes = {"prev_tokens": {0: "rows"}, "scored": {0: "scored_rows"}, **{name: _axes(name, model) for name in names}}
    axes |= {"log_probs": {0: "scored_rows"}, "weights": {0: "rows", 1: "source_length"}}
    axes |= {name: _axes(name.removeprefix("next_"), model) for name in outputs if name.startswith("next_")}
    _export(StepGraph(model), inputs, path, input_names, list(outputs), axes)


def _example_sources() -> tuple[torch.Tensor, torch.Tensor]:
    """Two sources of different lengths, each ending in </s>, to trace the graphs with."""
    return torch.tensor([[5, 6, 7, EOS], [8, 9, EOS, PAD]]), torch.tensor([4, 3])


def _axes(name: str, model: RNNSearch) -> dict[int, str]:
    """The dynamic axes of a state tensor: rows, and source positions on the source side
    and in the coverage (the fixed-context baseline's c is one vector per sentence)."""
    if name == "coverage":
        return {0: "rows", 1: "source_length"}
    if name in RECURRENT:
        return {0: "rows"}
    if name == "fixed_context":
        return {0: "sentences"}
    return {0: "sentences", 1: "source_length"}


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Hold back what the exporter's C++ side prints about its own shape inference (the
    packed sequences' operators have none); its errors still arrive as exceptions."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _export(module: nn.Module, args: tuple, path: Path, inputs: list[str], outputs: list[str], axes: dict) -> None:
    """The TorchScript-based exporter: it maps the encoder's packed sequences to ONNX's
    recurrent operators with sequence lengths, which keeps padding out of the recurrence
    as in PyTorch."""
    axes = {name: value for name, value in axes.items() if name in inputs or name in outputs}
    with torch.no_grad(), kernels.use(kernels.ONNX_EXPORT), warnings.catch_warnings(), _quiet_stderr():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(
                module.eval(),
                args,
                str(path),
                dynamo=False,
                input_names=inputs,
                output_names=outputs,
                dynamic_axes=axes,
                opset_version=OPSET,
            )
        except OSError:  # a full disk, say: the file is at fault, not the model, and its writer names it
            raise
        except Exception as error:  # the exporter's own errors: an operator ONNX lacks, say
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise UserError(f"{path.name}: this model cannot be exported to ONNX ({reason})") from None
