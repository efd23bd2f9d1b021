"""The HTTP API's request and response bodies, as pydantic models.

They are what FastAPI validates against and what /openapi.json (and /docs) describe,
so every bound a request must respect is declared here rather than checked by hand.
The request model is built per server because its size limits are server options.
"""

import sys
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    WithJsonSchema,
    create_model,
)
from pydantic_core import PydanticCustomError

from rnnsearch.alignments.readings import ALIGNMENT_SOURCES
from rnnsearch.config import SubwordConfig
from rnnsearch.config.search import MAX_BEAM_SIZE, SearchConfig
from rnnsearch.markup import MARKUPS, PLACEMENTS
from rnnsearch.model.settings import ModelConfig
from rnnsearch.server.limits import Limits
from rnnsearch.text.corpus import is_blank
from rnnsearch.text.glossary import MAX_TERM_CHARS

if TYPE_CHECKING:  # the names a request may give, from the registries: any str to the type checker
    AlignmentFrom = str
    MarkupName = str
    PlacementName = str
else:
    AlignmentFrom = Literal[tuple(ALIGNMENT_SOURCES)]
    MarkupName = Literal[MARKUPS]
    PlacementName = Literal[tuple(PLACEMENTS)]


class ErrorBody(BaseModel):
    """Every error answer: one line saying what is wrong."""

    error: str = Field(examples=["texts.0: String should have at most 2000 characters"])


