"""The decoder: an alignment model, a recurrence and a readout, in one of two wirings.

Bahdanau et al. (2015), section 3.1 and appendix A.2 — attend with s_{i-1}:

    e_ij = a(s_{i-1}, h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    s_i  = f(s_{i-1}, [E y_{i-1} ; c_i])
    t_i  = g(U_o s_i + V_o E y_{i-1} + C_o c_i);  p(y_i | y_<i, x) = softmax(W_o t_i)

Luong et al. (2015), section 3 — update first, attend with s_i:

    s_i  = f(s_{i-1}, [E y_{i-1} ; h̃_{i-1}])     (h̃_{i-1} only with input feeding)
    e_ij = a(s_i, h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    h̃_i  = tanh(W_c [c_i ; s_i]);  p(y_i | y_<i, x) = softmax(W_s h̃_i)

g is maxout (the paper's deep output) or tanh. Only what depends on the previous
step runs step by step: the embeddings, their share of the first layer's gates, the
readout and the vocabulary projection are computed for all target positions at once.
Luong's wiring without input feeding needs no step loop in training at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from rnnsearch.model import fused_decoder
from rnnsearch.model.activations import tanh_
from rnnsearch.model.attention import Attention, FixedContext
from rnnsearch.model.linear import Linear, linear
from rnnsearch.model.recurrent import DecoderRNN, layer_state


@dataclass(frozen=True)
class DecoderState:
    """Everything a decoder step needs; rows are sentences, or sentence × beam.

    state       s_{i-1}, every layer     (R, L, D)
    memory      LSTM cells, or None      (R, L, D)
    feed        h̃_{i-1} for input feeding, or None  (R, l)
    annotations h_j                      (R/K, S, A)
    keys        the score's source side, precomputed once per batch (e.g. U_a h_j);
                the summary (R/K, A) for the fixed-context baseline
    padding                              (R/K, S)  True at padded source positions
    beam        K: the consecutive rows that share one sentence's source side. The K
                hypotheses of a beam read the same h_j, so it is held once per
                sentence, not copied K times (and copied again whenever rows move).
    """

    state: torch.Tensor
    memory: torch.Tensor | None
    feed: torch.Tensor | None
    annotations: torch.Tensor
    keys: torch.Tensor
    padding: torch.Tensor
    beam: int = 1

    @property
    def top(self) -> torch.Tensor:
        """The last layer's state (R, D): the query of the alignment model."""
        return layer_state(self.state, -1)

    def select(self, rows: torch.Tensor) -> DecoderState:
        """The state of the given rows, in that order (retiring rows); with beams, rows
        come in whole blocks of K, and the source side follows their sentences."""
        sources = rows if self.beam == 1 else rows.view(-1, self.beam)[:, 0] // self.beam
        return DecoderState(
            *(_rows(t, rows) for t in self._recurrent()),
            *(_rows(t, sources) for t in self._source_side()),
            beam=self.beam,
        )

    def without(self, ended: torch.Tensor) -> tuple[DecoderState, torch.Tensor]:
        """The state without the rows where `ended` (R,) is True, and for each row kept the
        index it had before; one row per sentence (no beams).

        The last rows move into the places that free up, so retiring a few rows copies
        only the rows that move, where `select` copies every row that stays. The move is
        made in place: the state's tensors must not be read through any other reference.
        """
        if self.beam != 1:
            raise ValueError("rows can only be retired one by one without beams")
        ended = ended.cpu()
        count = int((~ended).sum())
        holes = ended[:count].nonzero().squeeze(1)
        movers = (~ended[count:]).nonzero().squeeze(1) + count
        order = torch.arange(count)
        order[holes] = movers
        if holes.numel() > 0:
            holes, movers = holes.to(self.padding.device), movers.to(self.padding.device)
            for tensor in self._fields():
                if tensor is not None:
                    tensor.index_copy_(0, holes, tensor.index_select(0, movers))
        kept = (None if tensor is None else tensor[:count] for tensor in self._fields())
        return DecoderState(*kept, beam=1), order

    def tile_beams(self, k: int) -> DecoderState:
        """K rows for every sentence, sharing its source side: the start of a beam search."""
        if self.beam != 1:
            raise ValueError("the state is already tiled into beams")
        tiled = (None if t is None else t.repeat_interleave(k, dim=0) for t in self._recurrent())
        return DecoderState(*tiled, *self._source_side(), beam=k)

    def reorder_beams(self, rows: torch.Tensor) -> DecoderState:
        """Reorder the recurrent part only: for beams of one sentence, rows that trade
        places share the same source side, so annotations, keys and padding stay put."""
        return replace(
            self, state=self.state.index_select(0, rows), memory=_rows(self.memory, rows), feed=_rows(self.feed, rows)
        )

    def extend(self, other: DecoderState) -> DecoderState:
        """These rows followed by `other`'s, for sentences that join a batch in flight.

        Both source sides are cut or padded to the longest real source among the rows;
        padded positions are masked, so every row attends exactly as it did before.
        """
        if other.beam != self.beam:
            raise ValueError(f"cannot join states of beam {self.beam} and {other.beam}")
        length = int(torch.cat([(~self.padding).sum(1), (~other.padding).sum(1)]).max())
        first, second = self.with_source_length(length), other.with_source_length(length)
        return DecoderState(
            *(None if a is None else torch.cat([a, b]) for a, b in zip(first._fields(), second._fields())),
            beam=self.beam,
        )

    def with_source_length(self, length: int) -> DecoderState:
        """The same rows with the source side cut or padded to `length` positions; padded
        positions are masked, so every row attends as before."""
        return replace(
            self,
            annotations=_source_length(self.annotations, length, 0.0),
            keys=_source_length(self.keys, length, 0.0) if self.keys.dim() == 3 else self.keys,
            padding=_source_length(self.padding, length, True),
        )

    def _recurrent(self) -> tuple[torch.Tensor | None, ...]:
        return self.state, self.memory, self.feed

    def _source_side(self) -> tuple[torch.Tensor, ...]:
        return self.annotations, self.keys, self.padding

    def _fields(self) -> tuple[torch.Tensor | None, ...]:
        return *self._recurrent(), *self._source_side()


