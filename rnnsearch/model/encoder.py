"""The encoder: source → annotations h_j = [→h_j ; ←h_j] (or →h_j when unidirectional).

The source is a sequence of token ids, embedded, or of feature vectors (speech),
mapped by a linear input layer; everything after that is the same.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnnsearch.model.linear import Linear
from rnnsearch.model.recurrent import CELLS


class Encoder(nn.Module):
    """Embeds the source and reads it with a (bidirectional) GRU or LSTM over packed sequences.

    Packing keeps padding out of the recurrence, so each sentence's annotations are
    the same alone or padded inside a batch, and the backward RNN starts at the real
    last word, not at the padding.
    """

    def __init__(
        self,
        source_size: int,
        embedding_size: int,
        *,
        cell: str,
        hidden_size: int,
        layers: int,
        bidirectional: bool,
        dropout: float,
        vector_input: bool = False,
    ):
        """source_size: the vocabulary size for ids, the feature size for vectors."""
        super().__init__()
        self.embedding: Linear | nn.Embedding
        if vector_input:
            self.embedding = Linear(source_size, embedding_size)
        else:
            self.embedding = nn.Embedding(source_size, embedding_size, padding_idx=0)
        self.dropout = nn.Dropout(dropout)
        self.rnn = CELLS[cell](
            embedding_size,
            hidden_size,
            num_layers=layers,
            bidirectional=bidirectional,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.bidirectional = bidirectional
        self.annotation_size = (2 if bidirectional else 1) * hidden_size
        self.summary_size = hidden_size

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src (B, S) ids or (B, S, F) vectors, src_lengths (B,) → annotations (B, S, A), summary (B, H).

        The summary initialises the decoder: ←h_1, the backward RNN's state after
        reading the sentence from its last word to its first, or →h_Tx when there is no
        backward RNN (the top layer's, in both cases).
        """
        embedded = self.dropout(self.embedding(src))  # E x_j: (B, S, E)
        packed = pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)  # final: (layers·directions, B, H), in the input's order
        annotations, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.size(1))
        final_hidden = final[0] if isinstance(final, tuple) else final  # an LSTM also returns its cells
        return annotations, final_hidden[-1]
