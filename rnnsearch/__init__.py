"""rnnsearch: attentional encoder–decoder models (Bahdanau, Cho & Bengio 2015).

model = rnnsearch.load("runs/de-en")
for t in model.translate(["Ein Hund läuft im Schnee."], beam_size=5):
    print(t.text, t.score, t.alignment.shape)
"""

from rnnsearch.translator import Translation, Translator, load

__version__ = "0.1.0"
__all__ = ["Translation", "Translator", "load", "__version__"]
