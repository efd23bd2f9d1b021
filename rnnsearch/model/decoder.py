"""The decoder: an alignment model, a recurrence and a readout, wired in one of the
orders of wirings.py (Bahdanau's: attend, then update; Luong's: update, then attend).

Only what depends on the previous step runs step by step: the embeddings, their share
of the first layer's gates, the readout and the vocabulary projection are computed for
all target positions at once. Luong's wiring without input feeding needs no step loop
in training at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from rnnsearch import kernels
from rnnsearch.model.attention import Attention, FixedContext
from rnnsearch.model.linear import Linear
from rnnsearch.model.recurrent import DecoderRNN, layer_state
from rnnsearch.model.wirings import Wiring


@dataclass(frozen=True)
class DecoderState:
    """Everything a decoder step needs; rows are sentences, or sentence × beam.

    state       s_{i-1}, every layer     (R, L, D)
    memory      LSTM cells, or None      (R, L, D)
    feed        h̃_{i-1} for input feeding, or None  (R, l)
    annotations h_j                      (R/K, S, A)
    keys        the score's source side, precomputed once per batch (e.g. U_a h_j),
                (R/K, S, n); None for the fixed-context baseline
    fixed_context  the fixed-context baseline's c, the same at every step (R/K, A);
                None with an alignment model
    padding                              (R/K, S)  True at padded source positions
    beam        K: the consecutive rows that share one sentence's source side. The K
                hypotheses of a beam read the same h_j, so it is held once per
                sentence, not copied K times (and copied again whenever rows move).
    """

    state: torch.Tensor
    memory: torch.Tensor | None
    feed: torch.Tensor | None
    annotations: torch.Tensor
    keys: torch.Tensor | None
    fixed_context: torch.Tensor | None
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
            *(_rows(t, rows) for t in self.recurrent()),
            *(_rows(t, sources) for t in self.source_side()),
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
            for tensor in self.fields():
                if tensor is not None:
                    tensor.index_copy_(0, holes, tensor.index_select(0, movers))
        kept = (None if tensor is None else tensor[:count] for tensor in self.fields())
        return DecoderState(*kept, beam=1), order

    def tile_beams(self, k: int) -> DecoderState:
        """K rows for every sentence, sharing its source side: the start of a beam search."""
        if self.beam != 1:
            raise ValueError("the state is already tiled into beams")
        tiled = (None if t is None else t.repeat_interleave(k, dim=0) for t in self.recurrent())
        return DecoderState(*tiled, *self.source_side(), beam=k)

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
            *(None if a is None else torch.cat([a, b]) for a, b in zip(first.fields(), second.fields())),
            beam=self.beam,
        )

    def with_source_length(self, length: int) -> DecoderState:
        """The same rows with the source side cut or padded to `length` positions; padded
        positions are masked, so every row attends as before."""
        return replace(
            self,
            annotations=_source_length(self.annotations, length, 0.0),
            keys=None if self.keys is None else _source_length(self.keys, length, 0.0),
            padding=_source_length(self.padding, length, True),
        )

    def recurrent(self) -> tuple[torch.Tensor | None, ...]:
        """The rows' own tensors, one row per hypothesis: state, memory, feed."""
        return self.state, self.memory, self.feed

    def source_side(self) -> tuple[torch.Tensor | None, ...]:
        """The tensors a beam's rows share, one row per sentence: annotations, keys,
        fixed context, padding."""
        return self.annotations, self.keys, self.fixed_context, self.padding

    def fields(self) -> tuple[torch.Tensor | None, ...]:
        """Every tensor, in the order DecoderState takes them: the recurrent part, then the source side."""
        return *self.recurrent(), *self.source_side()


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
        *,
        annotation_size: int,
        summary_size: int,
        attention: Attention | FixedContext,
        rnn: DecoderRNN,
        wiring: Wiring,
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
        self.wiring = wiring
        self.maxout = readout == "maxout"
        pieces = 2 if self.maxout else 1
        readout_inputs = wiring.readout_input_size(embedding_size, annotation_size, hidden_size)
        self.readout_layer = Linear(readout_inputs, pieces * readout_size)  # W_c (Luong), U_o V_o C_o (Bahdanau)
        self.dropout = nn.Dropout(dropout)
        self.output_layer = Linear(readout_size, vocab_size)  # W_o
        if tied_embeddings:
            self.output_layer.weight = self.embedding.weight

    @property
    def input_feeding(self) -> bool:
        """Whether h̃_{i-1} is part of the recurrence's input (Luong's input feeding)."""
        return self.wiring.input_feeding

    def initial_state(self, annotations: torch.Tensor, summary: torch.Tensor, padding: torch.Tensor) -> DecoderState:
        """s_0 = tanh(W_s h), h the encoder's summary (←h_1 when bidirectional), and the
        source-side tensors every step reuses."""
        state = kernels.tanh_(self.init_layer(summary)).unflatten(1, (self.rnn.layers, -1))
        feed = summary.new_zeros(summary.size(0), self.output_layer.in_features) if self.input_feeding else None
        return DecoderState(
            state=state,
            memory=self.rnn.initial_memory(state),
            feed=feed,
            annotations=annotations,
            padding=padding,
            **self.attention.source_side(annotations, padding),
        )

    def readout(self, state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """t_i = g(y_{i-1}, s_i, c_i) (Bahdanau) or h̃_i = g(c_i, s_i) (Luong), any leading shape → (…, l)."""
        pre = self.readout_layer(torch.cat(self.wiring.readout_inputs(state, embedded, context), dim=-1))
        if self.maxout:
            pre = pre.unflatten(-1, (-1, 2)).amax(dim=-1)
        else:
            pre = kernels.tanh_(pre)
        return self.dropout(pre)

    def attend(self, query: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """c_i and α_i for queries (R, [T,] D); a beam's K queries attend to their shared
        source side as K positions of one sentence."""
        k = decoder.beam
        if k == 1:
            return self.attention(query, decoder)
        context, weights = self.attention(query.unflatten(0, (-1, k)), decoder)
        return context.flatten(0, 1), None if weights is None else weights.flatten(0, 1)

    def forward(self, tgt_in: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher forcing: tgt_in (B, T) → readout (B, T, l), weights α (B, T, S).

        The weights are None for the fixed-context baseline, which has no alignment.
        """
        embedded = self.dropout(self.embedding(tgt_in))  # E y_{i-1}: (B, T, E)
        return self.wiring.teacher_forced(self, embedded, decoder)

    def step(
        self, prev_tokens: torch.Tensor, decoder: DecoderState, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One search step: y_{i-1} (R,) → log p(y_i) (R, V), the new state, α_i (R, S) or None.

        `scored` (L,) limits log p(y_i) to those rows, in that order (L, V); the rest only
        move on to their next state. Beam search leaves its empty slots out: the readout
        and the vocabulary projection are over half of a step's work.
        """
        embedded = self.dropout(self.embedding(prev_tokens))
        readout, decoder, weights = self.wiring.search_step(self, embedded, decoder, scored)
        logits = self.output_layer(readout).float()
        return kernels.log_softmax(logits), decoder, weights
