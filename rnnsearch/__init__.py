"""rnnsearch: attentional encoder–decoder models (Bahdanau, Cho & Bengio 2015).

model = rnnsearch.load("runs/de-en")
for t in model.translate(["Ein Hund läuft im Schnee."], beam_size=5):
    print(t.text, t.score, t.alignment.shape)
for s in model.score(["Ein Hund läuft im Schnee."], ["A dog runs in the snow."]):
    print(s.log_prob, s.token_log_probs, s.alignment.shape)
links = [a.pairs for a in model.align(sources, targets)]
print(rnnsearch.alignment_error_rate(links, rnnsearch.read_gold("gold.txt", one_based=True)))
steps = rnnsearch.attention_steps(model, ["Ein Hund läuft im Schnee."]).sentence(0)
print(steps.annotations.shape, steps.energies.shape, steps.weights.shape, steps.contexts.shape, steps.states.shape)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rnnsearch.alignments.words import WordAlignment
    from rnnsearch.evaluation.alignment_error import AlignmentScore, GoldLinks, alignment_error_rate, read_gold
    from rnnsearch.translation.steps import AttentionSteps, attention_steps
    from rnnsearch.translation.translator import PairScore, Translation, Translator, load

__version__ = "0.1.0"
__all__ = [
    "AlignmentScore",
    "AttentionSteps",
    "GoldLinks",
    "PairScore",
    "Translation",
    "Translator",
    "WordAlignment",
    "alignment_error_rate",
    "attention_steps",
    "load",
    "read_gold",
    "__version__",
]
_MODULES = {
    "PairScore": "rnnsearch.translation.translator",
    "Translation": "rnnsearch.translation.translator",
    "Translator": "rnnsearch.translation.translator",
    "load": "rnnsearch.translation.translator",
    "WordAlignment": "rnnsearch.alignments.words",
    "AlignmentScore": "rnnsearch.evaluation.alignment_error",
    "GoldLinks": "rnnsearch.evaluation.alignment_error",
    "alignment_error_rate": "rnnsearch.evaluation.alignment_error",
    "read_gold": "rnnsearch.evaluation.alignment_error",
    "AttentionSteps": "rnnsearch.translation.steps",
    "attention_steps": "rnnsearch.translation.steps",
}


def __getattr__(name: str) -> Any:
    """The public names, each imported from its module on first use: a process that only
    reads and encodes text (a data-preparation worker, say) never loads torch."""
    if name in _MODULES:
        import importlib

        return getattr(importlib.import_module(_MODULES[name]), name)
    raise AttributeError(f"module 'rnnsearch' has no attribute {name!r}")
