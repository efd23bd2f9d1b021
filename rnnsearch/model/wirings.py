"""The order of a decoder step: the registry of wirings.

A wiring says when the decoder attends, updates its state and reads out; the decoder
(decoder.py) holds the parts it wires: the embedding E, the alignment model, the
recurrence f, the readout g and the output layer. Adding a wiring means adding one
class here and one entry in WIRINGS; the config and the model builder read the registry.

Bahdanau et al. (2015), section 3.1 and appendix A.2 — attend with s_{i-1}:

    e_ij = a(s_{i-1}, h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    s_i  = f(s_{i-1}, [E y_{i-1} ; c_i])
    t_i  = g(U_o s_i + V_o E y_{i-1} + C_o c_i);  p(y_i | y_<i, x) = softmax(W_o t_i)

Luong et al. (2015), section 3 — update first, attend with s_i:

    s_i  = f(s_{i-1}, [E y_{i-1} ; h̃_{i-1}])     (h̃_{i-1} only with input feeding)
    e_ij = a(s_i, h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    h̃_i  = tanh(W_c [c_i ; s_i]);  p(y_i | y_<i, x) = softmax(W_s h̃_i)

With coverage, both wirings' a(·, h_j) also reads C_{i-1,j}, and a step leaves
C_i = C_{i-1} + α_i in the state for the next one (docs/model.md §3); in teacher
forcing every position then waits for the one before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import torch

from rnnsearch import kernels
from rnnsearch.model.attention import Attention, FixedContext
from rnnsearch.model.recurrent import DecoderRNN, layer_state
from rnnsearch.model.scores import AdditiveScore
from rnnsearch.model.state import DecoderState


class WiredParts(Protocol):
    """The parts a wiring wires, as the decoder (decoder.py) holds them: the alignment
    model, the recurrence f, the readout g and the wiring itself."""

    attention: Attention | FixedContext
    rnn: DecoderRNN
    wiring: Wiring

    def attend(self, query: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """c_i and α_i for the queries."""
        ...

    def readout(self, state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The readout t_i or h̃_i."""
        ...


Step = tuple["DecoderState", torch.Tensor, "torch.Tensor | None", "torch.Tensor | None"]
"""A step's new state, c_i, α_i (None without attention) and h̃_i (Luong's readout; None for Bahdanau's)."""


