"""What the target's words themselves say of where an element goes (rule 2), beside
the links: words it copies, and punctuation that is not its own.

Copied words: a name, a code, a path, a product that stands in the target as it stood
in the source. Translators keep such an element around exactly its copied words, where
word links often stretch it to a neighbour they also link ("le paramètre RelayState"
for "the RelayState parameter"), so where an element's words stand in the target as
written, that is where it goes.

Words match as written but for case and the punctuation at the edges of the element's
words ("Chatter," matches "Chatter"); an element whose words hold fewer than
MIN_COPIED_CHARACTERS letters or digits, or no word at all, copies nothing (a lone "a"
or "-" is too common to find by), and nor does one of more than MAX_COPIED_WORDS.

Punctuation: a target word of punctuation alone (French sets ":", "?", "»" apart) at an
edge of an element's span is the element's only where the element's own text ends (or
starts) with punctuation: "<b>Undo the migration:</b>" keeps its " :", and
"<parmname>Redirect type</parmname>:" leaves it out.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from rnnsearch.markup.elements import Element

MIN_COPIED_CHARACTERS = 2
"""The letters and digits an element's words need to be found as copied."""

MAX_COPIED_WORDS = 8
"""The most words an element may hold to be found as copied: a longer one is prose."""


def bare(word: str) -> str:
    """A word without the punctuation at its edges, in lower case."""
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[start:end].casefold()


def copied_places(
    elements: Sequence[Element], source_words: Sequence[str], target_words: Sequence[str]
) -> dict[int, list[tuple[int, int]]]:
    """For each element of at most MAX_COPIED_WORDS words (by index), the target spans
    (start, stop) whose words are its words as written, in order; elements whose words
    stand nowhere are left out. The target's runs of each length an element has are
    indexed once, so the time is linear in the words and the places found."""
    wanted: dict[int, tuple[str, ...]] = {}
    for index, element in enumerate(elements):
        if not element.has_words or element.end_tag is None or element.stop - element.first > MAX_COPIED_WORDS:
            continue  # an element kept whole is placed by its stand-ins; a long one is prose, not a name
        words = tuple(bare(word) for word in source_words[element.first : element.stop])
        if words[0] and words[-1] and sum(len(word) for word in words) >= MIN_COPIED_CHARACTERS:
            wanted[index] = words
    bare_targets = [bare(word) for word in target_words] if wanted else []
    runs: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for length in {len(words) for words in wanted.values()}:
        for k in range(len(bare_targets) - length + 1):
            runs.setdefault(tuple(bare_targets[k : k + length]), []).append((k, k + length))
    return {index: runs[words] for index, words in wanted.items() if words in runs}


def nearest(places: list[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """Of an element's copied places (as `copied_places` gives them: of one length, in
    order), the one that most overlaps `span` (where the links put it), else the nearest
    to it; the first of those that tie. Only the places that overlap `span` and the one
    on either side of them can be it, found by bisection, so that a line where a word
    stands thousands of times is placed in time linear in it, not in its square."""

    def distance(place: tuple[int, int]) -> tuple[int, int]:
        overlap = min(place[1], span[1]) - max(place[0], span[0])
        gap = max(place[0] - span[1], span[0] - place[1], 0)
        return (-overlap, gap) if overlap > 0 else (1, gap)

    length = places[0][1] - places[0][0]
    first = bisect.bisect_left(places, span[0] - length + 1, key=lambda place: place[0])  # the first ending past it
    stop = bisect.bisect_left(places, span[1], key=lambda place: place[0])  # the first starting at its end or later
    return min(places[max(first - 1, 0) : stop + 1], key=distance)


def unpunctuated(span: tuple[int, int], element: Element, target_words: Sequence[str]) -> tuple[int, int]:
    """`span` without the words of punctuation alone at its edges that are not the
    element's own (module docstring); never emptied."""
    start, stop = span
    if element.end_tag is None:
        return span
    opens, closes = element.punctuated
    while stop - start > 1 and not closes and not bare(target_words[stop - 1]):
        stop -= 1
    while stop - start > 1 and not opens and not bare(target_words[start]):
        start += 1
    return start, stop
