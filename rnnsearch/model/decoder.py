"""The RNNsearch decoder: attend with s_{i-1}, update the GRU with c_i, read out.

Bahdanau et al. (2015), section 3.1 and appendix A.2:

    e_ij = a(s_{i-1}, h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    s_i  = GRU(s_{i-1}, [E y_{i-1} ; c_i])
    t_i  = maxout(U_o s_i + V_o E y_{i-1} + C_o c_i);  p(y_i | y_<i, x) = softmax(W_o t_i)

Only the recurrence runs step by step. The GRU's input projection of the target
embeddings, the readout and the vocabulary projection are computed for all target
positions at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from rnnsearch.model.attention import Attention, FixedContext


@dataclass(frozen=True)
class DecoderState:
    """Everything a decoder step needs; rows are sentences (or sentence × beam).

    state       s_{i-1}   (R, D)
    annotations h_j       (R, S, 2H)
    keys        U_a h_j   (R, S, n)  precomputed once per batch; the summary (R, 2H)
                                     for the fixed-context baseline
    padding               (R, S)     True at padded source positions
    """

    state: torch.Tensor
    annotations: torch.Tensor
    keys: torch.Tensor
    padding: torch.Tensor

    def select(self, rows: torch.Tensor) -> DecoderState:
        """The state of the given rows, in that order (tiling for beams, retiring rows)."""
        return DecoderState(*(t.index_select(0, rows) for t in (self.state, self.annotations, self.keys, self.padding)))

    def reorder_beams(self, rows: torch.Tensor) -> DecoderState:
        """Reorder s_{i-1} only: for beams of one sentence, rows that trade places share
        the same source side, so the annotations, keys and padding stay where they are."""
        return replace(self, state=self.state.index_select(0, rows))


def gru_update(gi: torch.Tensor, gh: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
    """One GRU update from input gates gi (R, 3D), recurrent gates gh (R, 3D) and s (R, D).

    Same gate order and equations as torch.nn.GRU (Cho et al. 2014).
    """
    i_r, i_z, i_n = gi.chunk(3, dim=1)
    h_r, h_z, h_n = gh.chunk(3, dim=1)
    reset = torch.sigmoid(i_r + h_r)
    update = torch.sigmoid(i_z + h_z)
    candidate = torch.tanh(i_n + reset * h_n)
    return candidate + update * (state - candidate)


class Decoder(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        annotation_size: int,
        hidden_size: int,
        attention: Attention | FixedContext,
        readout: str,
        readout_size: int,
        dropout: float,
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=0)  # E
        self.init_layer = nn.Linear(annotation_size // 2, hidden_size)  # W_s for s_0
        self.attention = attention
        # GRU weights, the input part split into target-embedding and context columns.
        self.embedding_gates = nn.Linear(embedding_size, 3 * hidden_size)
        self.context_gates = nn.Linear(annotation_size, 3 * hidden_size, bias=False)
        self.state_gates = nn.Linear(hidden_size, 3 * hidden_size)
        self.maxout = readout == "maxout"
        pieces = 2 if self.maxout else 1
        self.readout_layer = nn.Linear(hidden_size + embedding_size + annotation_size, pieces * readout_size)
        self.dropout = nn.Dropout(dropout)
        self.output_layer = nn.Linear(readout_size, vocab_size)  # W_o

    def initial_state(
        self, annotations: torch.Tensor, backward_first: torch.Tensor, padding: torch.Tensor
    ) -> DecoderState:
        """s_0 = tanh(W_s ←h_1), and the source-side tensors every step reuses."""
        return DecoderState(
            state=torch.tanh(self.init_layer(backward_first)),
            annotations=annotations,
            keys=self.attention.keys(annotations, padding),
            padding=padding,
        )

    def _recur(self, embedding_gates: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, ...]:
        """One RNNsearch step: attend with s_{i-1}, then s_i = GRU(s_{i-1}, [E y_{i-1}; c_i])."""
        context, weights = self.attention(decoder.state, decoder.keys, decoder.annotations, decoder.padding)
        gi = embedding_gates + self.context_gates(context)
        state = gru_update(gi, self.state_gates(decoder.state), decoder.state)
        return state, context, weights

    def readout(self, state: torch.Tensor, embedded: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """t = g(y_{i-1}, s_i, c_i) for any leading shape (…, D), (…, E), (…, 2H) → (…, l)."""
        pre = self.readout_layer(torch.cat([state, embedded, context], dim=-1))
        if self.maxout:
            pre = pre.unflatten(-1, (-1, 2)).amax(dim=-1)
        else:
            pre = torch.tanh(pre)
        return self.dropout(pre)

    def forward(self, tgt_in: torch.Tensor, decoder: DecoderState) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher forcing: tgt_in (B, T) → readout t (B, T, l), weights α (B, T, S).

        The weights are None for the fixed-context baseline, which has no alignment.
        """
        embedded = self.dropout(self.embedding(tgt_in))  # E y_{i-1}: (B, T, E)
        embedding_gates = self.embedding_gates(embedded).unbind(1)  # T × (B, 3D), all steps at once
        states, contexts, weights = [], [], []
        for gates in embedding_gates:
            state, context, alpha = self._recur(gates, decoder)
            decoder = replace(decoder, state=state)
            states.append(state)
            contexts.append(context)
            weights.append(alpha)
        readout = self.readout(torch.stack(states, 1), embedded, torch.stack(contexts, 1))
        return readout, None if weights[0] is None else torch.stack(weights, 1)

    def step(
        self, prev_tokens: torch.Tensor, decoder: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One search step: y_{i-1} (R,) → log p(y_i) (R, V), the new state, α_i (R, S) or None."""
        embedded = self.dropout(self.embedding(prev_tokens))
        state, context, weights = self._recur(self.embedding_gates(embedded), decoder)
        logits = self.output_layer(self.readout(state, embedded, context))
        return logits.float().log_softmax(dim=-1), replace(decoder, state=state), weights
