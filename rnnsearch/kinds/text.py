"""Parallel text: subword pieces in, subword pieces out (rnnsearch.kinds)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rnnsearch.config import Config
from rnnsearch.config.data import files_section
from rnnsearch.decoding.inputs import TextInput, check_source_lengths
from rnnsearch.decoding.results import TermReport
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.kinds.jobs import KindTranslator, RequestT
from rnnsearch.text.corpus import read_lines, read_parallel, require_usable_pairs
from rnnsearch.text.subwords import Subwords, text_source

if TYPE_CHECKING:  # a run's data is made by training's modules, which translating never loads
    from rnnsearch.decoding.results import Translation
    from rnnsearch.evaluation.metrics import Evaluation, EvaluationRequest
    from rnnsearch.training.distributed import World
    from rnnsearch.training.run_data import Corpus


def test_set(src: str, ref: str) -> tuple[list[str], list[str]]:
    """The lines of `evaluate`'s --src and --ref: as many of each, and at least one."""
    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise UserError(f"{src} has {len(sources)} lines but {ref} has {len(references)}")
    if not sources:
        raise UserError(f"{src}: no lines, nothing to evaluate")
    return sources, references


class TextData:
    """Parallel text (data.kind text): the model translates subword pieces."""

    name = "text"
    refused_options: tuple[tuple[str, str], ...] = ()  # `translate` takes every option for text

    @staticmethod
    def input(config: Config, sides: Sequence[Subwords | None]) -> TextInput:
        """Sources as the pieces of every source side (text has a subword model on each)."""
        missing = [n for n, side in enumerate(sides) if side is None]
        if missing:
            raise UserError(f"source side {missing[0]}: a text model needs its source subword model; none was given")
        return TextInput([side for side in sides if side is not None])

    @staticmethod
    def prepare_corpus(
        config: Config, model_dir: Path, resume: bool, world: World
    ) -> tuple[Corpus, Subwords, Subwords]:
        """Check the validation set, prepare the training data on disk (or reuse it) and map it.

        Rank 0 prepares, while the other ranks wait, then every rank maps the same files. A
        resumed run encodes with its model directory's subword models, a fine-tuning run
        with those of the model it starts from.
        """
        from rnnsearch.prepared import PreparedPairs, ensure_prepared, prepared_dir
        from rnnsearch.training.run_data import PREPARATION_TIMEOUT, Corpus, encode_validation

        data = files_section(config.data)
        valid_sources, valid_references = read_parallel(data.valid.src, data.valid.tgt)
        require_usable_pairs(valid_sources, valid_references, data.valid.src, data.valid.tgt, purpose="validation")
        given = _given_subwords(config, model_dir, resume)
        directory = prepared_dir(config, model_dir)
        if world.is_main:
            ensure_prepared(config, directory, given)
        world.barrier(PREPARATION_TIMEOUT)
        train = PreparedPairs(directory)
        src_subwords, tgt_subwords = given or train.subwords
        # each validation greedily translates the sources: one the search would refuse is found now, not then
        check_source_lengths(src_subwords.encode(valid_sources), config.search.max_source_length, str(data.valid.src))
        valid = encode_validation(valid_sources, valid_references, src_subwords, tgt_subwords, data.max_length)
        if not len(valid):  # validation loss is per target token: it needs one pair at least
            raise UserError(
                f"{data.valid.src}: no usable validation pairs (each is blank or longer than "
                f"data.max_length = {data.max_length} pieces)"
            )
        if world.is_main and not resume:  # the model directory's files, once everything is checked
            model_directory.save_model_files(model_dir, config, src_subwords, tgt_subwords)
        return Corpus(train, valid, valid_sources, valid_references), src_subwords, tgt_subwords

    @staticmethod
    def validation_scores(hypotheses: list[str], references: list[str]) -> MetricsRow:
        """Greedy BLEU."""
        from rnnsearch.evaluation.metrics import bleu

        return {"valid_bleu": bleu(hypotheses, references).value}

    @staticmethod
    def scores_line(row: MetricsRow, suffix: str = "") -> str:
        """The validation scores of `row` in words; `suffix` "_all": those of the whole set."""
        value = f"{row[f'valid_bleu{suffix}']:.2f}"
        return value if suffix else f"BLEU {value}"

    @staticmethod
    def translate_lines(translator: KindTranslator[RequestT], lines: list[str], request: RequestT) -> list[Translation]:
        """Sentences translated."""
        return translator.translate_with(request, lines)

    @staticmethod
    def translate_chunks(
        translator: KindTranslator[RequestT],
        chunks: Iterator[list[str]],
        request: RequestT,
        *,
        prefix_chunks: Iterator[list[str]] | None = None,
    ) -> Iterator[list[Translation]]:
        """`translate`'s input lines, a chunk at a time, as the request asks, with their prefixes."""
        return translator.translate_chunks_with(request, chunks, prefix_chunks=prefix_chunks)

    @staticmethod
    def evaluate(translator: KindTranslator[RequestT], asked: EvaluationRequest, request: RequestT) -> Evaluation:
        """`rnnsearch evaluate`: `asked.src` translated and scored against `asked.ref` with
        sacreBLEU and chrF (or lowercased tokenised BLEU), repeated words, BLEU by length, and
        with a glossary the share of its terms found in the sources that are written (the
        WMT terminology task's term success rate)."""
        from rnnsearch.evaluation import metrics
        from rnnsearch.evaluation.repetition import repetitions

        if not (asked.src and asked.ref):
            raise UserError("evaluate: a text model needs --src and --ref")
        sources, references = test_set(asked.src, asked.ref)
        translations = translator.translate_with(request, sources)
        hypotheses = [t.text for t in translations]
        if asked.lowercase_tokenized:
            cased = next((n for n, line in enumerate(references, start=1) if line != line.lower()), None)
            if cased is not None:
                raise UserError(
                    f"{asked.ref}, line {cased}: has capitals, but --lowercase-tokenized compares against lowercased "
                    "tokenised references (such as data/multi30k/tok/*.lc.norm.tok.*)"
                )
            scores = [metrics.bleu_lowercase_tokenized(hypotheses, references, translator.target_language)]
        else:
            scores = [metrics.bleu(hypotheses, references), metrics.chrf(hypotheses, references)]
        repeated = repetitions(hypotheses, references)
        details: dict[str, object] = {
            "repeated_words": {
                "per_100_words": round(repeated.per_100_words, 2),
                "repeated": repeated.repeated,
                "words": repeated.words,
            }
        }
        notes = [
            f"repeated words = {repeated.per_100_words:.2f} per 100 ({repeated.repeated:,} of {repeated.words:,}: "
            "a 1- or 2-gram again, more often than the reference has it)"
        ]
        if asked.glossary:
            terms = TermReport.total(t.terms for t in translations)
            found, written = terms.found, terms.written
            details["terms"] = {"found": found, "written": written}
            rate = 100 * written / found if found else 100.0
            notes.append(f"glossary terms written = {rate:.2f}% ({written:,} of the {found:,} found in the sources)")
        if asked.by_length:
            buckets = metrics.bleu_by_length(hypotheses, references, [len(s.split()) for s in sources])
            rows = [{"words": label, "sentences": count, "bleu": round(value, 2)} for label, count, value in buckets]
            details["bleu_by_source_length"] = rows
            notes += [
                f"source words {r['words']:>6}: {r['sentences']:5d} sentences, BLEU {r['bleu']:6.2f}" for r in rows
            ]
        return metrics.Evaluation(scores, notes=notes, details=details)


def _given_subwords(config: Config, model_dir: Path, resume: bool) -> tuple[Subwords, Subwords] | None:
    """The subword models a run must encode its data with: its own when resumed, those of
    train.init_from when fine-tuning, else None (learnt from the data). Text has a source
    subword model, where the model directory's files allow for none."""
    if resume:
        owner: object = model_dir
        given = model_directory.load_model_files(model_dir)[1:]
    elif config.train.init_from:
        from rnnsearch.training import checkpoint

        owner = config.train.init_from
        given = checkpoint.init_from_subwords(owner, config.model, data_kind=config.data.kind)
    else:
        return None
    return text_source(given[0], owner), given[1]
