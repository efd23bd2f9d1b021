"""Translations as HTML for Jupyter: the text, and the alignment α as an inline SVG
heatmap drawn like Figure 3 of Bahdanau et al. (2015) (source along the top, target
down the side, black = 0, white = 1).

The SVG is written here, as text: no network, no plotting library, nothing for the
notebook to fetch, and every token escaped. `Translation._repr_html_` and its kin in
decoding/results.py and words.py call these functions; this module reads their fields
and imports neither.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from rnnsearch.alignments.readings import AlignmentSource

CELL = 22  # pixels per cell of a short source
NARROW_CELL = 4  # pixels per column of a long source (audio frames, say)
NARROW_FROM = 60  # source columns from which cells are narrow and only some columns are labelled
CHAR = 7.5  # pixels per character of a 12-pixel label, roughly
LABEL_EVERY = 48  # pixels between labels of narrow columns


class Aligned(Protocol):
    """What a translation and a scored pair both show: the source, the pieces of both
    sides, and the alignment between them with what it was read from."""

    @property
    def source(self) -> str: ...

    @property
    def source_tokens(self) -> list[str]: ...

    @property
    def target_tokens(self) -> list[str]: ...

    @property
    def alignment(self) -> np.ndarray | None: ...

    @property
    def read_from(self) -> AlignmentSource:
        """What its weights were read from."""
        ...


class Shown(Aligned, Protocol):
    """A translation as decoding/results.py's Translation holds it."""

    @property
    def text(self) -> str: ...

    @property
    def score(self) -> float: ...

    @property
    def alternatives(self) -> Sequence[Shown]: ...


class Scored(Aligned, Protocol):
    """A given pair and its score, as decoding/results.py's PairScore holds them."""

    @property
    def target(self) -> str: ...

    @property
    def log_prob(self) -> float: ...


class Linked(Protocol):
    """A word alignment, as words.py's WordAlignment holds it."""

    @property
    def source_words(self) -> list[str]: ...

    @property
    def target_words(self) -> list[str]: ...

    @property
    def weights(self) -> np.ndarray: ...

    @property
    def pairs(self) -> list[tuple[int, int]]: ...

    @property
    def read_from(self) -> AlignmentSource:
        """What its weights were read from."""
        ...


def translation_html(translation: Shown) -> str:
    """A translation's text and score, its alignment heatmap (`read_from` says what it
    was read from), and its alternatives."""
    rows = [_line("source", translation.source), _line("translation", translation.text)]
    rows.append(f"<div>score {translation.score:.3f}</div>")
    figure = _figure(translation.alignment, translation.source_tokens, translation.target_tokens)
    figure += _read_from(translation.read_from.described) if translation.alignment is not None else ""
    alternatives = "".join(
        f"<li>{html.escape(other.text)} <small>({other.score:.3f})</small></li>" for other in translation.alternatives
    )
    more = f"<div>alternatives:<ol start='2'>{alternatives}</ol></div>" if alternatives else ""
    return _box("".join(rows) + figure + more)


def pair_html(pair: Scored) -> str:
    """A scored pair's texts, its log-probability and the alignment of its target (read
    from what `read_from` says)."""
    rows = [_line("source", pair.source), _line("target", pair.target)]
    rows.append(f"<div>log p(target | source) = {pair.log_prob:.3f}</div>")
    figure = _figure(pair.alignment, pair.source_tokens, pair.target_tokens)
    return _box("".join(rows) + figure + (_read_from(pair.read_from.described) if pair.alignment is not None else ""))


def word_alignment_html(alignment: Linked) -> str:
    """A word alignment's merged weights, its links outlined in red (read from what
    `read_from` says)."""
    figure = _figure(alignment.weights, alignment.source_words, alignment.target_words, links=alignment.pairs)
    return _box(figure + _read_from(alignment.read_from.described))


def _read_from(described: str) -> str:
    """A line saying what an alignment was read from."""
    return f"<div><small>{html.escape(described)}</small></div>"


def heatmap_svg(
    weights: np.ndarray,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    *,
    links: Sequence[tuple[int, int]] = (),
) -> str:
    """`weights` (target × source) as an SVG heatmap, each cell titled with its pieces and α.

    A long source (from NARROW_FROM columns on: audio frames) gets narrow columns, a label
    every few of them, and a gray scale up to its largest weight, which it names, since
    attention spread over many frames would be too dark to see on the 0–1 scale.
    `links` are (source, target) index pairs outlined in red.
    """
    weights = np.asarray(weights, dtype=float)
    rows, columns = weights.shape
    narrow = columns >= NARROW_FROM
    width = NARROW_CELL if narrow else CELL
    every = max(1, round(LABEL_EVERY / width)) if narrow else 1
    top = 8 + CHAR * max((len(t) for t in source_tokens[::every]), default=1) * 0.8
    left = 8 + CHAR * max((len(t) for t in target_tokens), default=1)
    scale = float(weights.max()) if narrow and weights.size and weights.max() > 0 else 1.0
    parts = []
    for j in range(0, columns, every):
        x, y = left + (j + 0.5) * width, top - 4
        label = html.escape(source_tokens[j])
        parts.append(f'<text x="{x:.1f}" y="{y:.1f}" transform="rotate(-55 {x:.1f} {y:.1f})">{label}</text>')
    for i in range(rows):
        y = top + (i + 0.7) * CELL
        parts.append(f'<text x="{left - 4:.1f}" y="{y:.1f}" text-anchor="end">{html.escape(target_tokens[i])}</text>')
        for j in range(columns):
            shade = round(255 * min(1.0, weights[i, j] / scale))
            title = html.escape(f"{target_tokens[i]} → {source_tokens[j]}: α = {weights[i, j]:.3f}")
            parts.append(
                f'<rect x="{left + j * width:.1f}" y="{top + i * CELL:.1f}" width="{width}" height="{CELL}" '
                f'fill="rgb({shade},{shade},{shade})"><title>{title}</title></rect>'
            )
    for j, i in links:
        parts.append(
            f'<rect x="{left + j * width + 1:.1f}" y="{top + i * CELL + 1:.1f}" width="{width - 2}" '
            f'height="{CELL - 2}" fill="none" stroke="#d62728" stroke-width="2"/>'
        )
    overhang = 0.6 * CHAR * max((len(t) for t in source_tokens[::every]), default=1)  # the last rotated label
    total_width, total_height = left + columns * width + overhang, top + rows * CELL + 8
    caption = f"<div><small>gray scale: white = α {scale:.3f}</small></div>" if scale != 1.0 else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" height="{total_height:.0f}" '
        f'font-family="sans-serif" font-size="12" role="img">{"".join(parts)}</svg>{caption}'
    )


def _figure(
    alignment: np.ndarray | None,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    *,
    links: Sequence[tuple[int, int]] = (),
) -> str:
    """The heatmap, or why there is none."""
    if alignment is None:
        return (
            "<div><i>no alignment: this model (model.attention: none) reads one fixed context vector "
            "for the whole sentence</i></div>"
        )
    if alignment.size == 0:
        return ""
    return f"<div>{heatmap_svg(alignment, source_tokens, target_tokens, links=links)}</div>"


def _line(name: str, text: str) -> str:
    return f"<div><b>{name}</b>: {html.escape(text)}</div>"


BOX_STYLE = "font-family: sans-serif; line-height: 1.5; overflow-wrap: anywhere"


def _box(body: str) -> str:
    return f'<div class="rnnsearch" style="{BOX_STYLE}">{body}</div>'
