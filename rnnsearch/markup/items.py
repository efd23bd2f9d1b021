"""Items of a list placed together. A run of elements that parsing.py reads as a list's
items (one start tag, no attributes, each written right after the one before:
"<li>A</li><li>B</li>", a menu path's steps) stands in the translation as one run of
consecutive items in the source's order, each holding at least one word, with no word
between two items left to neither. Where their words go is one choice, the cuts between
the items, made over the whole run at once: each target word goes to the item whose words
it is likeliest linked to, in order. Placed one at a time, an item takes the words its own
links reach, so that a long item swallows its neighbour's word and a short one shrinks to
the one word it is surest of."""

from __future__ import annotations

import numpy as np

from rnnsearch.markup.elements import Element


def item_runs(elements: list[Element]) -> dict[int, list[int]]:
    """Each run of two items or more of a list among `elements`, by its first item's
    index: the indices of its items, in order."""
    last_child: dict[int | None, int] = {}
    run_of: dict[int, int] = {}
    runs: dict[int, list[int]] = {}
    for index, element in enumerate(elements):
        before = last_child.get(element.parent)
        last_child[element.parent] = index
        if before is None or not element.follows_item:
            continue
        first = run_of.setdefault(before, before)
        run_of[index] = first
        runs.setdefault(first, [first]).append(index)
    return runs


def tiled(scores: list[np.ndarray]) -> list[tuple[int, int]]:
    """The cuts of n words into len(scores) consecutive runs of at least one word each
    (n at least their number), (start, stop) of each, that make the sum of each word's
    score for the run holding it greatest: scores[i][t], how likely word t is item i's.
    One pass per item over the words (the best cuts so far kept, as in a Viterbi search)."""
    words = len(scores[0])
    best = np.full(words + 1, -np.inf)
    best[0] = 0.0  # best[b]: the items so far over the first b words
    back: list[np.ndarray] = []
    for score in scores:
        prefix = np.concatenate(([0.0], np.cumsum(score)))
        start_value = best - prefix  # the items before, cut at a, less this item's words before a
        running = np.maximum.accumulate(start_value)
        where = np.maximum.accumulate(np.where(start_value >= running, np.arange(words + 1), 0))
        following = np.full(words + 1, -np.inf)
        following[1:] = prefix[1:] + running[:-1]  # this item from the best earlier cut to b
        back.append(np.concatenate(([0], where[:-1])))
        best = following
    spans: list[tuple[int, int]] = []
    stop = words
    for starts in reversed(back):
        start = int(starts[stop])
        spans.append((start, stop))
        stop = start
    return spans[::-1]