class BahdanauWiring:
    """Attend with s_{i-1}, then s_i = f(s_{i-1}, [E y_{i-1} ; c_i]); t_i reads y_{i-1}, s_i and c_i."""

    name = "bahdanau"
    default_readout = "maxout"  # the paper's deep output
    input_feeding = False

    def __init__(self, input_feeding: bool = False):
        if input_feeding:
            raise ValueError("input_feeding applies to the luong wiring only")

    @staticmethod
    def step_input_size(annotation_size: int, readout_size: int) -> int:
        """The per-step part of the recurrence's input: c_i."""
        return annotation_size

    @staticmethod
    def readout_input_size(embedding_size: int, annotation_size: int, hidden_size: int) -> int:
        """[s_i ; E y_{i-1} ; c_i]."""
        return hidden_size + embedding_size + annotation_size

    @staticmethod
    def readout_inputs(state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> list[torch.Tensor]:
        return [state, embedded, context]

    def step(
        self, decoder: WiredParts, gates: torch.Tensor, embedded: torch.Tensor, state: DecoderState, step_weight
    ) -> Step:
        """Attend with s_{i-1}, then update; the readout is left to the caller, which runs it
        for all positions at once in training."""
        context, weights = decoder.attend(state.top, state)
        hidden, memory = decoder.rnn.step(gates + kernels.linear(context, step_weight), state.state, state.memory)
        return replace(state, state=hidden, memory=memory, coverage=covered(state, weights)), context, weights, None

    def teacher_forced(
        self, decoder: WiredParts, embedded: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Readouts t_i (B, T, l) and α (B, T, S) for every target position."""
        fused = kernels.active().attentive_gru
        score = fused_score(decoder, state)
        if fused is not None and score is not None:
            rnn = decoder.rnn
            coverage_layer = score.coverage_layer
            fused_tops, fused_contexts, fused_weights = fused(
                rnn.embedding_gates(embedded),
                state.top,
                state.keys,
                state.annotations,
                state.padding,
                query_weight=score.query_layer.weight,
                v=score.v.weight[0],
                context_weight=rnn.step_input_weight(),
                weight_hh=rnn.rnn.weight_hh_l0,
                bias_hh=rnn.rnn.bias_hh_l0,
                coverage=state.coverage,
                coverage_weight=None if coverage_layer is None else coverage_layer.weight[:, 0],  # V_a
            )
            return decoder.readout(fused_tops, embedded, fused_contexts), fused_weights
        tops, contexts, weights, _ = step_by_step(self, decoder, embedded, state)
        return decoder.readout(torch.stack(tops, 1), embedded, torch.stack(contexts, 1)), _stacked(weights)

    def search_step(
        self, decoder: WiredParts, embedded: torch.Tensor, state: DecoderState, scored: torch.Tensor | None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """t_i of the `scored` rows (all if None), the new state and α_i."""
        gates = decoder.rnn.embedding_gates(embedded)
        state, context, weights, _ = self.step(decoder, gates, embedded, state, decoder.rnn.step_input_weight())
        inputs = (state.top, embedded, context)
        return decoder.readout(*(inputs if scored is None else (x[scored] for x in inputs))), state, weights


class LuongWiring:
    """s_i = f(s_{i-1}, [E y_{i-1} ; h̃_{i-1}]), attend with s_i, then h̃_i = tanh(W_c [c_i ; s_i])."""

    name = "luong"
    default_readout = "tanh"

    def __init__(self, input_feeding: bool = False):
        self.input_feeding = input_feeding

    def step_input_size(self, annotation_size: int, readout_size: int) -> int:
        """The per-step part of the recurrence's input: h̃_{i-1} with input feeding, else none."""
        return readout_size if self.input_feeding else 0

    @staticmethod
    def readout_input_size(embedding_size: int, annotation_size: int, hidden_size: int) -> int:
        """[c_i ; s_i]."""
        return annotation_size + hidden_size

    @staticmethod
    def readout_inputs(state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> list[torch.Tensor]:
        return [context, state]

    def step(
        self, decoder: WiredParts, gates: torch.Tensor, embedded: torch.Tensor, state: DecoderState, step_weight
    ) -> Step:
        """Update, attend with s_i, then h̃_i (fed to the next step with input feeding)."""
        if state.feed is not None:
            gates = gates + kernels.linear(state.feed, step_weight)
        hidden, memory = decoder.rnn.step(gates, state.state, state.memory)
        top = layer_state(hidden, -1)
        context, weights = decoder.attend(top, state)
        attentional = decoder.readout(top, embedded, context)
        feed = attentional if self.input_feeding else None
        after = replace(state, state=hidden, memory=memory, feed=feed, coverage=covered(state, weights))
        return after, context, weights, attentional

    def teacher_forced(
        self, decoder: WiredParts, embedded: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """h̃_i (B, T, l) and α (B, T, S) for every target position. Without input feeding
        no step depends on the one before through attention: s_i for every i in one call
        of the recurrence, then every position attends in one batched product (unless
        the attention covers, where each position reads the coverage the one before left)."""
        if not self.input_feeding and state.coverage is None:
            states = decoder.rnn.sequence(embedded, state.state, state.memory)  # s_i for every i: (B, T, D)
            context, weights = decoder.attend(states, state)
            return decoder.readout(states, embedded, context), weights
        _, _, step_weights, readouts = step_by_step(self, decoder, embedded, state)
        stacked = _stacked(readouts)
        assert stacked is not None, "Luong's steps give h̃_i"
        return stacked, _stacked(step_weights)

    def search_step(
        self, decoder: WiredParts, embedded: torch.Tensor, state: DecoderState, scored: torch.Tensor | None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """h̃_i of the `scored` rows (all if None), the new state and α_i."""
        gates = decoder.rnn.embedding_gates(embedded)
        state, _, weights, readout = self.step(decoder, gates, embedded, state, decoder.rnn.step_input_weight())
        assert readout is not None, "Luong's step gives h̃_i"
        return (readout if scored is None else readout[scored]), state, weights


Wiring = BahdanauWiring | LuongWiring

WIRINGS: dict[str, type[BahdanauWiring] | type[LuongWiring]] = {"bahdanau": BahdanauWiring, "luong": LuongWiring}


def fused_score(decoder: WiredParts, state: DecoderState) -> AdditiveScore | None:
    """The additive score a fused training loop computes this teacher-forced pass with,
    where one can: the paper's decoder (one GRU layer, the additive score, with or without
    coverage) where gradients are wanted; None otherwise."""
    rnn = decoder.rnn
    attention = decoder.attention
    fits = (
        torch.is_grad_enabled()
        and isinstance(decoder.wiring, BahdanauWiring)
        and not rnn.is_lstm
        and rnn.layers == 1
        and state.beam == 1
    )
    if fits and isinstance(attention, Attention) and isinstance(attention.score, AdditiveScore):
        return attention.score
    return None


def covered(state: DecoderState, weights: torch.Tensor | None) -> torch.Tensor | None:
    """The coverage after a step that attended with α_i: C_i = C_{i-1} + α_i (None without coverage)."""
    if state.coverage is None:
        return None
    assert weights is not None, "a covering score attends: α"
    return state.coverage + weights


def step_by_step(
    wiring: Wiring, decoder: WiredParts, embedded: torch.Tensor, state: DecoderState
) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor | None], list[torch.Tensor | None]]:
    """Teacher forcing one position at a time: s_i, c_i, α_i and h̃_i for every i. Only what
    depends on the step before runs in the loop: the embeddings' share of the first
    layer's gates is computed for all positions at once."""
    step_weight = decoder.rnn.step_input_weight()
    tops, contexts, weights, readouts = [], [], [], []
    for i, gates in enumerate(decoder.rnn.embedding_gates(embedded).unbind(1)):
        state, context, alpha, attentional = wiring.step(decoder, gates, embedded[:, i], state, step_weight)
        tops.append(state.top)
        contexts.append(context)
        weights.append(alpha)
        readouts.append(attentional)
    return tops, contexts, weights, readouts


def _stacked(steps: list[torch.Tensor | None]) -> torch.Tensor | None:
    """What every step gave (α_i, or h̃_i) as (B, T, …); None where the steps give none
    (α of the fixed-context baseline)."""
    given = [step for step in steps if step is not None]
    return torch.stack(given, 1) if given else None
