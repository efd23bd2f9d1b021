"""How `translate` and `align` write alignments: a JSON row of tokens and α matrices, and
a Pharaoh line of word links, one each per input line or pair."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rnnsearch.translator import Translation


def alignment_row(translation: Translation) -> dict:
    """The translation's tokens and each hypothesis's text, score, tokens and α, rounded."""
    entries = [translation, *translation.alternatives]
    return {
        "source_tokens": translation.source_tokens,
        "hypotheses": [
            {
                "text": t.text,
                "score": t.score,
                "target_tokens": t.target_tokens,
                "alignment": t.alignment.round(4).tolist(),
            }
            for t in entries
        ],
    }


def write_alignments(
    translation: Translation,
    number: int,
    jsonl: TextIO | None,
    hard: TextIO | None,
    *,
    reading: str,
    links: list[tuple[int, int]] | None = None,
) -> None:
    """Input line `number`'s alignment as a JSON line and as a Pharaoh line, to those asked
    for; the Pharaoh line holds `links`, by default the translation's own word links as
    `reading` reads α."""
    from rnnsearch.alignment import align_translation, pharaoh

    if jsonl:
        jsonl.write(json.dumps({"line": number, **alignment_row(translation)}, ensure_ascii=False) + "\n")
    if hard:
        hard.write(pharaoh(align_translation(translation, reading=reading).pairs if links is None else links) + "\n")
