"""Text in, text out: the one place where subwords, model and search are wired together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from rnnsearch.config import Config
from rnnsearch.errors import UserError
from rnnsearch.model.seq2seq import RNNSearch, build_model
from rnnsearch.search import Hypothesis, max_output_lengths
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.corpus import is_blank
from rnnsearch.text.subwords import Subwords
from rnnsearch.training.checkpoint import load_model_files, load_weights, weights_path

END = "</s>"


@dataclass
class Translation:
    """One translation of one source sentence.

    alignment: (len(target_tokens), len(source_tokens)) weights α_ij; row i is the
    attention of target piece i over the source pieces, and sums to 1. None for the
    fixed-context baseline, which has no alignment model.
    alternatives: the rest of the n-best list, best first.
    """

    source: str
    text: str
    score: float
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None
    alternatives: list[Translation] = field(default_factory=list)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(name)
    except RuntimeError:
        raise UserError(f"train.device: unknown device {name!r}") from None


class Translator:
    """A trained model ready to translate: `translate(texts)` → list of Translation."""

    def __init__(
        self,
        model: RNNSearch,
        src_subwords: Subwords,
        tgt_subwords: Subwords,
        config: Config,
    ):
        self.model = model
        self.src_subwords = src_subwords
        self.tgt_subwords = tgt_subwords
        self.search = config.search
        self.target_language = config.data.tgt_lang

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def translate(self, texts: Sequence[str], beam_size: int | None = None, n_best: int = 1) -> list[Translation]:
        """Translate every text, in order; an empty or blank text gives an empty translation.

        beam_size 1 is greedy search; the default comes from the model's config.
        """
        beam_size = self.search.beam_size if beam_size is None else beam_size
        if beam_size < 1 or not 1 <= n_best <= beam_size:
            raise UserError(f"need beam size ≥ 1 and 1 ≤ n-best ≤ beam size (got {beam_size} and {n_best})")
        ids = self.src_subwords.encode(texts)
        for line, pieces in enumerate(ids, start=1):
            if len(pieces) > self.search.max_source_length:
                raise UserError(
                    f"input line {line}: {len(pieces)} subword pieces, more than "
                    f"search.max_source_length = {self.search.max_source_length}"
                )
        todo = sorted((i for i, text in enumerate(texts) if not is_blank(text)), key=lambda i: -len(ids[i]))
        results = {i: self._empty(texts[i]) for i, text in enumerate(texts) if is_blank(text)}
        step = self.search.batch_sentences
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(todo), step):
                chunk = todo[start : start + step]
                hypotheses = self._search([ids[i] for i in chunk], beam_size, n_best)
                for i, nbest in zip(chunk, hypotheses):
                    results[i] = self._to_text(texts[i], ids[i], nbest)
        finally:
            self.model.train(was_training)
        return [results[i] for i in range(len(texts))]

    def _search(self, sources: list[list[int]], beam_size: int, n_best: int) -> list[list[Hypothesis]]:
        src, src_lengths = source_tensors(sources)
        limits = max_output_lengths(src_lengths, self.search.max_length_ratio, self.search.max_length_extra)
        src, src_lengths = src.to(self.device), src_lengths.to(self.device)
        if beam_size == 1:
            return greedy_search(self.model, src, src_lengths, limits, self.search.length_penalty)
        return beam_search(self.model, src, src_lengths, limits, self.search.length_penalty, beam_size, n_best)

    def _to_text(self, source: str, source_ids: list[int], nbest: list[Hypothesis]) -> Translation:
        source_tokens = self.src_subwords.pieces(source_ids) + [END]
        translations = [
            Translation(
                source=source,
                text=self.tgt_subwords.decode(h.tokens),
                score=h.score,
                source_tokens=source_tokens,
                target_tokens=self.tgt_subwords.pieces(h.tokens) + [END],
                alignment=None if h.alignment is None else h.alignment.numpy(),
            )
            for h in nbest
        ]
        best = translations[0]
        best.alternatives = translations[1:]
        return best

    @staticmethod
    def _empty(source: str) -> Translation:
        return Translation(source, "", 0.0, [], [], np.zeros((0, 0), dtype=np.float32))

    def require_alignment(self) -> None:
        """Raise a UserError when the model has no alignment to show."""
        if not self.model.has_alignment:
            raise UserError(
                "this model has no alignment model (model.attention: none), so there is no alignment to show"
            )


def load(model_dir: str | Path, device: str = "auto") -> Translator:
    """A Translator for the trained model in `model_dir` (best weights if there are any)."""
    config, src_subwords, tgt_subwords = load_model_files(model_dir)
    model = build_model(config.model, len(src_subwords), len(tgt_subwords))
    load_weights(model, weights_path(model_dir))
    model.to(resolve_device(device)).eval()
    return Translator(model, src_subwords, tgt_subwords, config)
