"""The decoder: an alignment model, a recurrence and a readout, wired in one of the
orders of wirings.py (Bahdanau's: attend, then update; Luong's: update, then attend).

Only what depends on the previous step runs step by step: the embeddings, their share
of the first layer's gates, the readout and the vocabulary projection are computed for
all target positions at once. Luong's wiring without input feeding needs no step loop
in training at all.
"""

from __future__ import annotations

import torch
from torch import nn

from rnnsearch import kernels
from rnnsearch.model.attention import Attention, FixedContext
from rnnsearch.model.linear import Linear
from rnnsearch.model.recurrent import DecoderRNN
from rnnsearch.model.state import DecoderState
from rnnsearch.model.wirings import Wiring

__all__ = ["Decoder", "DecoderState"]


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
        """s_0 = tanh(W_s h), h the encoder's summary (←h_1 when bidirectional), C_0 = 0
        where the attention covers, and the source-side tensors every step reuses."""
        state = kernels.tanh_(self.init_layer(summary)).unflatten(1, (self.rnn.layers, -1))
        feed = summary.new_zeros(summary.size(0), self.output_layer.in_features) if self.input_feeding else None
        coverage = torch.zeros_like(padding, dtype=torch.float32) if self.attention.covers else None
        source_side = self.attention.source_side(annotations, padding)
        return DecoderState(
            state=state,
            memory=self.rnn.initial_memory(state),
            feed=feed,
            coverage=coverage,
            annotations=annotations,
            keys=source_side["keys"],
            fixed_context=source_side["fixed_context"],
            padding=padding,
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
        """c_i and α_i for queries (R, [T,] D), each reading its row's coverage C_{i-1} where
        the attention covers; a beam's K queries attend to their shared source side as K
        positions of one sentence."""
        k, coverage = decoder.beam, decoder.coverage
        if k == 1:
            return self.attention(query, decoder, coverage)
        coverage = None if coverage is None else coverage.unflatten(0, (-1, k))
        context, weights = self.attention(query.unflatten(0, (-1, k)), decoder, coverage)
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
