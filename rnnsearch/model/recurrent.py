"""The decoder's recurrence s_i = f(s_{i-1}, x_i): stacked GRU or LSTM layers.

The weights are those of `torch.nn.GRU` / `torch.nn.LSTM`, so the same parameters run
two ways: over a whole target sequence in one fused call (possible when the input
does not depend on attention, as in Luong's wiring without input feeding), or one
step at a time when each step's input needs the step before (c_i in the Bahdanau
wiring, h̃_{i-1} with input feeding).

The first layer's input is [E y_{i-1} ; x_i]: the target embedding, whose share of
the input gates is computed for all positions at once, and an optional per-step
part x_i (a context or an attentional vector) whose share is added step by step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from rnnsearch import kernels

CELLS: dict[str, Callable[..., nn.RNNBase]] = {"gru": nn.GRU, "lstm": nn.LSTM}


def gru_update(gi: torch.Tensor, gh: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
    """One GRU update from input gates gi (R, 3D), recurrent gates gh (R, 3D) and h (R, D).

    Same gate order and equations as torch.nn.GRU (Cho et al. 2014).
    """
    i_r, i_z, i_n = gi.chunk(3, dim=1)
    h_r, h_z, h_n = gh.chunk(3, dim=1)
    reset = torch.sigmoid(i_r + h_r)
    update = torch.sigmoid(i_z + h_z)
    candidate = kernels.tanh_(i_n + reset * h_n)
    return candidate + update * (state - candidate)


def lstm_update(
    gi: torch.Tensor, gh: torch.Tensor, state: torch.Tensor, memory: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM update: gates (R, 4D) in torch.nn.LSTM's order (input, forget, cell, output)."""
    i, f, g, o = (gi + gh).chunk(4, dim=1)
    memory = torch.sigmoid(f) * memory + torch.sigmoid(i) * kernels.tanh(g)
    return torch.sigmoid(o) * kernels.tanh(memory), memory


class DecoderRNN(nn.Module):
    """L layers of GRU or LSTM cells with dropout between layers.

    A state is `hidden` (R, L, D), plus `memory` (R, L, D) for an LSTM (None for a GRU).
    """

    def __init__(
        self, cell: str, *, embedding_size: int, step_input_size: int, hidden_size: int, layers: int, dropout: float
    ):
        super().__init__()
        self.rnn = CELLS[cell](
            embedding_size + step_input_size,
            hidden_size,
            num_layers=layers,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.is_lstm = cell == "lstm"
        self.embedding_size = embedding_size
        self.layers = layers
        self.between_layers = nn.Dropout(dropout if layers > 1 else 0.0)

    def embedding_gates(self, embedded: torch.Tensor) -> torch.Tensor:
        """The first layer's input gates from E y_{i-1} alone, for any leading shape (…, E) → (…, G·D)."""
        return kernels.linear(embedded, self._input_columns(0, self.embedding_size), self._parameter("bias_ih_l0"))

    def step_input_weight(self) -> torch.Tensor:
        """The first layer's input weights for the per-step part x_i.

        Taken once per sequence, not once per step, so that backpropagation gathers
        their gradient in one slice instead of one full-size copy per step.
        """
        return self._input_columns(self.embedding_size, None)

    def _parameter(self, name: str) -> torch.Tensor:
        """The recurrence's weight or bias `name` (torch's names: weight_ih_l0, bias_hh_l1, …)."""
        return getattr(self.rnn, name)

    def _input_columns(self, start: int, end: int | None) -> torch.Tensor:
        """Columns of the first layer's input weights: a contiguous copy under autograd, where
        the backward matrix products run faster on it, and a plain view in search, where a
        copy at every decoding step would be wasted work."""
        columns = self._parameter("weight_ih_l0")[:, start:end]
        return columns.contiguous() if torch.is_grad_enabled() else columns

    def initial_memory(self, hidden: torch.Tensor) -> torch.Tensor | None:
        """An LSTM's memory cells start at zero; a GRU has none."""
        return torch.zeros_like(hidden) if self.is_lstm else None

    def step(
        self, first_gates: torch.Tensor, hidden: torch.Tensor, memory: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One time step through all layers, from the first layer's input gates (R, G·D)."""
        outputs, memories = [], []
        below = None
        for layer in range(self.layers):
            if layer == 0:
                gi = first_gates
            else:
                below = self.between_layers(below)
                gi = kernels.linear(below, self._parameter(f"weight_ih_l{layer}"), self._parameter(f"bias_ih_l{layer}"))
            previous = layer_state(hidden, layer)
            gh = kernels.linear(previous, self._parameter(f"weight_hh_l{layer}"), self._parameter(f"bias_hh_l{layer}"))
            if self.is_lstm:
                assert memory is not None, "an LSTM's state has its cells"
                below, cell = lstm_update(gi, gh, previous, memory[:, layer])
                memories.append(cell)
            else:
                below = gru_update(gi, gh, previous)
            outputs.append(below)
        return _stack_layers(outputs), _stack_layers(memories) if self.is_lstm else None

    def sequence(self, embedded: torch.Tensor, hidden: torch.Tensor, memory: torch.Tensor | None) -> torch.Tensor:
        """The top layer's states for every position (B, T, D) in one call; no per-step input."""
        initial: torch.Tensor | tuple[torch.Tensor, torch.Tensor] = hidden.transpose(0, 1).contiguous()
        if self.is_lstm:
            assert memory is not None, "an LSTM's state has its cells"
            initial = (hidden.transpose(0, 1).contiguous(), memory.transpose(0, 1).contiguous())
        outputs, _ = self.rnn(embedded, initial)
        return outputs


def layer_state(states: torch.Tensor, layer: int) -> torch.Tensor:
    """(R, L, D) → layer `layer`'s (R, D); a view whose gradient needs no zero-filled copy
    when there is one layer, the common case in the step loop."""
    return states.squeeze(1) if states.size(1) == 1 else states[:, layer]


def _stack_layers(per_layer: list[torch.Tensor]) -> torch.Tensor:
    """L × (R, D) → (R, L, D); a view when there is one layer."""
    return per_layer[0].unsqueeze(1) if len(per_layer) == 1 else torch.stack(per_layer, 1)
