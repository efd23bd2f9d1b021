"""Placing a parsed line's markup among the words of its translation, by word links
(source word i, target word j), and writing the result (the rules are in the package's
docstring). No step recurses on the elements' depth, and none compares every pair of
siblings: an element is compared only with the earlier siblings whose placed spans its
own meets, found by bisection among its siblings' disjoint spans. Placing is therefore
near-linear in the number of elements, unless the links stretch many elements' spans
across one another (a word linked to both ends of the translation, say), where an
element is compared with each sibling it meets, or leave an element with words none
(rule 5), which then looks over its earlier siblings for a word to hold."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.markup.elements import Element, MarkedUp
from rnnsearch.markup.items import item_runs, tiled
from rnnsearch.markup.weights import PairWeights, around_peak, likeliest_hull
from rnnsearch.markup.wording import copied_places, nearest, unpunctuated
from rnnsearch.markup.writing import written


def transfer(
    marked: MarkedUp, target_words: Sequence[str], links: Iterable[Link], *, weights: PairWeights | None = None
) -> str:
    """The target words with `marked`'s markup put back by the word `links` between its
    words and them (the rules in the package docstring), or, given `weights`, by the
    weights where they place an element and by the links where they do not (`place`)."""
    return transferred(marked, target_words, links, weights=weights)[0]


def transferred(
    marked: MarkedUp, target_words: Sequence[str], links: Iterable[Link], *, weights: PairWeights | None = None
) -> tuple[str, int]:
    """`transfer`'s line, and how many elements that held words it leaves with none (a
    translation with fewer words than they need: rule 5), for a caller to report."""
    spans = place(marked, len(target_words), links, weights=weights, target_words=target_words)
    emptied = sum(element.has_words and start == stop for element, (start, stop) in zip(marked.elements, spans))
    return written([marked.dialect.escape(word) for word in target_words], marked.elements, spans), emptied


def place(
    marked: MarkedUp,
    targets: int,
    links: Iterable[Link],
    *,
    weights: PairWeights | None = None,
    target_words: Sequence[str] | None = None,
) -> list[tuple[int, int]]:
    """Where each of `marked`'s elements goes among `targets` target words, by the word
    `links`: (start, stop) target boundaries, the words start to stop − 1 inside it
    (start == stop: at that boundary, with no words). Given `weights`, an element with
    words goes around the span its links most probably have, the weights read as the
    links' probabilities (`WordWeights.link_probabilities`, `likeliest_hull`): one weak
    stray link does not stretch it, and a word the weights hold is not lost for a missing
    link; where most probably none of its words is linked, the links place it as without
    weights. Given the `target_words`, an element whose words they copy goes around its
    copied words (wording.py), the place nearest to where the links put it."""
    if not marked.elements:
        return []  # nothing to place: no table of the links is needed
    by_source: dict[int, list[int]] = {}
    for source, target in links:
        by_source.setdefault(source, []).append(target)
    copies = {} if target_words is None else copied_places(marked.elements, marked.words, target_words)
    placing = _Placing(marked.words, targets, by_source, weights, target_words=target_words, copies=copies)
    return placing.spans(marked.elements)


class _Placing:
    """Where each element goes among the target words (rules 1 to 5)."""

    def __init__(
        self,
        source_words: Sequence[str],
        targets: int,
        links: dict[int, list[int]],
        weights: PairWeights | None = None,
        *,
        target_words: Sequence[str] | None = None,
        copies: dict[int, list[tuple[int, int]]] | None = None,
    ):
        """`copies`: where the `target_words` copy each element's words (wording.py)."""
        self.weights, self.target_words, self.copies = weights, target_words, copies or {}
        self.source_words, self.sources, self.targets = source_words, len(source_words), targets
        self.linked = links
        self.links = {source: (min(aligned), max(aligned)) for source, aligned in links.items()}
        self.aligned_sources = sorted(self.links)
        self.first_targets = _RangeExtremes([self.links[s][0] for s in self.aligned_sources], min)
        self.last_targets = _RangeExtremes([self.links[s][1] for s in self.aligned_sources], max)

    def spans(self, elements: list[Element]) -> list[tuple[int, int]]:
        """Each element's (start, stop) boundaries in the target, nested as in the source;
        an element with words holds at least one target word wherever its parent's span
        has one to give (rule 5)."""
        spans: list[tuple[int, int]] = []
        placed: dict[int | None, list[tuple[int, int, int]]] = {}  # parent → its children's spans with words
        children: dict[int | None, list[int]] = {}  # parent → its children placed so far
        runs, items = item_runs(elements), {}
        for index, element in enumerate(elements):
            bounds = (0, self.targets) if element.parent is None else spans[element.parent]
            if index in runs:
                items.update(self._items(elements, runs[index], bounds, placed.get(element.parent, [])))
            if index in items:
                start, stop = items[index]
            else:
                start, stop = self._span(element)
            if index in self.copies and not (element.first == 0 and element.stop == self.sources):
                start, stop = nearest(self.copies[index], (start, stop))  # its copied words (rule 2)
            elif self.target_words is not None and start < stop and index not in items:
                start, stop = unpunctuated((start, stop), element, self.target_words)
            start, stop = min(max(start, bounds[0]), bounds[1]), max(min(stop, bounds[1]), bounds[0])
            siblings = placed.setdefault(element.parent, [])
            start, stop = _off_siblings(siblings, (start, stop), zero_width=not element.has_words)
            if element.has_words and start == stop:
                start, stop = self._one_word(element, start, bounds, siblings)
                if start == stop:
                    start, stop = _taken_from_sibling(start, siblings, spans, placed, children)
            spans.append((start, stop))
            children.setdefault(element.parent, []).append(index)
            if start < stop:
                bisect.insort(siblings, (start, stop, index))
        return spans

    def _items(
        self, elements: list[Element], run: list[int], bounds: tuple[int, int], siblings: list[tuple[int, int, int]]
    ) -> dict[int, tuple[int, int]]:
        """The spans of a run of items of a list (items.py): the target words the run's
        items reach, within their parent's `bounds` and off their earlier siblings, cut
        into one run of words per item, in order, by how likely each word is each
        item's; none where those words are fewer than the items, which are then placed
        one at a time."""
        first, last = elements[run[0]], elements[run[-1]]
        parent = None if first.parent is None else elements[first.parent]
        if parent is not None and (parent.first, parent.stop) == (first.first, last.stop):
            region = bounds  # the items fill their parent
        else:
            reached = [span for span in map(self._span, (elements[k] for k in run)) if span[0] < span[1]]
            if not reached:
                return {}
            low, high = min(span[0] for span in reached), max(span[1] for span in reached)
            region = (max(low, bounds[0]), min(high, bounds[1]))
        region = _off_siblings(siblings, region, zero_width=False)
        if region[1] - region[0] < len(run):
            return {}
        scores = [self._likelihoods(elements[k], region) for k in run]
        return {k: (region[0] + a, region[0] + b) for k, (a, b) in zip(run, tiled(scores), strict=True)}

    def _likelihoods(self, element: Element, region: tuple[int, int]) -> np.ndarray:
        """How likely each target word of `region` is linked to `element`'s words: their
        link probability by the weights, else how many of them it is linked to."""
        scores = np.zeros(region[1] - region[0])
        if self.weights is not None:
            offset, linked = self.weights.window(element.first, element.stop)
            low, high = max(region[0], offset), min(region[1], offset + len(linked))
            if low < high:
                scores[low - region[0] : high - region[0]] = linked[low - offset : high - offset]
            return scores
        for source in range(element.first, element.stop):
            for target in self.linked.get(source, ()):
                if region[0] <= target < region[1]:
                    scores[target - region[0]] += 1.0
        return scores

    def _one_word(
        self, element: Element, boundary: int, bounds: tuple[int, int], siblings: list[tuple[int, int, int]]
    ) -> tuple[int, int]:
        """The one target word for an element with words that its links and its earlier
        siblings left with none (rule 5): of the words of its parent's span that no
        sibling holds, the one the weights most link to its words, else the nearest to
        the boundary where it stands, the word after it first; (boundary, boundary)
        where every word is held."""
        free = _free_runs(siblings, bounds)
        if not free:
            return boundary, boundary
        if self.weights is not None:
            offset, linked = self.weights.window(element.first, element.stop)
            best: int | None = None
            for first, stop in free:
                low, high = max(first, offset), min(stop, offset + len(linked))
                if low < high:
                    k = low + int(np.argmax(linked[low - offset : high - offset]))
                    best = k if best is None or linked[k - offset] > linked[best - offset] else best
            if best is not None and linked[best - offset] > 0:
                return best, best + 1
        nearest = min(
            (min(max(boundary, first), stop - 1) for first, stop in free),
            key=lambda k: k - boundary if k >= boundary else boundary - k - 0.5,
        )
        return nearest, nearest + 1

    def _span(self, element: Element) -> tuple[int, int]:
        if element.has_words and element.first == 0 and element.stop == self.sources:
            return 0, self.targets
        if element.has_words and self.weights is not None and self.targets:
            offset, linked = self.weights.window(element.first, element.stop)
            hull = likeliest_hull(linked)
            if hull is not None and element.stop - element.first == 1 and self.weights.one_word_peak is not None:
                hull = around_peak(linked, hull, self.weights.one_word_peak)
            if hull is not None:
                return hull[0] + offset, hull[1] + offset
        first = bisect.bisect_left(self.aligned_sources, element.first)
        last = bisect.bisect_left(self.aligned_sources, element.stop)
        if first < last:
            return self.first_targets.over(first, last), self.last_targets.over(first, last) + 1
        boundary = self._boundary(element.first)
        if element.before_punctuation:
            boundary = self._clause_end(element.first, boundary)
        return boundary, boundary

    def _clause_end(self, source: int, boundary: int) -> int:
        """Where a tag of its own that the source writes right before punctuation (source
        word `source`) goes: before that punctuation's translation, a target word of
        punctuation alone, or after a target word that ends with it (writing.py puts the
        tag before its punctuation); `boundary` where the punctuation is not translated so."""
        if self.target_words is None or source >= self.sources or source not in self.links:
            return boundary
        mark = self.source_words[source]
        if any(character.isalnum() for character in mark):
            return boundary
        target = self.links[source][0]
        word = self.target_words[target]
        if not any(character.isalnum() for character in word):
            return target
        return target + 1 if word[-1:] == mark[:1] else boundary

    def _boundary(self, source: int) -> int:
        """The target boundary of source boundary `source` (before source word `source`):
        after the targets of the nearest aligned source word before it, else before those
        of the nearest after it, else at the same relative position."""
        if source == 0:
            return 0
        if source >= self.sources:
            return self.targets
        after = bisect.bisect_left(self.aligned_sources, source)
        if after > 0:
            return self.links[self.aligned_sources[after - 1]][1] + 1
        if after < len(self.aligned_sources):
            return self.links[self.aligned_sources[after]][0]
        return round(source * self.targets / self.sources)


