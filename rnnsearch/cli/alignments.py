"""How `translate` and `align` write alignments: a JSON row of tokens and α matrices, and
a Pharaoh line of word links, one each per input line or pair."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rnnsearch.translation.translator import Translation


class Lines(Protocol):
    """Where lines are written: a file, or standard output as the command holds it."""

    def write(self, text: str) -> int: ...


def alignment_row(translation: Translation) -> dict:
    """The translation's tokens and each hypothesis's text, score, tokens and α, rounded."""
    entries = [translation, *translation.alternatives]
    return {
        "alignment_from": translation.alignment_from,
        "source_tokens": translation.source_tokens,
        "hypotheses": [
            {
                "text": t.text,
                "score": t.score,
                "target_tokens": t.target_tokens,
                "alignment": [] if t.alignment is None else t.alignment.round(4).tolist(),
            }
            for t in entries
        ],
    }


def write_alignments(
    translation: Translation,
    number: int,
    jsonl: Lines | None,
    hard: Lines | None,
    *,
    reading: str,
) -> bool:
    """Input line `number`'s alignment as a JSON line and as a Pharaoh line, to those asked
    for; the Pharaoh line holds the links the translation's markup was placed by (its
    `words`), or else its own word links as `reading` reads α. False when that line is
    empty because the pieces could not be placed on the words (see `report_unplaced`)."""
    from rnnsearch.alignments.words import align_translation

    if jsonl:
        jsonl.write(json.dumps({"line": number, **alignment_row(translation)}, ensure_ascii=False) + "\n")
    if not hard:
        return True
    words = translation.words or align_translation(translation, reading=reading)
    hard.write(words.pharaoh() + "\n")
    return words.placed


def report_unplaced(count: int, what: str) -> None:
    """Say on standard error how many of the `what` (pairs, lines) got an empty Pharaoh
    line because the model's pieces could not be placed on their words (see
    rnnsearch.alignments.words): the line is there, so nothing shifts, and the count says why."""
    if count:
        print(
            f"{count:,} {what} left without word links: the model's pieces do not spell the words of their texts "
            "(consecutive unknown words joined into one <unk>, say)",
            file=sys.stderr,
        )


def report_plain(count: int, what: str) -> None:
    """Say on standard error how many of the `what` had markup that was not well-formed
    and were read as plain text (--lenient-markup)."""
    if count:
        print(f"{count:,} {what} with markup that is not well-formed read as plain text", file=sys.stderr)
