"""Corpus-level translation metrics built on sacreBLEU and sacremoses.

Two BLEU conventions are offered because the literature uses both:
``bleu`` is the standard detokenised, cased sacreBLEU score, while
``bleu_lowercase_tokenized`` reproduces the Multi30k convention of scoring
lowercased, Moses-tokenised text against the pre-tokenised reference files.
Every ``MetricScore`` carries a signature so results are never reported without
the settings that produced them.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import sacrebleu
from sacrebleu.metrics.base import Metric

if TYPE_CHECKING:
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

DEFAULT_LENGTH_BUCKETS = [0, 10, 20, 30, 40, 50, 60]


@dataclass(frozen=True)
class MetricScore:
    """A metric value together with the sacreBLEU signature that produced it (or, for a
    metric sacreBLEU does not compute, the settings and counts behind it), and its `unit`."""

    name: str
    value: float
    signature: str
    unit: str = ""

    def __str__(self) -> str:
        return f"{self.name} = {self.value:.2f}{self.unit} ({self.signature})"


@dataclass(frozen=True)
class EvaluationRequest:
    """What `rnnsearch evaluate` asks of a kind of data: the test set's `src` and `ref`
    files (or, for a kind with a test part of its own, neither and that `part`), the
    text-only choices of BLEU against lowercased tokenised references and BLEU by source
    length, and whether a glossary is given, whose terms' success the text kind reports
    (the search, the terms and the words to avoid are the call's request's)."""

    src: str | None
    ref: str | None
    part: str = "test"
    lowercase_tokenized: bool = False
    by_length: bool = False
    glossary: bool = False


@dataclass(frozen=True)
class Evaluation:
    """A test set's scores as `rnnsearch evaluate` reports them: each score a line (and an
    entry of the JSON report), `heading` what was evaluated where the command did not
    name it, `notes` further lines, and `details` the further figures of the JSON report."""

    scores: list[MetricScore]
    heading: str | None = None
    notes: list[str] = field(default_factory=list)
    details: dict[str, object] = field(default_factory=dict)

    def report(self) -> dict[str, object]:
        """The JSON report: each score with its signature, then the details."""
        scores = {s.name: {"score": round(s.value, 2), "signature": s.signature} for s in self.scores}
        return scores | self.details


PERPLEXITY_CAP = 50.0
"""The per-token loss above which perplexity is reported as exp(50): an untrained model's
loss can be far higher, and its perplexity would overflow a float."""


def perplexity(loss: float) -> float:
    """exp(per-token loss in nats), the loss capped at PERPLEXITY_CAP."""
    return math.exp(min(loss, PERPLEXITY_CAP))


def _check_counts(hypotheses: list[str], references: list[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")


def _score(metric: Metric, hypotheses: list[str], references: list[str], signature_suffix: str = "") -> MetricScore:
    result = metric.corpus_score(hypotheses, [references])
    # The signature needs the number of references, known only after scoring.
    signature = str(metric.get_signature()) + signature_suffix
    return MetricScore(name=result.name, value=float(result.score), signature=signature)


def bleu(hypotheses: list[str], references: list[str]) -> MetricScore:
    """Cased sacreBLEU with its default 13a tokenisation on detokenised text."""
    _check_counts(hypotheses, references)
    return _score(sacrebleu.BLEU(), hypotheses, references)


def chrf(hypotheses: list[str], references: list[str]) -> MetricScore:
    """sacreBLEU chrF (character n-gram F-score, default settings)."""
    _check_counts(hypotheses, references)
    return _score(sacrebleu.CHRF(), hypotheses, references)


@cache
def _moses(lang: str) -> tuple[MosesPunctNormalizer, MosesTokenizer]:
    # Imported only when used: slow to import and large in memory (BENCHMARKS.md, "Quality: the
    # default de→en model after 30 minutes")
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang), MosesTokenizer(lang)


def moses_lowercase_tokenize(lines: list[str], lang: str) -> list[str]:
    """Lowercase, punctuation-normalise and Moses-tokenise lines.

    This is how the Multi30k ``*.lc.norm.tok.*`` files were made, so model
    output passed through it is comparable with those references.
    """
    normalizer, tokenizer = _moses(lang)
    return [
        tokenizer.tokenize(
            normalizer.normalize(line.lower()),
            escape=True,
            return_str=True,
            aggressive_dash_splits=False,
        )
        for line in lines
    ]


def bleu_lowercase_tokenized(hypotheses: list[str], references: list[str], lang: str) -> MetricScore:
    """BLEU in the Multi30k convention: lowercased, Moses-tokenised text.

    Hypotheses are raw (detokenised) model output and are tokenised here;
    references must already be lowercased and tokenised (the ``tok`` files).
    The signature gains ``|hyp:moses-lc`` since sacreBLEU itself only sees
    ``tok:none``.
    """
    _check_counts(hypotheses, references)
    tokenized = moses_lowercase_tokenize(hypotheses, lang)
    return _score(sacrebleu.BLEU(tokenize="none", force=True), tokenized, references, signature_suffix="|hyp:moses-lc")


def _bucket_labels(edges: list[int]) -> list[str]:
    labels = [f"{lo + 1}-{hi}" for lo, hi in zip(edges, edges[1:])]
    return labels + [f"{edges[-1] + 1}+"]


def bleu_by_length(
    hypotheses: list[str], references: list[str], source_lengths: list[int], buckets: list[int] | None = None
) -> list[tuple[str, int, float]]:
    """Corpus BLEU per source-length bucket, as in Bahdanau et al.'s Figure 2.

    ``buckets`` are increasing edges; edge pair (lo, hi) holds sentences with
    lo < length <= hi (the first bucket also takes length 0) and the last
    bucket holds everything longer than the last edge.  Returns
    ``(label, n_sentences, bleu)`` for each non-empty bucket, in order.
    """
    _check_counts(hypotheses, references)
    if len(source_lengths) != len(hypotheses):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(source_lengths)} source lengths")
    edges = DEFAULT_LENGTH_BUCKETS if buckets is None else buckets
    if not edges or any(lo >= hi for lo, hi in zip(edges, edges[1:])):
        raise ValueError(f"bucket edges must be non-empty and increasing: {edges}")

    labels = _bucket_labels(edges)
    grouped: list[tuple[list[str], list[str]]] = [([], []) for _ in labels]
    for hyp, ref, length in zip(hypotheses, references, source_lengths):
        index = max(bisect.bisect_left(edges, length) - 1, 0)
        grouped[index][0].append(hyp)
        grouped[index][1].append(ref)

    return [
        (label, len(hyps), float(sacrebleu.corpus_bleu(hyps, [refs]).score))
        for label, (hyps, refs) in zip(labels, grouped)
        if hyps
    ]