class _RangeExtremes:
    """The least (or greatest) of any run of a list's values, each found in constant time
    from a sparse table of the extremes of every run of a power-of-two length."""

    def __init__(self, values: list[int], extreme: Callable[[int, int], int]):
        self.extreme = extreme
        self.table = [values]
        width = 1
        while 2 * width <= len(values):
            row = self.table[-1]
            self.table.append([extreme(row[k], row[k + width]) for k in range(len(row) - width)])
            width *= 2

    def over(self, first: int, stop: int) -> int:
        """The extreme of values[first:stop], a run of at least one value."""
        level = (stop - first).bit_length() - 1
        row = self.table[level]
        return self.extreme(row[first], row[stop - (1 << level)])


def _free_runs(siblings: list[tuple[int, int, int]], bounds: tuple[int, int]) -> list[tuple[int, int]]:
    """The runs of target words in `bounds` (start, stop) that none of the sorted,
    disjoint `siblings` spans holds."""
    lower, upper = bounds
    runs, position = [], lower
    for start, stop, _ in siblings[max(bisect.bisect_left(siblings, (lower, -1, -1)) - 1, 0) :]:
        if start >= upper:
            break
        if start > position:
            runs.append((position, start))
        position = max(position, stop)
    if position < upper:
        runs.append((position, upper))
    return runs


