"""rnnsearch: attentional encoder–decoder models (Bahdanau, Cho & Bengio 2015).

model = rnnsearch.load("runs/de-en")
for t in model.translate(["Ein Hund läuft im Schnee."], beam_size=5):
    print(t.text, t.score, t.alignment.shape)
for s in model.score(["Ein Hund läuft im Schnee."], ["A dog runs in the snow."]):
    print(s.log_prob, s.token_log_probs, s.alignment.shape)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rnnsearch.translator import PairScore, Translation, Translator, load

__version__ = "0.1.0"
__all__ = ["PairScore", "Translation", "Translator", "load", "__version__"]
_TRANSLATOR_NAMES = {"PairScore", "Translation", "Translator", "load"}


def __getattr__(name: str) -> Any:
    """The translator's names, imported on first use: a process that only reads and
    encodes text (a data-preparation worker, say) never loads torch."""
    if name in _TRANSLATOR_NAMES:
        from rnnsearch import translator

        return getattr(translator, name)
    raise AttributeError(f"module 'rnnsearch' has no attribute {name!r}")
