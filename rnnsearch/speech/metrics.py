"""Scores for recognised digit strings: digit error rate and whole-string accuracy.

The digit error rate is the word error rate over space-separated digits, computed by
jiwer: (substitutions + deletions + insertions) / reference digits, so "1 3" against
"1 2 3" is one deletion in three digits. It can exceed 100% when a recogniser
inserts digits. Whole-string accuracy counts strings recognised exactly, the figure
that matters when a digit string is a phone or account number. Both are percentages
in a `MetricScore`, like BLEU, with a description of how they were computed.
"""

from __future__ import annotations

from importlib.metadata import version

import jiwer

from rnnsearch.evaluation.metrics import MetricScore


def digit_error_rate(hypotheses: list[str], references: list[str]) -> MetricScore:
    """Word error rate over digits, in percent of the reference digits."""
    _check(hypotheses, references)
    if not any(reference.split() for reference in references):
        raise ValueError("the references hold no digits, so an error rate is undefined")
    result = jiwer.process_words(references, hypotheses)
    errors = result.substitutions + result.deletions + result.insertions
    digits = result.substitutions + result.deletions + result.hits
    description = (
        f"jiwer {version('jiwer')} WER over space-separated digits: {errors} errors "
        f"({result.substitutions} sub, {result.deletions} del, {result.insertions} ins) "
        f"in {digits} digits of {len(references)} strings"
    )
    return MetricScore(name="DER", value=100.0 * errors / digits, signature=description, unit="%")


def string_accuracy(hypotheses: list[str], references: list[str]) -> MetricScore:
    """Percentage of strings recognised exactly (ignoring extra whitespace)."""
    _check(hypotheses, references)
    if not references:
        raise ValueError("no strings to score")
    correct = sum(h.split() == r.split() for h, r in zip(hypotheses, references))
    description = f"{correct} of {len(references)} strings exactly right"
    return MetricScore(name="string accuracy", value=100.0 * correct / len(references), signature=description, unit="%")


def _check(hypotheses: list[str], references: list[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