def _taken_from_sibling(
    boundary: int,
    siblings: list[tuple[int, int, int]],
    spans: list[tuple[int, int]],
    placed: dict[int | None, list[tuple[int, int, int]]],
    children: dict[int | None, list[int]],
) -> tuple[int, int]:
    """One word for an element with words whose siblings hold every word of its parent's
    span (rule 5): the edge word, on its side, of the sibling nearest to `boundary` that
    has a word more than it needs, a word none of its own children with words holds. The
    sibling's span shrinks by that word (its children without words at that edge move in
    with it); (boundary, boundary) where no sibling can give one."""
    by_distance = sorted(siblings, key=lambda s: max(s[0] - boundary, boundary - s[1], 0))
    for start, stop, index in by_distance:
        if stop - start < 2:
            continue
        held = placed.get(index, [])
        edges = ((stop - 1, (start, stop - 1)), (start, (start + 1, stop)))
        for word, shrunk in edges[:: 1 if boundary >= stop else -1]:
            if any(a <= word < b for a, b, _ in held):
                continue
            siblings.remove((start, stop, index))
            bisect.insort(siblings, (*shrunk, index))
            spans[index] = shrunk
            moved = [child for child in children.get(index, []) if spans[child][0] == spans[child][1]]
            while moved:  # the children without words, and all inside them, which have none either
                child = moved.pop()
                edge = min(max(spans[child][0], shrunk[0]), shrunk[1])
                spans[child] = (edge, edge)
                moved += children.get(child, [])
            return word, word + 1
    return boundary, boundary


