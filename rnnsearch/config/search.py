"""The search section of the config (`Config.search`): how translations are searched for,
each setting with the bounds that keep search's arithmetic finite, and the one check that
every override of it (a command's flags, `rnnsearch.load(search=…)`, the server) goes
through. rnnsearch.config holds it as `Config.search`; search/rules.py turns it into a
call's options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import Field, ValidationError

from rnnsearch.errors import ArgumentValueError
from rnnsearch.sections import Section

Precision = Literal["fp32", "bf16"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
SEARCH_PRECISIONS = (*PRECISIONS, "int8")  # int8: the quantised graphs of an exported package
RUNTIMES = ("onnx", "torch")  # what runs a model's search: ONNX Runtime (an exported package) or PyTorch


MAX_BEAM_SIZE = 64
"""The widest beam (and longest n-best list) a search may ask for, in the config, the
Python API, the CLI and the server alike: decoding time and memory grow with the beam,
and beyond a few dozen hypotheses a wider beam gains nothing."""


MAX_COVERAGE_PENALTY = 10.0
"""The largest β of the coverage penalty: ten times the top of the range Wu et al. (2016)
tried, and small enough that β times a sum of logarithms of float32 weights never
overflows a score."""


MAX_LENGTH_PENALTY = 10.0
"""The largest α of the length normalisation log p / |y|^α: ten times the usual 1, and small
enough that |y|^α stays a finite float for the longest output a search allows."""

MAX_LENGTH_RATIO = 100.0
"""The most output pieces a search allows per source word: far beyond any translation's
ratio, and small enough that the length limit stays an exact integer."""

MAX_LENGTH_EXTRA = 10_000
"""The most output pieces a search allows beyond ratio × source length."""

MAX_SOURCE_LENGTH = 100_000
"""The longest source a search may be asked to take, in pieces (search.max_source_length)."""

MAX_BATCH_SENTENCES = 100_000
"""The most sentences a search may decode together (search.batch_sentences): far beyond
what any device gains from, and small enough that a batch's index arithmetic is exact."""


class SearchConfig(Section):
    beam_size: int = Field(5, ge=1, le=MAX_BEAM_SIZE)
    length_penalty: float = Field(1.0, ge=0.0, le=MAX_LENGTH_PENALTY, description="alpha in score / length**alpha")
    coverage_penalty: float = Field(
        0.0,
        ge=0.0,
        le=MAX_COVERAGE_PENALTY,
        description="beta of GNMT's coverage penalty beta * sum_j log(min(sum_i alpha_ij, 1)), added to the "
        f"length-normalised score of finished hypotheses, at most {MAX_COVERAGE_PENALTY:g}; 0: none",
    )
    max_length_ratio: float = Field(
        2.0, gt=0, le=MAX_LENGTH_RATIO, description="output pieces allowed per source word (with max_length_extra)"
    )
    max_length_extra: int = Field(
        10, ge=0, le=MAX_LENGTH_EXTRA, description="output pieces allowed beyond ratio × source length"
    )
    batch_sentences: int = Field(64, gt=0, le=MAX_BATCH_SENTENCES, description="sentences decoded together")
    max_source_length: int = Field(
        250, gt=0, le=MAX_SOURCE_LENGTH, description="longer inputs are refused with an error, not cut"
    )
    precision: Precision = Field(
        "fp32",
        description="bf16: search under bfloat16 autocast, faster on CPUs with AVX-512 BF16 or AMX and, by less, "
        "on an H100 (BENCHMARKS.md); scores and attention weights stay fp32, but rounding can change a few outputs",
    )

    def overridden(self, overrides: Mapping[str, object]) -> SearchConfig:
        """This section with `overrides` (search keys → values: what a command's flags, the
        Python API's `load` and the server ask for) applied, the whole section checked
        again by its own rules: the one check every override goes through. A key the
        section lacks, or a value its rule refuses, is an ArgumentValueError naming it."""
        unknown = sorted(key for key in overrides if key not in SearchConfig.model_fields)
        if unknown:
            raise ArgumentValueError(
                f"search: {unknown[0]!r} is not a search setting; choose from {', '.join(SearchConfig.model_fields)}"
            )
        try:
            return SearchConfig.model_validate({**self.model_dump(), **overrides})
        except ValidationError as error:
            problem = error.errors()[0]
            key = str(problem["loc"][0])
            raise SearchSettingError(key, overrides.get(key), problem["msg"]) from None


class SearchSettingError(ArgumentValueError):
    """A search setting's override that the search section's rule refuses: `reason` says
    why, in the config's words."""

    def __init__(self, key: str, value: object, reason: str):
        super().__init__(f"{key}: {value!r}: {reason}")
        self.reason = reason


def checked_search_setting(key: str, value: object) -> Any:
    """`value` for search.`key`, checked by `SearchConfig.overridden`, as a command's flag
    is; a value the rule refuses is a SearchSettingError."""
    return getattr(SearchConfig().overridden({key: value}), key)