def _rows(tensor: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor | None:
    return None if tensor is None else tensor.index_select(0, rows)


def _source_length(tensor: torch.Tensor, length: int, fill: float | bool) -> torch.Tensor:
    """(R, S, …) → (R, length, …): cut, or padded with `fill`."""
    if tensor.size(1) >= length:
        return tensor[:, :length]
    extra = tensor.new_full((tensor.size(0), length - tensor.size(1), *tensor.shape[2:]), fill)
    return torch.cat([tensor, extra], dim=1)


class Decoder(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        annotation_size: int,
        summary_size: int,
        attention: Attention | FixedContext,
        rnn: DecoderRNN,
        wiring: str,
        input_feeding: bool,
        readout: str,
        readout_size: int,
        dropout: float,
        tied_embeddings: bool,
    ):
        super().__init__()
        hidden_size = rnn.rnn.hidden_size
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=0)  # E
        self.init_layer = Linear(summary_size, rnn.layers * hidden_size)  # W_s: s_0 of every layer
        self.attention = attention
        self.rnn = rnn
        self.luong = wiring == "luong"
        self.input_feeding = input_feeding
        self.maxout = readout == "maxout"
        pieces = 2 if self.maxout else 1
        readout_inputs = annotation_size + hidden_size + (0 if self.luong else embedding_size)
        self.readout_layer = Linear(readout_inputs, pieces * readout_size)  # W_c (Luong), U_o V_o C_o (Bahdanau)
        self.dropout = nn.Dropout(dropout)
        self.output_layer = Linear(readout_size, vocab_size)  # W_o
        if tied_embeddings:
            self.output_layer.weight = self.embedding.weight

    def initial_state(self, annotations: torch.Tensor, summary: torch.Tensor, padding: torch.Tensor) -> DecoderState:
        """s_0 = tanh(W_s h), h the encoder's summary (←h_1 when bidirectional), and the
        source-side tensors every step reuses."""
        state = tanh_(self.init_layer(summary)).unflatten(1, (self.rnn.layers, -1))
        feed = summary.new_zeros(summary.size(0), self.output_layer.in_features) if self.input_feeding else None
        return DecoderState(
            state=state,
            memory=self.rnn.initial_memory(state),
            feed=feed,
            annotations=annotations,
            keys=self.attention.keys(annotations, padding),
            padding=padding,
        )

    def readout(self, state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """t_i = g(y_{i-1}, s_i, c_i) (Bahdanau) or h̃_i = g(c_i, s_i) (Luong), any leading shape → (…, l)."""
        inputs = [context, state] if self.luong else [state, embedded, context]
        pre = self.readout_layer(torch.cat(inputs, dim=-1))
        if self.maxout:
            pre = pre.unflatten(-1, (-1, 2)).amax(dim=-1)
        else:
            pre = tanh_(pre)
        return self.dropout(pre)

    def _attend(self, query: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """c_i and α_i for queries (R, [T,] D); a beam's K queries attend to their shared
        source side as K positions of one sentence."""
        k = decoder.beam
        if k == 1:
            return self.attention(query, decoder.keys, decoder.annotations, decoder.padding)
        context, weights = self.attention(
            query.unflatten(0, (-1, k)), decoder.keys, decoder.annotations, decoder.padding
        )
        return context.flatten(0, 1), None if weights is None else weights.flatten(0, 1)

    def _bahdanau_step(
        self, gates: torch.Tensor, embedded: torch.Tensor, decoder: DecoderState, context_weight: torch.Tensor
    ) -> tuple[DecoderState, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Attend with s_{i-1}, then s_i = f(s_{i-1}, [E y_{i-1} ; c_i]); the readout is left to the caller."""
        context, weights = self._attend(decoder.top, decoder)
        state, memory = self.rnn.step(gates + linear(context, context_weight), decoder.state, decoder.memory)
        return replace(decoder, state=state, memory=memory), context, weights, None

    def _luong_step(
        self, gates: torch.Tensor, embedded: torch.Tensor, decoder: DecoderState, feed_weight: torch.Tensor
    ) -> tuple[DecoderState, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """s_i = f(s_{i-1}, [E y_{i-1} ; h̃_{i-1}]), attend with s_i, then h̃_i."""
        if decoder.feed is not None:
            gates = gates + linear(decoder.feed, feed_weight)
        state, memory = self.rnn.step(gates, decoder.state, decoder.memory)
        top = layer_state(state, -1)
        context, weights = self._attend(top, decoder)
        attentional = self.readout(top, embedded, context)
        feed = attentional if self.input_feeding else None
        return replace(decoder, state=state, memory=memory, feed=feed), context, weights, attentional

    def forward(self, tgt_in: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher forcing: tgt_in (B, T) → readout (B, T, l), weights α (B, T, S).

        The weights are None for the fixed-context baseline, which has no alignment.
        """
        embedded = self.dropout(self.embedding(tgt_in))  # E y_{i-1}: (B, T, E)
        if self.luong and not self.input_feeding:
            states = self.rnn.sequence(embedded, decoder.state, decoder.memory)  # s_i for every i: (B, T, D)
            context, weights = self._attend(states, decoder)  # all positions in one batched product
            return self.readout(states, embedded, context), weights
        if fused_decoder.supports(self, decoder):
            tops, contexts, weights = fused_decoder.bahdanau_gru_loop(self, embedded, decoder)
            return self.readout(tops, embedded, contexts), weights
        step = self._luong_step if self.luong else self._bahdanau_step
        step_weight = self.rnn.step_input_weight()
        tops, contexts, weights, readouts = [], [], [], []
        for i, gates in enumerate(self.rnn.embedding_gates(embedded).unbind(1)):
            decoder, context, alpha, attentional = step(gates, embedded[:, i], decoder, step_weight)
            tops.append(decoder.top)
            contexts.append(context)
            weights.append(alpha)
            readouts.append(attentional)
        if self.luong:
            readout = torch.stack(readouts, 1)
        else:
            readout = self.readout(torch.stack(tops, 1), embedded, torch.stack(contexts, 1))
        return readout, None if weights[0] is None else torch.stack(weights, 1)

    def step(
        self, prev_tokens: torch.Tensor, decoder: DecoderState, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One search step: y_{i-1} (R,) → log p(y_i) (R, V), the new state, α_i (R, S) or None.

        `scored` (L,) limits log p(y_i) to those rows, in that order (L, V); the rest only
        move on to their next state. Beam search leaves its empty slots out: the readout
        and the vocabulary projection are over half of a step's work.
        """
        embedded = self.dropout(self.embedding(prev_tokens))
        gates = self.rnn.embedding_gates(embedded)
        if self.luong:
            decoder, _, weights, readout = self._luong_step(gates, embedded, decoder, self.rnn.step_input_weight())
            readout = readout if scored is None else readout[scored]
        else:
            decoder, context, weights, _ = self._bahdanau_step(gates, embedded, decoder, self.rnn.step_input_weight())
            inputs = (decoder.top, embedded, context)
            readout = self.readout(*(inputs if scored is None else (x[scored] for x in inputs)))
        logits = self.output_layer(readout).float()
        if torch.is_grad_enabled() or logits.device.type != "cpu" or torch.onnx.is_in_onnx_export():
            return logits.log_softmax(dim=-1), decoder, weights
        # Normalised in place: a second (R, V) tensor at every step, the largest of a beam
        # search step, slowed beam search on the CPU (BENCHMARKS.md, "Fewer rows and fewer
        # passes in search").
        return torch.log_softmax(logits, dim=-1, out=logits), decoder, weights