def _off_siblings(siblings: list[tuple[int, int, int]], span: tuple[int, int], *, zero_width: bool) -> tuple[int, int]:
    """`span` moved off its earlier siblings' spans (rule 4), in the order they were
    placed. `siblings` are their spans with words, sorted and disjoint: only those that
    `span` meets can move it, and a span only shrinks as it yields, so these are found
    once, by bisection."""
    start, stop = span
    if zero_width or start == stop:
        met = _containing(siblings, start)
    else:
        first = max(bisect.bisect_left(siblings, (start, -1, -1)) - 1, 0)  # the one before may reach in
        met = [s for s in siblings[first : bisect.bisect_left(siblings, (stop, -1, -1))] if s[1] > start]
    for earlier in sorted(met, key=lambda sibling: sibling[2]):
        start, stop = _yield_to(earlier[:2], (start, stop), zero_width=zero_width)
    return start, stop


def _containing(siblings: list[tuple[int, int, int]], point: int) -> list[tuple[int, int, int]]:
    """The sibling span, if any, with `point` strictly inside it."""
    before = bisect.bisect_left(siblings, (point, -1, -1))
    return [siblings[before - 1]] if before and siblings[before - 1][1] > point else []


def _yield_to(earlier: tuple[int, int], span: tuple[int, int], *, zero_width: bool) -> tuple[int, int]:
    """`span` moved off an earlier sibling's span (rule 4)."""
    start0, stop0 = earlier
    start, stop = span
    if zero_width or start == stop:
        if start0 < start < stop0:
            edge = stop0 if stop0 - start <= start - start0 else start0
            return edge, edge
        return start, stop
    if stop <= start0 or start >= stop0 or start0 == stop0:
        return start, stop  # apart, or the earlier one has no words to overlap
    if stop > stop0:
        return max(start, stop0), stop
    if start < start0:
        return start, start0
    return stop0, stop0
