"""Sources in, translations out: what every job of the translator shares, and what
validation runs during training.

A `Decoding` is a model (one, an ensemble, or an exported package's graphs) with the
input kind that turns given inputs into sources (rnnsearch.decoding.inputs), the target subword
model that turns found pieces into text, and the search settings (the search section
of the model's config). `decode` searches for every source, longest first in batches,
with the search `search.choice` picks, and hands back one Translation per input, in
order. Text translation, speech transcription and the scoring of given pairs
(translation/text_translation.py, transcription.py, given_pairs.py) are the jobs done
over it, each a Decoding with its own public methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import torch

from rnnsearch.alignments.counted_jumps import JumpTable, modules_table
from rnnsearch.alignments.readings import ALIGNMENT_SOURCES, ATTENTION, AlignmentSource, default_source
from rnnsearch.arguments import checked_choice, checked_count
from rnnsearch.config.search import MAX_BEAM_SIZE, SearchConfig
from rnnsearch.decoding.forced import module_alignments
from rnnsearch.decoding.inputs import END, InputKind
from rnnsearch.decoding.results import Translation
from rnnsearch.decoding.wanted import Wanted
from rnnsearch.errors import ArgumentValueError, UserError
from rnnsearch.model.ensemble import Ensemble
from rnnsearch.model.modes import evaluating
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.search import tables
from rnnsearch.search.choice import choose_search
from rnnsearch.search.contract import SearchModule
from rnnsearch.search.rules import (
    Cancelled,
    Hypothesis,
    SearchOptions,
    checked_n_best,
    max_output_lengths,
    search_options,
)
from rnnsearch.search.terms import Place
from rnnsearch.text.batches import Source
from rnnsearch.text.subwords import Subwords

SENTENCES_PER_SEARCH = 1024  # sentences handed to one search call, `search.batch_sentences` of them in flight


class Decoding:
    """A model ready to search: `decode(originals, inputs, options)` → one Translation per input."""

    no_module = "add one with `rnnsearch train-aligner MODEL_DIR`, or take 'attention'"
    """What to do about a model without an alignment module, where one is asked for: the
    Translator says otherwise where `rnnsearch train-aligner` cannot add one."""
    described = "this model"
    """The model as a message names it: the Translator gives its directory."""

    def __init__(
        self, model: SearchModule, input_kind: InputKind, tgt_subwords: Subwords, search: SearchConfig
    ) -> None:
        self.model = model
        self.input_kind = input_kind
        self.tgt_subwords = tgt_subwords
        self.search = search

    @property
    def members(self) -> list[SearchModule]:
        """The models that search together: an ensemble's members, or the model alone (an
        RNNSearch, or an exported package's model on ONNX Runtime)."""
        return list(self.model.models) if isinstance(self.model, Ensemble) else [self.model]

    @property
    def runtime(self) -> str:
        """What runs the search: "torch", or "onnx fp32" / "onnx int8" for exported packages."""
        graphs = self.model.graphs
        return "torch" if graphs is None else f"onnx {graphs}"

    @property
    def parameters(self) -> int:
        """The trained weights of the model, or of all members of an ensemble (an exported
        package's model counts the weights its graphs hold)."""
        return self.model.parameter_count

    @property
    def device(self) -> torch.device:
        """Where the model's weights are; the CPU for an exported package, whose runtime holds its own."""
        weights = next(self.model.parameters(), None)
        return torch.device("cpu") if weights is None else weights.device

    @property
    def seconds_per_vector(self) -> float | None:
        """Audio per encoder input vector for a speech model; None for text."""
        return self.input_kind.seconds_per_column

    def require_alignment(self) -> None:
        """Raise a UserError when the model has no alignment to show."""
        if not self.model.has_alignment:
            raise UserError(
                "this model has no alignment model (model.attention: none), so there is no alignment to show"
            )

    def alignment_source(self, asked: object, *, shown: bool = True) -> str:
        """What alignments are read from (`alignments.readings.ALIGNMENT_SOURCES`): `asked`, checked, or
        for None the alignment module where the model has one and the alignments are
        `shown`, else the attention (search's own α, which costs nothing more; None for a
        model without an alignment)."""
        modules = bool(self.module_members())
        if asked is None:
            return default_source(modules=modules, shown=shown)
        chosen = ALIGNMENT_SOURCES[checked_choice(asked, "alignment_from", ALIGNMENT_SOURCES)]
        if chosen.from_module and self.runtime != "torch":
            raise ArgumentValueError(
                f"alignment_from: {asked!r}: an exported package's graphs carry no alignment module; load the model "
                "directory itself to align with its module"
            )
        if chosen.from_module and not modules:
            raise ArgumentValueError(
                f"alignment_from: {asked!r}: {self.described} has no alignment module ({self.no_module})"
            )
        return chosen.name

    @property
    def aligned_members(self) -> list[SearchModule]:
        """The members whose alignments an ensemble reports (`Ensemble.aligned`), or the model alone."""
        if isinstance(self.model, Ensemble):
            return [self.model.models[m] for m in self.model.aligned]
        return [self.model]

    def module_members(self) -> list[tuple[int, RNNSearch]]:
        """The aligned members that carry an alignment module, with their place among the
        members (a model directory's RNNSearch: an exported package carries none)."""
        aligned = self.aligned_members
        return [
            (m, member)
            for m, member in enumerate(self.members)
            if isinstance(member, RNNSearch) and member.aligner is not None and member in aligned
        ]

    def module_jumps(self) -> JumpTable | None:
        """The jump table the rows of the aligned members' modules are read with: what
        they counted from their own links, an ensemble's averaged; None where one of them
        counted none (`modules_table`)."""
        modules = [member.aligner for _, member in self.module_members()]
        return modules_table([module.jumps for module in modules if module is not None])

    def widths(self, beam_size: object, n_best: object) -> tuple[int, int]:
        """The beam size (the config's for None) and n-best count asked for, checked."""
        if beam_size is None:
            beam_size = self.search.beam_size
        else:
            beam_size = checked_count(beam_size, "beam_size", maximum=MAX_BEAM_SIZE)
        n_best = checked_count(n_best, "n_best", maximum=MAX_BEAM_SIZE)
        checked_n_best(n_best, beam_size)
        return beam_size, n_best

    def spells(self, target: str) -> bool:
        """Whether the model's target pieces spell `target` (no unknown piece stands in)."""
        return bool(tables.spelled(self.tgt_subwords, [target])[0])

    def options(self, beam_size: object, n_best: object, cancelled: Cancelled | None = None) -> SearchOptions:
        """The search options of a call: its beam size and n-best count, checked, and the
        config's others; a coverage penalty needs a model with an alignment model."""
        beam_size, n_best = self.widths(beam_size, n_best)
        if self.search.coverage_penalty and not self.model.has_alignment:
            raise UserError(
                "search.coverage_penalty needs the attention weights, but this model has no alignment model "
                "(model.attention: none)"
            )
        return search_options(self.search, beam_size=beam_size, n_best=n_best, cancelled=cancelled)

    def decode(
        self,
        originals: list[str],
        inputs: Sequence[object],
        options: SearchOptions,
        *,
        first_line: int = 1,
        wanted: Wanted | None = None,
        read_from: AlignmentSource = ATTENTION,
    ) -> list[Translation]:
        """Search for every input (checked texts, or feature vectors) named by `originals`,
        and return the results in input order; a blank input without a prefix gives an
        empty translation. `first_line` numbers inputs[0] in error messages; `wanted` is
        what the call asks of each output (its prefix, its terms, the words it avoids). Where
        `read_from` is an alignment source read from the module, every hypothesis's
        alignment is the module's, computed once search has chosen its pieces (search
        itself is unchanged)."""
        sources = self.input_kind.sources(inputs, limit=self.search.max_source_length, first_line=first_line)
        blank = [
            empty and not (wanted is not None and wanted.prefixed(i))
            for i, empty in enumerate(self.input_kind.blank(inputs))
        ]
        todo = sorted(
            (i for i in range(len(sources)) if not blank[i]), key=lambda i: -self.input_kind.length(sources[i])
        )
        results = {i: _empty(originals[i]) for i in range(len(sources)) if blank[i]}
        with evaluating(self.model):
            for start in range(0, len(todo), SENTENCES_PER_SEARCH):
                chunk = todo[start : start + SENTENCES_PER_SEARCH]
                asked = None if wanted is None else wanted.share(chunk)
                hypotheses = self._search([sources[i] for i in chunk], options, asked)
                written = self._written(hypotheses, asked)
                for i, nbest, terms in zip(chunk, hypotheses, written, strict=True):
                    results[i] = self._translation(originals[i], self.input_kind.labels(sources[i]), nbest, terms)
                if read_from.from_module:
                    chunk_sources, chunk_results = [sources[i] for i in chunk], [results[i] for i in chunk]
                    self._align_with_modules(chunk_sources, hypotheses, chunk_results, read_from=read_from)
        return [results[i] for i in range(len(sources))]

    def _align_with_modules(
        self,
        sources: list[Source],
        hypotheses: list[list[Hypothesis]],
        translations: list[Translation],
        *,
        read_from: AlignmentSource,
    ) -> None:
        """Each hypothesis's alignment replaced by the alignment module's β over its pieces
        (what `read_from`, an alignment source read from the module, says):
        a teacher-forced pass of the (aligned) members that have a module, their mean for
        an ensemble, batched as search batches its sentences."""
        sides = self.model.sides if isinstance(self.model, Ensemble) else [0]
        bf16 = self.search.precision == "bf16"
        rows = []
        for m, member in self.module_members():
            pairs = [
                (sentence if len(self.input_kind.sides) == 1 else sentence[sides[m]], h.tokens)
                for sentence, nbest in zip(sources, hypotheses)
                for h in nbest
            ]
            rows.append(module_alignments(member, cast(list, pairs), self.search.batch_sentences, bf16=bf16))
        combined = iter(np.asarray(np.mean(alignments, axis=0, dtype=np.float32)) for alignments in zip(*rows))
        jumps = self.module_jumps()
        for translation in translations:
            for hypothesis in [translation, *translation.alternatives]:
                hypothesis.alignment = next(combined)[:, : len(hypothesis.source_tokens)]
                hypothesis.read_from, hypothesis.jumps = read_from, jumps

    def _search(
        self,
        sources: list[Source],
        options: SearchOptions,
        wanted: Wanted | None,
    ) -> list[list[Hypothesis]]:
        """One search call over sources in the order given, with what is `wanted` of them
        and room for each prefix, the terms and </s>."""
        src, src_lengths, side_zero_lengths = self.input_kind.tensors(sources)
        limits = max_output_lengths(side_zero_lengths, self.search.max_length_ratio, self.search.max_length_extra)
        constraints = [] if wanted is None else wanted.constraints()
        for constraint in constraints:
            limits = torch.maximum(limits, constraint.least_lengths)
        constraints = [constraint.within(limits) for constraint in constraints]
        src, src_lengths = src.to(self.device), src_lengths.to(self.device)
        search = choose_search(self.model, self.device, options, constrained=bool(constraints))
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.search.precision == "bf16"):
            return search(self.model, src, src_lengths, max_lengths=limits, options=options, constraints=constraints)

    def _written(self, hypotheses: list[list[Hypothesis]], asked: Wanted | None) -> list[list[list[Place | None]]]:
        """Where each hypothesis of each sentence wrote each of its terms, in its pieces
        (`Wanted.written`); nothing where no term was asked."""
        if asked is None:
            return [[[] for _ in nbest] for nbest in hypotheses]
        return asked.written([[h.tokens for h in nbest] for nbest in hypotheses])

    def _translation(
        self, source: str, source_tokens: list[str], nbest: list[Hypothesis], written: list[list[Place | None]]
    ) -> Translation:
        """A source's n-best list as its best Translation, the others its alternatives;
        `written`: where each hypothesis wrote each term asked of it, in its pieces."""
        source_counts = self.input_kind.word_counts(source)
        translations = [
            Translation(
                source=source,
                text=self.tgt_subwords.decode(h.tokens),
                score=h.score,
                source_tokens=source_tokens,
                target_tokens=self.tgt_subwords.pieces(h.tokens) + [END],
                alignment=None if h.alignment is None else h.alignment[:, : len(source_tokens)].numpy(),
                source_word_counts=source_counts,
                written_at=self._characters(h.tokens, places),
            )
            for h, places in zip(nbest, written, strict=True)
        ]
        best = translations[0]
        best.alternatives = translations[1:]
        return best

    def _characters(self, tokens: list[int], places: list[Place | None]) -> tuple[tuple[int, int] | None, ...]:
        """Terms' places in pieces of `tokens` as the characters they write in its text."""
        if not places:
            return ()
        spans = self.tgt_subwords.spans(tokens)
        return tuple(None if place is None else (spans[place[0]][0], spans[place[1] - 1][1]) for place in places)


def _empty(source: str) -> Translation:
    """The translation of a blank source: no text, no pieces, an empty alignment."""
    return Translation(source, "", 0.0, [], [], np.zeros((0, 0), dtype=np.float32))
