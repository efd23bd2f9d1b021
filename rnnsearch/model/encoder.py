"""Bidirectional RNN encoder: source → annotations h_j = [→h_j ; ←h_j]."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Encoder(nn.Module):
    """Embeds source ids and reads them with a bidirectional GRU over packed sequences.

    Packing keeps padding out of the recurrence, so each sentence's annotations are
    the same alone or padded inside a batch, and the backward RNN starts at the real
    last word, not at the padding.
    """

    def __init__(self, vocab_size: int, embedding_size: int, hidden_size: int, layers: int, dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=0)
        self.dropout = nn.Dropout(dropout)
        self.rnn = nn.GRU(
            embedding_size,
            hidden_size,
            num_layers=layers,
            bidirectional=True,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.annotation_size = 2 * hidden_size

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src (B, S), src_lengths (B,) → annotations (B, S, 2H), ←h_1 (B, H).

        ←h_1 is the backward RNN's state after reading the whole sentence from its
        last word to its first (the last layer's), which initialises the decoder.
        """
        embedded = self.dropout(self.embedding(src))  # (B, S, E)
        packed = pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)  # final: (layers·2, B, H), in the input's order
        annotations, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.size(1))
        return annotations, final[-1]
