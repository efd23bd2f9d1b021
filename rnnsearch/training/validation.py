"""Validation during training: the loss over the validation set, greedy translations
scored with BLEU (or digit error rate for spoken digits), and heatmaps of a few
sentences' alignments, so they can be watched as they form.

The translations come from the search itself, through the shared `Decoding`
(rnnsearch.decoding.decoding), not through the translator's API: the validation set is
trusted input, already checked when the run started."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import torch

from rnnsearch import kernels
from rnnsearch.config import Config
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.decoding.results import Translation
from rnnsearch.evaluation.metrics import perplexity
from rnnsearch.evaluation.plots import alignment_heatmap
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.model.modes import evaluating
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.text.batches import epoch_batches, make_batch
from rnnsearch.training.loss import sequence_loss

if TYPE_CHECKING:
    from rnnsearch.training.run_data import Corpus, CorpusKind


class Validator:
    """Validates `decoding`'s model (a Translator is one) on `corpus`'s validation set, as
    `config` says, scored as its `kind` of data scores; heatmaps go to `alignments` (a
    folder of the model directory)."""

    def __init__(self, decoding: Decoding, corpus: Corpus, config: Config, *, kind: CorpusKind, alignments: Path):
        self.decoding, self.corpus, self.config, self.alignments = decoding, corpus, config, alignments
        self.kind = kind

    @torch.no_grad()
    def __call__(self, step: int, *, everything: bool = False) -> MetricsRow:
        """Validation loss and perplexity (no label smoothing) over the whole set, and
        greedy BLEU for text or digit error rate and string accuracy for spoken digits.

        The scores are of the first train.valid_bleu_sentences, so that translating a
        large validation set does not dominate training. With `everything`, the whole set
        is translated, and the row also holds its scores (valid_bleu_all, …): the subset's
        stay the ones compared across validations.
        """
        model = self.decoding.model
        sources, references = self.corpus.valid_sources, self.corpus.valid_references
        scored = self.config.train.valid_bleu_sentences or len(sources)
        translated = len(sources) if everything else min(scored, len(sources))
        names = [f"validation {k}" for k in range(1, translated + 1)]
        with evaluating(model):
            loss = self._loss(cast(RNNSearch, model))  # training validates the model it trains
            translations = self.decoding.decode(names, sources[:translated], self.decoding.options(1, 1))
        self._draw_alignments(translations[: self.config.train.valid_heatmaps], step)
        hypotheses = [t.text for t in translations]
        row: MetricsRow = {"valid_loss": loss, "valid_ppl": perplexity(loss)}
        row.update(self.kind.validation_scores(hypotheses[:scored], references[:scored]))
        if translated > scored:
            row.update(
                {f"{key}_all": value for key, value in self.kind.validation_scores(hypotheses, references).items()}
            )
            row["valid_sentences_all"] = translated
        return row

    def _loss(self, model: RNNSearch) -> float:
        """The per-token loss over the validation set, batched as in training, so that
        validation never needs more memory than a training step."""
        options, device = self.config.train, self.decoding.device
        loss_sum, tokens = 0.0, 0
        batches = epoch_batches(self.corpus.valid, options.batch_tokens, options.max_batch_sentences, 0, 0)
        with kernels.use(kernels.choose(device, purpose="search")):
            for indices in batches:
                batch = make_batch([self.corpus.valid[i] for i in indices]).to(device)
                loss, n_tokens = sequence_loss(model, batch)
                loss_sum, tokens = loss_sum + float(loss), tokens + n_tokens
        return loss_sum / tokens

    def _draw_alignments(self, translations: list[Translation], step: int) -> None:
        """Heatmaps of the same first validation sentences at every validation:
        alignments/step{N}-{k}.png (none, and no folder, for train.valid_heatmaps 0)."""
        if not translations:
            return
        self.alignments.mkdir(exist_ok=True)
        for k, translation in enumerate(translations, start=1):
            if translation.alignment is not None and translation.alignment.size:
                alignment_heatmap(
                    translation.alignment,
                    translation.source_tokens,
                    translation.target_tokens,
                    self.alignments / f"step{step:07d}-{k}.png",
                    f"validation sentence {k}, step {step}",
                    seconds_per_column=self.decoding.seconds_per_vector,
                )