def _integral_number(value: object) -> object:
    """2.0 as 2: JSON Schema's "integer", which the API's schema states, counts any number
    without a fractional part; other values go on to the strict check, which refuses "2" and true."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


BeamWidth = Annotated[int, Field(ge=1, le=MAX_BEAM_SIZE), BeforeValidator(_integral_number)]
"""A beam size or n-best count: an integer as JSON Schema defines it (3 and 3.0 alike, not 3.5,
"3" or true). The bounds come before the validator so that the schema states them as
minimum and maximum."""


class TranslateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    beam_size: BeamWidth | None = Field(None, description="1 is greedy search; default: the model's search.beam_size")
    n_best: BeamWidth = Field(1, description="hypotheses per text, at most the beam size")
    alignments: bool = Field(True, description="include each hypothesis's alignment matrix")
    alignment_from: AlignmentFrom | None = Field(
        None,
        description="what the alignments are read from: aligner, the model's alignment module, which sees each "
        "target word it aligns, or attention (α); default: the module where the model has one",
    )


def translate_request_model(
    limits: Limits, audio_chars: int | None = None, *, sample_rate: int | None = None
) -> type[TranslateOptions]:
    """The request body of POST /v1/translate, with this server's size limits in its schema.

    A text model takes `texts`; a speech model (audio_chars: the longest base64 WAV it
    takes, see `audio_base64_chars`; sample_rate: its recordings' rate) takes `audio` instead.
    """
    if audio_chars is not None:
        return _audio_request(limits, audio_chars, sample_rate)
    return _text_request(limits)


def _audio_request(limits: Limits, audio_chars: int, sample_rate: int | None) -> type[TranslateOptions]:
    """The request of a speech model: `audio`, recordings of at most `audio_chars` base64 characters."""
    item = Annotated[str, Field(max_length=audio_chars)]
    audio = Annotated[
        list[item],
        Field(
            min_length=1,
            max_length=limits.max_texts,
            description=(
                f"recordings to transcribe, one per item: base64-encoded WAV files, {sample_rate} Hz PCM "
                f"(8- or 16-bit, mono or averaged to mono), at most {limits.max_audio_seconds:g} s each"
            ),
            examples=[["UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="]],
        ),
    ]
    return create_model("TranslateRequest", __base__=TranslateOptions, audio=(audio, ...))


@cache
def _not_blank_pattern() -> str:
    """The JSON schema pattern of a text that holds a character other than white space, white
    space as `is_blank` reads it (`str.strip`'s, the glossary's). A regular expression's
    own `\\s` is not that: JSON Schema's (ECMAScript's) counts U+FEFF and leaves out U+0085
    and U+001C to U+001F, and pydantic's (Rust's) leaves out U+001C to U+001F."""
    white = (character for character in map(chr, range(sys.maxunicode + 1)) if character.isspace())
    return "[^" + "".join(f"\\u{ord(character):04x}" for character in white) + "]"


def _not_blank(text: str) -> str:
    """`text`, a term: refused if blank (`is_blank`, the rule the glossary strips its terms by),
    in one line naming where it was given, before the glossary is read."""
    if is_blank(text):
        raise PydanticCustomError("blank", "a term holds more than white space")
    return text


def _terms_schema(term: Any, most: int) -> dict:
    """The JSON schema of a glossary as the server checks it: at most `most` entries, every
    key and every value a `term` (its schema pydantic's). Pydantic's own schema of the
    dictionary states the keys' pattern as `patternProperties`, under which a blank key
    matches no pattern and its value goes unchecked: a request the schema calls valid, and
    the server refuses."""
    schema = TypeAdapter(term).json_schema()
    return {"type": "object", "maxProperties": most, "propertyNames": schema, "additionalProperties": schema}


Fields = dict[str, Any]
"""A model's fields as pydantic's create_model takes them: each name's (annotation, default)."""


def _text_request(limits: Limits) -> type[TranslateOptions]:
    """The request of a text model: `texts`, with their `prefixes`, `markup`, `glossary` and `avoid`."""
    fields = {**_text_fields(limits), **_markup_fields(), **_term_fields(limits)}
    return create_model("TranslateRequest", __base__=TranslateOptions, **fields)


def _text_fields(limits: Limits) -> Fields:
    """The texts of a request and their prefixes, bounded by `limits`."""
    text = Annotated[str, Field(max_length=limits.max_chars)]
    texts = Annotated[
        list[text],
        Field(
            min_length=1,
            max_length=limits.max_texts,
            description="sentences to translate, one per item; an empty text gives an empty translation",
            examples=[["Ein Hund läuft durch den Schnee."]],
        ),
    ]
    prefixes = Annotated[
        list[text] | None,
        Field(
            description=(
                'target text each translation must start with, one per text ("" for none; another count is '
                "a 422); search goes on from the prefix, and the score and alignment cover it"
            ),
            examples=[["A dog"]],
        ),
    ]
    return {"texts": (texts, ...), "prefixes": (prefixes, None)}


def _markup_fields() -> Fields:
    """How a request's markup is read and placed."""
    markup = Annotated[
        MarkupName | None,
        Field(
            description=(
                "read each text as a line with inline markup (<b>…</b>, <a href=…>, <br/>, &amp;): its text is "
                "translated, and each hypothesis's `marked_up` is its translation with the markup put back around "
                "the words aligned to those it enclosed; a text whose markup is not well-formed is a 422"
            ),
            examples=["html"],
        ),
    ]
    placement = Annotated[
        PlacementName | None,
        Field(
            description=(
                "with `markup`, how its tags are placed: 'links', from the first to the last word linked to "
                "theirs; 'weights', around the span the alignment's weights make likeliest for them; 'tempered', "
                "by the weights, the alignment module's jump table read looser (reordered phrases keep their words); "
                "'averaged', by the weights (two directions' averaged, where `align` has a reverse model); "
                "default: the measured best, 'tempered' where the alignment module is read, else 'links'"
            ),
            examples=["tempered"],
        ),
    ]
    return {"markup": (markup, None), "placement": (placement, None)}


def _term_fields(limits: Limits) -> Fields:
    """A request's own terms and the words it avoids, bounded by `limits`."""
    term = Annotated[
        str,
        Field(min_length=1, max_length=MAX_TERM_CHARS, json_schema_extra={"pattern": _not_blank_pattern()}),
        AfterValidator(_not_blank),
    ]
    glossary = Annotated[
        Annotated[dict[term, term], WithJsonSchema(_terms_schema(term, limits.max_glossary_terms))] | None,
        Field(
            max_length=limits.max_glossary_terms,
            description=(
                "the request's own terms, each source term mapped to what it must be translated as (itself: kept as "
                "written); every term found in a text, on whole words and in any case, is written in its "
                "translation. Laid over the server's glossary (`serve --glossary`): where both hold a term, the "
                f"request's target is written. At most {limits.max_glossary_terms} terms; a target the model's "
                "pieces cannot spell is a 422"
            ),
            examples=[{"Hund": "hound"}],
        ),
    ]
    avoid = Annotated[
        list[term] | None,
        Field(
            max_length=limits.max_glossary_terms,
            description=(
                "words and phrases no translation may write (on whole words, in any case, however the model's "
                f"pieces would spell one), as `translate --avoid` reads them; at most {limits.max_glossary_terms}"
            ),
            examples=[["dog"]],
        ),
    ]
    return {"glossary": (glossary, None), "avoid": (avoid, None)}


WAV_HEADER_ROOM = 4096
"""Bytes a WAV file may hold besides its samples: the RIFF header and extra chunks (LIST, fact)."""


def audio_base64_chars(seconds: float, sample_rate: int) -> int:
    """Characters of the base64 encoding of a 16-bit mono WAV file of `seconds` at `sample_rate`."""
    size = int(seconds * sample_rate) * 2 + WAV_HEADER_ROOM
    return 4 * -(-size // 3)


class Term(BaseModel):
    """One of the glossary's terms found in a text."""

    source: str = Field(description="the term as the glossary gives it")
    target: str = Field(description="what it must be translated as")
    found: int = Field(description="how many times it was found in the text")
    where: list[list[int]] = Field(
        description="each place its target stands in the translation, [start, end) in characters; empty: not written"
    )


class Terms(BaseModel):
    """The glossary's terms a text holds, and which its translation writes."""

    found: int = Field(description="how many of the glossary's terms (by target) the text holds")
    written: int = Field(description="how many of them the translation writes")
    terms: list[Term] = Field(description="each term found, with where its target is written")


class Hypothesis(BaseModel):
    """One translation of a text."""

    text: str = Field(description="the translation, detokenised")
    score: float = Field(
        description="log p(translation | text) / length ** search.length_penalty, plus the coverage penalty if set"
    )
    target_tokens: list[str] = Field(description="the translation's subword pieces, ending with </s>")
    alignment: list[list[float]] | None = Field(
        None,
        description=(
            "weights α_ij (or the module's β_ij): one row per target piece, one column per source piece, each row "
            "summing to 1, or, from a module with NULL (model.aligner_null), to 1 less the weight the piece gives "
            "to no source piece; "
            "null when alignments were not asked for or the model has no alignment model"
        ),
    )
    alignment_from: AlignmentFrom | None = Field(
        None, description="what `alignment` is: attention (α) or aligner (the alignment module's β); null without one"
    )
    terms: Terms | None = Field(
        None, description="with a glossary (the server's or the request's), its terms found in the text and written"
    )
    marked_up: str | None = Field(
        None,
        description="with `markup` in the request, the translation with the text's markup put back (escaped "
        "text and the text's own tags: show it as text, or sanitise it before rendering it); null otherwise",
    )


class Translation(Hypothesis):
    """The best translation of a text, with the rest of its n-best list."""

    source_tokens: list[str] = Field(
        description=(
            "the text's subword pieces, ending with </s>; empty for an empty text; for audio, the start time "
            "of each encoder input vector, such as 0.03s"
        )
    )
    alternatives: list[Hypothesis] = Field(
        default_factory=list, description="the rest of the n-best list, best first; empty when n_best is 1"
    )


class TranslateResponse(BaseModel):
    translations: list[Translation] = Field(description="one per text (or recording), in order")


class Health(BaseModel):
    status: str = Field(examples=["ok"])


class TrainingFigures(BaseModel):
    """What the model directory's metrics.jsonl says about training."""

    steps: int = Field(description="training steps logged")
    validations: int
    valid_score: str = Field(
        description="the model's quality score, as metrics.jsonl names it: valid_bleu (greedy BLEU) for text, "
        "valid_der (digit error rate, %) for spoken digits",
    )
    valid_score_label: str = Field(description="that score in words", examples=["validation BLEU"])
    best_valid_score: float | None = Field(description="its best value logged: the highest, or the lowest error")
    best_valid_perplexity: float | None = Field(description="lowest validation perplexity")


class ServedLimits(BaseModel):
    max_texts: int = Field(description="texts (or recordings) per request")
    max_chars: int = Field(description="characters per text")
    max_source_pieces: int = Field(
        description="subword pieces per text, or input vectors per recording (the model's search.max_source_length)"
    )
    max_audio_seconds: float | None = Field(description="seconds per recording; null for a text model")
    timeout_seconds: float
    max_beam_size: int
    max_glossary_terms: int = Field(description="entries of a request's own glossary, and of its avoid list")
    max_term_chars: int = Field(description="characters per glossary term, target or avoided phrase")


class ModelInfo(BaseModel):
    """The served model: languages, vocabularies, architecture and how it was trained."""

    input: Literal["text", "audio"] = Field(
        description="what the model reads: text sent in `texts`, or audio sent as WAV files in `audio`"
    )
    source_language: str
    target_language: str
    source_vocabulary: int | None = Field(description="subword pieces in the source vocabulary; null for audio")
    target_vocabulary: int
    parameters: int = Field(description="trainable parameters, of all members together for an ensemble")
    members: int = Field(1, description="models decoding together: more than 1 for an ensemble")
    runtime: str = Field(
        "torch", description="what runs the search: torch, or onnx fp32 / onnx int8 for an exported package"
    )
    has_alignment: bool = Field(description="false for the fixed-context baseline (model.attention: none)")
    architecture: ModelConfig = Field(description="the model section of the model's config.yaml")
    subwords: SubwordConfig
    search: SearchConfig = Field(description="search settings, whose beam_size is the default")
    training: TrainingFigures | None = Field(description="null when the model directory has no metrics.jsonl")
    sample_rate: int | None = Field(description="the sample rate WAV files must have, in Hz; null for text")
    seconds_per_vector: float | None = Field(
        description="audio per encoder input vector, the time step of source_tokens; null for text"
    )
    limits: ServedLimits
