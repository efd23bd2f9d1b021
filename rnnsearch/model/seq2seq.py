"""RNNsearch: encoder + alignment model + decoder, and the one config → model mapping."""

from __future__ import annotations

from typing import Protocol, cast

import torch
from torch import nn

from rnnsearch.model.aligner import OVER_ALL, Aligner, AlignerRows, Normalising
from rnnsearch.model.attention import Attention, FixedContext
from rnnsearch.model.decoder import Decoder, DecoderState
from rnnsearch.model.encoder import Encoder
from rnnsearch.model.recurrent import DecoderRNN
from rnnsearch.model.scores import SCORES
from rnnsearch.model.settings import ModelConfig
from rnnsearch.model.wirings import WIRINGS


class SourceSide(Protocol):
    """What the alignment module reads of a pass's source side: a DecoderState's
    annotations h_j (B, S, A) and padding (B, S)."""

    @property
    def annotations(self) -> torch.Tensor: ...

    @property
    def padding(self) -> torch.Tensor: ...


class RNNSearch(nn.Module):
    """p(y | x) with a distinct context vector per target word (Bahdanau et al. 2015)."""

    def __init__(self, encoder: Encoder, decoder: Decoder, aligner: Aligner | None = None):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.aligner = aligner  # the alignment module (aligner.py), or None

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        """src (B, S) ids or (B, S, F) vectors, src_lengths (B,) → the decoder's initial state over the annotations."""
        annotations, summary = self.encoder(src, src_lengths)
        padding = torch.arange(src.size(1), device=src.device).unsqueeze(0) >= src_lengths.unsqueeze(1)
        return self.decoder.initial_state(annotations, summary, padding)

    def forward(
        self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher forcing → readout t (B, T, l) and alignments α (B, T, S) (None without attention).

        The vocabulary projection is left to the caller (`logits`, or the training loss,
        which fuses it with the cross-entropy), so it runs on real target positions only.
        """
        readout, weights, _ = self.teacher_forced(src, src_lengths, tgt_in)
        return readout, weights

    def teacher_forced(
        self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None, DecoderState]:
        """`forward`'s readout and α, and the decoder's initial state, which holds the
        annotations the alignment module reads."""
        state = self.encode(src, src_lengths)
        readout, weights = self.decoder(tgt_in, state)
        return readout, weights, state

    def aligner_rows(
        self,
        src: torch.Tensor,
        state: SourceSide,
        readout: torch.Tensor,
        weights: torch.Tensor,
        targets: torch.Tensor,
        normalising: Normalising = OVER_ALL,
    ) -> AlignerRows:
        """The alignment module's rows for target pieces `targets` (B, T), from a teacher-forced
        pass (`teacher_forced`'s readout, α and state, or a kept pass's: training/frozen_passes.py),
        the lexicon normalised as `normalising` says."""
        if self.aligner is None:
            raise ValueError("this model has no alignment module")
        embedded = self.encoder.embedding(src)  # E_x x_j, without dropout: the module reads the words themselves
        source = self.aligner.source_side(src, state.annotations, embedded, state.padding)
        return self.aligner(readout, targets, weights, source, normalising)

    def logits(self, readout: torch.Tensor) -> torch.Tensor:
        """(…, l) → unnormalised scores over the target vocabulary (…, V)."""
        return self.decoder.output_layer(readout)

    @property
    def has_alignment(self) -> bool:
        """False for the fixed-context baseline (attention: none)."""
        return not isinstance(self.decoder.attention, FixedContext)

    graphs: str | None = None
    """PyTorch runs it: no exported graphs (export/runtime.py's model says which)."""

    @property
    def parameter_count(self) -> int:
        """The trained weights."""
        return sum(p.numel() for p in self.parameters())

    def step(
        self, prev_tokens: torch.Tensor, state: DecoderState, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One decoding step for search: log-probabilities (of the `scored` rows only, if
        given), next state, alignment row."""
        return self.decoder.step(prev_tokens, state, scored)


def build_model(config: ModelConfig, source_size: int, tgt_vocab_size: int, vector_input: bool = False) -> RNNSearch:
    """The only place where configuration turns into constructor arguments.

    source_size is the source vocabulary size, or the feature size with vector_input.
    """
    enc, dec = config.encoder, config.decoder
    encoder = Encoder(
        source_size,
        config.embedding_size,
        cell=enc.cell,
        hidden_size=enc.hidden_size,
        layers=enc.layers,
        bidirectional=enc.bidirectional,
        dropout=config.dropout,
        vector_input=vector_input,
    )
    attention: Attention | FixedContext
    if config.attention == "none":
        attention = FixedContext(enc.bidirectional)
    else:
        covers = {"coverage": True} if config.attention.coverage else {}  # V_a only where C is read
        score_class = SCORES[config.attention.score]
        score = score_class(dec.hidden_size, encoder.annotation_size, config.attention.size, **covers)
        attention = Attention(score)
    wiring = WIRINGS[dec.wiring](dec.input_feeding)
    step_input_size = wiring.step_input_size(encoder.annotation_size, dec.readout_size)
    rnn = DecoderRNN(
        dec.cell,
        embedding_size=config.embedding_size,
        step_input_size=step_input_size,
        hidden_size=dec.hidden_size,
        layers=dec.layers,
        dropout=config.dropout,
    )
    decoder = Decoder(
        tgt_vocab_size,
        config.embedding_size,
        annotation_size=encoder.annotation_size,
        summary_size=encoder.summary_size,
        attention=attention,
        rnn=rnn,
        wiring=wiring,
        readout=cast(str, dec.readout),  # its wiring's default where the config gives none
        readout_size=dec.readout_size,
        dropout=config.dropout,
        tied_embeddings=dec.tied_embeddings,
    )
    model = RNNSearch(encoder, decoder)
    if config.aligner:
        with torch.random.fork_rng(devices=[]):  # the generator goes on as without the module: same dropout masks
            model.aligner = build_aligner(model, size=config.aligner_size, null=config.aligner_null)
    return model


def build_aligner(model: RNNSearch, *, size: int, null: bool = False) -> Aligner:
    """An alignment module of size d = `size` for `model` (fresh weights), with a NULL
    position if `null`: with model.aligner, or added to a trained model by `rnnsearch
    train-aligner`."""
    decoder = model.decoder
    return Aligner(
        cast(nn.Embedding, model.encoder.embedding).num_embeddings,  # the module aligns words: the model reads ids
        decoder.embedding.num_embeddings,
        annotation_size=model.encoder.annotation_size,
        embedding_size=model.encoder.embedding.weight.size(1),
        readout_size=decoder.output_layer.in_features,
        size=size,
        null=null,
    ).to(decoder.output_layer.weight.device)
