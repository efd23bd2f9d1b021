"""The Python API (`rnnsearch.load`): a trained model, or an ensemble of them, ready to
translate text, transcribe speech, or score and align given translations.

`Translator` is the one object users hold. What its jobs share (the model, its input
kind, the target subword model, the search) is a `Decoding` (rnnsearch.decoding.decoding); each
job is a `Decoding` that does one kind of work, with its public methods and their
documentation: text_translation.py, document_translation.py, transcription.py and
given_pairs.py. The Translator is all of them at once, with nothing between it and them. Loading a model directory, an
exported package or an ensemble is rnnsearch.translation.assembly's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rnnsearch.config import Config
from rnnsearch.config.search import MAX_BEAM_SIZE
from rnnsearch.decoding.decoding import SENTENCES_PER_SEARCH
from rnnsearch.decoding.inputs import check_source_lengths
from rnnsearch.decoding.results import PairScore, Translation
from rnnsearch.devices import resolve_device
from rnnsearch.documents.translating import TranslatedDocument
from rnnsearch.kinds import data_kind
from rnnsearch.search.contract import SearchModule
from rnnsearch.text.subwords import Subwords
from rnnsearch.translation.assembly import ModelDirs, assemble
from rnnsearch.translation.document_translation import DocumentTranslation
from rnnsearch.translation.given_pairs import GivenPairs
from rnnsearch.translation.transcription import Transcription

__all__ = [
    "MAX_BEAM_SIZE",
    "SENTENCES_PER_SEARCH",
    "ModelDirs",
    "PairScore",
    "TranslatedDocument",
    "Translation",
    "Translator",
    "check_source_lengths",
    "load",
    "resolve_device",
]


class Translator(DocumentTranslation, Transcription, GivenPairs):
    """A trained model (or an ensemble) ready to translate texts, transcribe speech, and
    score and align given translations: `translate` and `translate_chunks`
    (text_translation.py), `translate_documents` (document_translation.py),
    `transcribe`, `transcribe_files` and `translate_vectors` (transcription.py),
    `score`, `score_chunks`, `align` and `align_chunks` (given_pairs.py), each
    documented where its work is done, over the one `Decoding` they share. Made by
    `load`; for a speech model, `transcribe(audio, names)`."""

    def __init__(
        self,
        model: SearchModule,
        src_subwords: Subwords | None,
        tgt_subwords: Subwords,
        config: Config,
        *,
        source_sides: Sequence[Subwords | None] | None = None,
        exported: bool = False,
        described: str = "this model",
    ):
        """src_subwords is None for a speech model, whose source is audio. For an ensemble
        whose members read the source in different pieces, `source_sides` are their
        source subword models by side number (see Ensemble); src_subwords is side 0's,
        the pieces alignments are over. `described` names the model in messages (`load`
        gives its directory)."""
        self.src_subwords = src_subwords
        self.source_sides = list(source_sides) if source_sides else [src_subwords]
        self.kind = data_kind(config)
        super().__init__(model, self.kind.input(config, self.source_sides), tgt_subwords, config.search)
        self.described = described
        self.target_language = config.data.tgt_lang
        self.data = config.data
        if not config.data.aligns_words:
            self.no_module = f"{config.data.described} has no words to align, so none can be added; take 'attention'"
        elif exported:
            self.no_module = (
                "an exported package carries none: load the model directory it was exported from, after "
                "`rnnsearch train-aligner MODEL_DIR` added one, or take 'attention'"
            )

    def source_pieces(self, texts: Sequence[str]) -> list[int]:
        """How many source pieces each text is, in the side that cuts it into the most:
        the count search.max_source_length bounds."""
        return self.input_kind.pieces(texts)


def load(
    model_dir: ModelDirs,
    device: str = "auto",
    precision: str | None = None,
    batch_sentences: int | None = None,
    *,
    runtime: str | None = None,
    coverage_penalty: float | None = None,
    search: Mapping[str, object] | None = None,
) -> Translator:
    """A Translator for the trained model in `model_dir` (best weights if there are any), or
    for an ensemble of the models in a list of directories (see rnnsearch.model.ensemble);
    `precision` (fp32, bf16, or int8 for an exported package) and `batch_sentences`
    override the search section of the model's config, for an ensemble the first member's.

    A package that `rnnsearch export` wrote runs on ONNX Runtime, on the CPU, unless
    `runtime` is "torch"; `runtime` "onnx" requires one. `coverage_penalty` overrides
    search.coverage_penalty (β of the coverage penalty that ranks beam search's finished
    hypotheses; 0: none). `search` overrides any key of the search section, as
    {"coverage_penalty": 0.5, "max_length_ratio": 1.5}; every override is checked by the
    section's own rules, as the config's values are, and one that breaks them is a
    ValueError naming the key.

    The members of an ensemble must share the target subword model and read the same kind
    of input; each keeps its own source subword model.
    """
    assembled = assemble(
        model_dir, device, precision, batch_sentences, runtime=runtime, coverage_penalty=coverage_penalty, search=search
    )
    sides = assembled.source_sides
    return Translator(
        assembled.model,
        sides[0],
        assembled.tgt_subwords,
        assembled.config,
        source_sides=sides,
        exported=assembled.exported,
        described=assembled.described,
    )
