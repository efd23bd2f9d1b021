"""Tags where people put them: the project's placement of markup against the tags
professional translators placed, on the English–French Salesforce help segments of
`../shared/data/markup/` (Hashimoto et al. 2019; the set Zenkel, Wuebker & DeNero 2021
measure placement on), and against the codes of real EU documents and the terms of a real
glossary, the EUR-Lex sets of `../shared/data/xliff-tags/` (Hanneman & Dinu, "How Should
Markup Tags Be Translated?", WMT 2020, github.com/amazon-science/mt-markup-tags; CC BY 4.0).
The help set's licence is non-commercial: this bench reads both from `../shared` where they
are, says so where they are not, and nothing of them enters the package.

    python bench/translators_markup.py [--work runs/translators] [--steps 1200] [--threads 1]
                                       [--aligner-steps 1200] [--links-only] [--tempers 0.5 ...]
                                       [--floor 0.02] [--one-word 0.25] [--timing ROUNDS]
                                       [--flickr] [--json out.json]

1. Training text, as a user would make it: Multi30k's English–French training set and the
   untagged text of the 2,000 help segments and of the four EUR-Lex sets (`train.en`,
   `train.fr` in `--work`); English→French and French→English models from
   `configs/multi30k_en_fr.yaml` on it, `--steps` steps each (reused where trained).
2. Links, as a user would make them: `rnnsearch align-corpus` (eflomal, grow-diag-final-and)
   over all of it. The alignment modules of both directions (`train-aligner en-fr --reverse
   fr-en`, agreeing, `--aligner-steps` steps) learn from those links with the links of
   every tagged segment withheld, so that they align those as any new text.
3. Placement: each tagged English segment's tags are placed into the French text with its
   tags removed, as `rnnsearch align --markup xml` places them, by eflomal's links, by the
   en→fr module (its links, its weights), by both modules (combined by `soft`, and by the
   lesser of both directions' weights), and by `align --markup`'s defaults, one direction
   and two. The reference is where the translators (or the documents) put each element:
   the French words its tags enclose. Reported on the help segments' first half and the
   EUR-Lex dev sets (where readings are chosen) and on the help segments' second half and
   the EUR-Lex test sets (reported), each with the same figures by element name and by the
   length of the reference span (no words, 1 word, 2–3, 4+, the whole segment):
   - elements placed exactly: on the same French words as the reference (an element
     without words: at the same word boundary); and the same with each element matched
     by its name alone, not its attributes (`exact_spans`): the glossary sets number their
     `<g id>` left to right on each side (every French line with two terms or more does),
     so where French reorders two terms the reference's ids follow the order, not the
     meaning, and a placement by meaning is right on these spans alone;
   - Zenkel et al.'s tag accuracy: each opening, closing or standalone tag at exactly the
     character of the tag-free text where the reference puts it (a tag next to a space
     counted on the word's side), and the mean distance in characters;
   - the word-level F1 of the elements' spans;
   - of the tags the reference puts inside a word (a letter or a digit on either side:
     a superscript, a footnote's call), how many stand at that character;
   - the bound the links allow: elements whose reference span starts and ends on a word
     linked to the element's words (a rule that only chooses among the links places no
     more).
   With `--links-only` the modules are skipped (eflomal's links alone: no training).
   With `--tempers`, the modules' rows are also read with each module's jump table
   (`aligner/jumps.json`) raised to each power, any jump at least `--floor` (bench/counted_jumps.py's
   `tempered`), and placed by the en→fr module's weights, by both modules' `soft` links, and
   by both modules' weights averaged; with `--one-word`, an element of one source word by
   the rows read at that power instead. With `--timing`, `align --markup xml` is timed over
   every segment by each placement, one direction and two, alternating.

Elements of the same start tag are matched as a multiset (a segment with two `<ph>` is
right where each reference span is placed by one of them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "markup"
XLIFF_TAGS = ROOT.parent / "shared" / "data" / "xliff-tags"
EURLEX_SETS = ("dev-eurlex", "test-eurlex", "dev-glossary", "test-glossary")
MULTI30K = ROOT / "data" / "multi30k"
BASE_CONFIG = ROOT / "configs" / "multi30k_en_fr.yaml"

sys.path.insert(0, str(ROOT))
from counted_jumps import tempered  # noqa: E402  (bench/counted_jumps.py: a table read at a power)

from rnnsearch.markup import PLACEMENTS, MarkedUp, WordWeights, parse, parsing, place, transfer  # noqa: E402

Links = list[tuple[int, int]]


def segments() -> list[tuple[str, str, str]] | None:
    """(id, English, French) of every segment, in id order; None without the shared set."""
    english, french = SHARED / "enfr_en_dev.json", SHARED / "enfr_fr_dev.json"
    if not english.exists() or not french.exists():
        return None
    en = json.loads(english.read_text(encoding="utf-8"))["text"]
    fr = json.loads(french.read_text(encoding="utf-8"))["text"]
    return [(key, en[key], fr[key]) for key in sorted(en) if key in fr]


def eurlex() -> dict[str, list[tuple[str, str, str]]]:
    """(id, English, French) of each EUR-Lex set of `../shared/data/xliff-tags/` (Hanneman &
    Dinu 2020, CC BY 4.0): the documents' own codes and the glossary's terms; {} without it."""
    sets = {}
    for name in EURLEX_SETS:
        english, french = XLIFF_TAGS / f"{name}.en", XLIFF_TAGS / f"{name}.fr"
        if english.exists() and french.exists():
            en = english.read_text(encoding="utf-8").splitlines()
            fr = french.read_text(encoding="utf-8").splitlines()
            sets[name] = [(f"{name}:{k}", e, f) for k, (e, f) in enumerate(zip(en, fr, strict=True))]
    return sets


def plain(line: str, *, side: str = "en") -> str:
    """A segment's text without its tags, its words separated by single spaces: the
    English as a source line is read, the French as the translators wrote it (`read_french`)."""
    return " ".join((parse(line, "xml") if side == "en" else read_french(line)).text.split())


def read_french(line: str) -> MarkedUp:
    """The translators' French (or a French line written with their tags) read as a
    source line is, but for the words a tag breaks between punctuation and a word
    (rnnsearch/markup/word_breaks.py): that rule reads a source, and the French here is
    given, its words the ones the references count ("règle.Par" stays one word, as the
    translators wrote it), the same whatever the source's rules."""
    with mock.patch.object(parsing, "breaks_word", lambda before, after: False):
        return parse(line, "xml")


def write_corpus(work: Path, sets: dict[str, list[tuple[str, str, str]]]) -> dict[str, int]:
    """Multi30k's training text and every set's untagged text, in `work`; the index of
    each set's first line."""
    work.mkdir(parents=True, exist_ok=True)
    first: dict[str, int] = {}
    for side, column in (("en", 1), ("fr", 2)):
        with gzip.open(MULTI30K / f"train.{side}.gz", "rt", encoding="utf-8") as corpus:
            lines = corpus.read().splitlines()
        for name, pairs in sets.items():
            first[name] = len(lines)
            lines += [plain(pair[column], side=side) for pair in pairs]
        corpus, text = work / f"train.{side}", "\n".join(lines) + "\n"
        if not corpus.exists() or corpus.read_text(encoding="utf-8") != text:
            corpus.write_text(text, encoding="utf-8")
    return first


def config(work: Path, source: str, target: str, *, steps: int, threads: int) -> Path:
    """The en–fr config turned to `source`→`target`, this corpus and budget."""
    settings = yaml.safe_load(BASE_CONFIG.read_text(encoding="utf-8"))
    data = settings["data"]
    data["train"] = {"src": str(work / f"train.{source}"), "tgt": str(work / f"train.{target}")}
    if source == "en":
        data["train"]["alignments"] = str(work / "train.en-fr.align")
    for split in ("valid", "test"):
        stem = Path(data[split]["src"]).name.split(".")[0]
        data[split] = {"src": str(MULTI30K / f"{stem}.{source}.gz"), "tgt": str(MULTI30K / f"{stem}.{target}.gz")}
    data["src_lang"], data["tgt_lang"] = source, target
    settings["train"].update(
        model_dir=str(work / f"{source}-{target}"), max_steps=steps, max_minutes=None, valid_every=steps // 3
    )
    settings["train"]["threads"] = threads
    path = work / f"{source}-{target}.yaml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return path


def run(command: list[str], log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT).returncode != 0:
            raise SystemExit(f"{' '.join(command[2:4])} failed: see {log}")


def train_models(work: Path, *, steps: int, threads: int) -> None:
    """Both directions' translation models, trained at once (reused where trained)."""
    running = []
    for source, target in (("en", "fr"), ("fr", "en")):
        if (work / f"{source}-{target}" / "best.safetensors").exists():
            continue
        path = config(work, source, target, steps=steps, threads=threads)
        log = (work / f"{source}-{target}.log").open("a", encoding="utf-8")
        command = [sys.executable, "-m", "rnnsearch", "train", str(path)]
        running.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
    if any(process.wait() != 0 for process in running):
        raise SystemExit(f"training failed: see the logs in {work}")


def eflomal_links(work: Path, *, steps: int, threads: int) -> list[Links]:
    """`align-corpus`'s grow-diag-final-and links of every training pair (reused where made
    after the training text was last written)."""
    links = work / "train.en-fr.align"
    written = max((work / f"train.{side}").stat().st_mtime for side in ("en", "fr"))
    if not links.exists() or links.stat().st_mtime < written:
        started = time.perf_counter()
        path = config(work, "en", "fr", steps=steps, threads=threads)
        run([sys.executable, "-m", "rnnsearch", "align-corpus", str(path)], work / "align-corpus.log")
        print(f"align-corpus: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return [_pharaoh(line) for line in links.read_text(encoding="utf-8").splitlines()]


def _pharaoh(line: str) -> Links:
    return [(int(i), int(j)) for i, j in (pair.split("-") for pair in line.split())]


def train_modules(work: Path, withheld: list[int], *, steps: int, threads: int) -> tuple[Path, Path]:
    """Both directions' alignment modules, agreeing, from eflomal's links with those of
    the lines `withheld` emptied (reused where trained)."""
    forward, backward = work / "en-fr", work / "fr-en"
    if (forward / "aligner" / "trained").exists():
        return forward, backward
    lines = (work / "train.en-fr.align").read_text(encoding="utf-8").splitlines()
    for k in withheld:
        lines[k] = ""
    guide = work / "train.withheld.en-fr.align"
    guide.write_text("\n".join(lines) + "\n", encoding="utf-8")
    settings = [
        f"data.train.alignments={guide.resolve()}",
        f"train.max_steps={steps}",
        f"train.threads={threads}",
        f"train.valid_every={max(steps // 4, 1)}",
    ]
    command = [sys.executable, "-m", "rnnsearch", "train-aligner", str(forward), "--reverse", str(backward)]
    started = time.perf_counter()
    run(command + [item for setting in settings for item in ("--set", setting)], work / "train-aligner.log")
    print(f"train-aligner: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    (forward / "aligner" / "trained").touch()
    return forward, backward


class _Tags(HTMLParser):
    """The tags of a line and the character of its tag-free text where each stands."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text = ""
        self.tags: list[tuple[str, int, bool]] = []  # (tag, position, opens)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, len(self.text), True))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag + "/", len(self.text), True))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag, len(self.text), False))

    def handle_data(self, data: str) -> None:
        self.text += data


def tag_positions(line: str, *, inside_words: bool = False) -> list[tuple[str, int]]:
    """Zenkel et al.'s tags of a line: each tag and its character in the tag-free text,
    white space collapsed, a tag beside a space counted on its word's side; with
    `inside_words`, only the tags that stand inside a word (a letter or a digit on either
    side: "ISA<g>2</g>", "2014<g>7</g>")."""
    reader = _Tags()
    reader.feed(line)
    reader.close()
    raw, positions = reader.text, []
    collapsed = " ".join(raw.split())
    for tag, at, opens in reader.tags:
        before = " ".join(raw[:at].split()) + (" " if raw[:at][-1:].isspace() and raw[:at].strip() else "")
        where = len(before)
        if not opens and before.endswith(" "):
            where -= 1
        inside = 0 < where < len(collapsed) and collapsed[where - 1].isalnum() and collapsed[where].isalnum()
        if inside or not inside_words:
            positions.append((tag, where))
    return positions


def spans_by_tag(marked: MarkedUp, spans: list[tuple[int, int]]) -> Counter:
    """The multiset of (start tag, span) of a line's elements."""
    return Counter((element.start_tag, span) for element, span in zip(marked.elements, spans, strict=True))


def measured(cases: list[dict], placed: list[list[tuple[int, int]]], written: list[str]) -> dict:
    """The measures (module docstring) of `placed` (each case's element spans) and
    `written` (each case's marked-up French line) against the translators'."""
    exact = spans_right = total = overlap = predicted = expected = tags = tags_right = distance = 0
    inside = inside_right = 0
    by_name: Counter = Counter()
    right_by_name: Counter = Counter()
    by_length: Counter = Counter()
    right_by_length: Counter = Counter()
    for case, spans, line in zip(cases, placed, written, strict=True):
        ours, theirs = spans_by_tag(case["en"], spans), case["reference"]
        for (start_tag, span), count in theirs.items():
            name, length = start_tag.strip("<>/").split()[0], span_length(span, len(case["fr"]))
            right = min(count, ours.get((start_tag, span), 0))
            by_name[name] += count
            right_by_name[name] += right
            by_length[length] += count
            right_by_length[length] += right
        total += sum(theirs.values())
        exact += sum((ours & theirs).values())
        spans_right += sum((named_spans(ours) & named_spans(theirs)).values())
        mine, good = sorted(ours.elements()), sorted(theirs.elements())
        for (_, (a, b)), (_, (c, d)) in zip(mine, good, strict=True):
            words, wanted = set(range(a, b)), set(range(c, d))
            overlap, predicted, expected = overlap + len(words & wanted), predicted + len(words), expected + len(wanted)
        hypothesis, reference = Counter(tag_positions(line)), Counter(case["tags"])
        inside += len(case["inside"])
        inside_right += sum((hypothesis & Counter(case["inside"])).values())
        tags += sum(reference.values())
        tags_right += sum((hypothesis & reference).values())
        for tag, at in reference.elements():
            distance += min((abs(at - there) for name, there in hypothesis if name == tag), default=len(line))
    precision, recall = overlap / max(predicted, 1), overlap / max(expected, 1)
    return {
        "exact": round(100 * exact / max(total, 1), 1),
        "exact_spans": round(100 * spans_right / max(total, 1), 1),
        "tag_accuracy": round(100 * tags_right / max(tags, 1), 1),
        "character_distance": round(distance / max(tags, 1), 2),
        "span_f1": round(100 * (2 * precision * recall / (precision + recall) if precision + recall else 0.0), 1),
        "elements": total,
        "inside_words": f"{inside_right}/{inside}",
        "by_name": {name: f"{right_by_name[name]}/{count}" for name, count in by_name.most_common()},
        "by_length": {
            length: f"{right_by_length[length]}/{by_length[length]}" for length in LENGTHS if length in by_length
        },
    }


def named_spans(spans: Counter) -> Counter:
    """(start tag, span) counts as (element name, span) counts: attributes left out."""
    named: Counter = Counter()
    for (start_tag, span), count in spans.items():
        named[(start_tag.strip("<>/").split()[0], span)] += count
    return named


LENGTHS = ("no words", "1 word", "2-3 words", "4+ words", "whole segment")


def span_length(span: tuple[int, int], words: int) -> str:
    """The class of a reference span's length (LENGTHS): a whole segment before its count."""
    size = span[1] - span[0]
    if size == 0:
        return "no words"
    if size == words:
        return "whole segment"
    return "1 word" if size == 1 else "2-3 words" if size <= 3 else "4+ words"


def bound(cases: list[dict], links: list[Links]) -> float:
    """The share of elements with words whose translators' span starts and ends on a word
    linked to one of the element's words."""
    reachable = total = 0
    for case, pairs in zip(cases, links, strict=True):
        for (start_tag, (c, d)), count in case["reference"].items():
            if d <= c:
                continue
            elements = [e for e in case["en"].elements if e.start_tag == start_tag and e.has_words]
            linked = {t for e in elements for s, t in pairs if e.first <= s < e.stop}
            total += count
            reachable += count * (c in linked and d - 1 in linked)
    return round(100 * reachable / max(total, 1), 1)


def cases_of(pairs: list[tuple[str, str, str]], first: int, name: str) -> list[dict]:
    """Each tagged segment of the set `name`: its parsed English, the translators' French
    words and the spans (and tag positions) of their elements; its line in the training text."""
    cases = []
    for k, (key, english, translated) in enumerate(pairs):
        marked = parse(english, "xml")
        if not marked.elements:
            continue
        theirs = read_french(translated)
        if sorted(e.start_tag for e in theirs.elements) != sorted(e.start_tag for e in marked.elements):
            continue
        spans = [(e.first, e.stop) for e in theirs.elements]
        cases.append(
            {
                "id": key,
                "set": name,
                "line": first + k,
                "en": marked,
                "fr": theirs.text.split(),
                "reference": spans_by_tag(theirs, spans),
                "tags": tag_positions(" ".join(translated.split())),
                "inside": tag_positions(" ".join(translated.split()), inside_words=True),
            }
        )
    return cases


def by_links(cases: list[dict], links: list[Links]) -> tuple[list, list[str]]:
    placed = [
        place(case["en"], len(case["fr"]), pairs, target_words=case["fr"])
        for case, pairs in zip(cases, links, strict=True)
    ]
    written = [transfer(case["en"], case["fr"], pairs) for case, pairs in zip(cases, links, strict=True)]
    return placed, written


def by_module(cases: list[dict], forward: Path, backward: Path | None, weights: bool) -> tuple[list, list[str]]:
    """What `align --markup xml` places (its links, or its weights), one direction or both."""
    import rnnsearch

    longest = {"max_source_length": 2000}  # a help segment may hold more than the default's pieces
    model = rnnsearch.load(forward, device="cpu", search=longest)
    reverse = None if backward is None else rnnsearch.load(backward, device="cpu", search=longest)
    sources = [case["en"].line for case in cases]
    targets = [" ".join(case["fr"]) for case in cases]
    placement = "weights" if weights else "links"
    aligned = model.align(sources, targets, reverse=reverse, markup="xml", placement=placement)
    placed = []
    for case, words in zip(cases, aligned, strict=True):
        given = None
        if weights:
            back = None if reverse is None else reverse.align([" ".join(case["fr"])], [case["en"].text])[0].weights
            given = WordWeights(words.weights, back)
        placed.append(place(case["en"], len(case["fr"]), words.pairs, weights=given, target_words=case["fr"]))
    return placed, [words.marked_up or "" for words in aligned]


def by_default(cases: list[dict], forward: Path, backward: Path | None) -> tuple[list, list[str]]:
    """What `align --markup xml` places with its default placement, one direction or both:
    each element's span read back from the line it writes."""
    import rnnsearch

    longest = {"max_source_length": 2000}
    model = rnnsearch.load(forward, device="cpu", search=longest)
    reverse = None if backward is None else rnnsearch.load(backward, device="cpu", search=longest)
    sources = [case["en"].line for case in cases]
    targets = [" ".join(case["fr"]) for case in cases]
    written = [words.marked_up or "" for words in model.align(sources, targets, reverse=reverse, markup="xml")]
    return [spans_written(case["en"], line) for case, line in zip(cases, written, strict=True)], written


def timed(cases: list[dict], forward: Path, backward: Path, rounds: int) -> dict[str, float]:
    """Milliseconds per segment of `align --markup xml` over the cases, one direction and
    both, by each placement named and by the default, the readings alternating in each
    round (the least of the rounds)."""
    import rnnsearch

    longest = {"max_source_length": 2000}
    model = rnnsearch.load(forward, device="cpu", search=longest)
    reverse = rnnsearch.load(backward, device="cpu", search=longest)
    sources = [case["en"].line for case in cases]
    targets = [" ".join(case["fr"]) for case in cases]
    runs = {
        f"{direction}, {placement or 'default'}": (back, placement)
        for direction, back in (("en→fr alone", None), ("both directions", reverse))
        for placement in ("weights", "links", None)
    }
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, (back, placement) in runs.items():
            started = time.perf_counter()
            model.align(sources, targets, reverse=back, markup="xml", placement=placement)
            best[name] = min(best[name], (time.perf_counter() - started) / len(cases) * 1000)
    return {name: round(ms, 2) for name, ms in best.items()}


def flickr_rows(work: Path, forward: Path, backward: Path, seed: int) -> dict[str, float]:
    """Elements placed exactly (%) on Multi30k test_2016_flickr, the models' own domain:
    bench/markup.py's synthetic markup (drawn with `seed`) on each English caption, placed
    on its French reference by eflomal's grow-diag-final-and links (aligned with `work`'s
    training text) as the reference, and by `align --markup xml` with each placement, one
    direction and two; elements of one start tag matched as a multiset."""
    import random

    import alignment as setup  # bench/alignment.py: the test pairs and eflomal's links
    import markup as synthetic  # bench/markup.py: the synthetic markup

    import rnnsearch

    reference = setup.flickr_links(work)
    if reference is None:
        return {}
    rng = random.Random(seed)
    pairs = [(parse(synthetic.tagged(en.split(), rng), "xml"), fr.split()) for en, fr in setup.multi30k_test_pairs()]
    model, reverse = rnnsearch.load(forward, device="cpu"), rnnsearch.load(backward, device="cpu")
    sources, targets = [marked.line for marked, _ in pairs], [" ".join(words) for _, words in pairs]
    rows = {}
    for direction, back in (("en→fr alone", None), ("both directions", reverse)):
        for placement in (*PLACEMENTS, None):
            aligned = model.align(sources, targets, reverse=back, markup="xml", placement=placement)
            exact = total = 0
            for (marked, words), result, theirs in zip(pairs, aligned, reference, strict=True):
                mine = spans_by_tag(marked, spans_written(marked, result.marked_up or ""))
                right = spans_by_tag(marked, place(marked, len(words), theirs))
                exact, total = exact + sum((mine & right).values()), total + sum(right.values())
            rows[f"{direction}, {placement or 'default'}"] = round(100 * exact / max(total, 1), 2)
    return rows


def spans_written(marked: MarkedUp, line: str) -> list[tuple[int, int]]:
    """The spans of `marked`'s elements in `line`, the marked-up target written for it:
    elements of one start tag matched in the order they are written."""
    placed: dict[str, list[tuple[int, int]]] = {}
    for element in read_french(line).elements:
        placed.setdefault(element.start_tag, []).append((element.first, element.stop))
    return [placed[element.start_tag].pop(0) for element in marked.elements]


def by_tempered_table(
    cases: list[dict], forward: Path, backward: Path, temper: float, floor: float, one_word: float | None = None
) -> dict[str, tuple[list, list[str]]]:
    """The modules' rows read with their jump tables at the power `temper`, any jump at
    least `floor`: tags placed by the en→fr weights, by both directions' `soft` links, and
    around those by both directions' weights averaged (each link's probability their mean,
    where `align` reads the lesser: a link both must hold), by name. With `one_word`, an
    element of one source word is placed by the rows read at that power instead."""
    import rnnsearch
    from rnnsearch.alignments.words import combine, read_translations

    longest = {"max_source_length": 2000}
    sources = [case["en"].text for case in cases]
    targets = [" ".join(case["fr"]) for case in cases]
    read, by_word = [], []
    for model_dir, given in ((forward, (sources, targets)), (backward, (targets, sources))):
        model = rnnsearch.load(model_dir, device="cpu", search=longest)
        table = model.module_jumps()
        if table is None:
            raise SystemExit(f"{model_dir}: its module has no jump table to temper")
        pairs = [pair.as_translation() for pair in model.score(*given, alignment_from="aligner")]
        read.append(read_translations(pairs, reading="output", prior=tempered(table, temper, floor)))
        if one_word is not None:
            by_word.append(read_translations(pairs, reading="output", prior=tempered(table, one_word, floor)))
    ahead, back = read
    word_ahead, word_back = by_word if by_word else (ahead, back)

    def weights(k: int, both: bool) -> WordWeights:
        def of(a: np.ndarray, b: np.ndarray) -> WordWeights:
            return WordWeights((a + b.T) / 2) if both else WordWeights(a)

        whole = of(ahead[k].weights, back[k].weights)
        if one_word is None:
            return whole
        return WordWeights(whole.forward, one_word=of(word_ahead[k].weights, word_back[k].weights))

    soft = [combine(f, b, method="soft").pairs for f, b in zip(ahead, back, strict=True)]
    readings = {
        "module en→fr, weights": ([a.pairs for a in ahead], [weights(k, False) for k in range(len(ahead))]),
        "modules of both directions, soft": (soft, [None] * len(ahead)),
        "modules of both directions, weights averaged": (soft, [weights(k, True) for k in range(len(ahead))]),
    }
    rows = {}
    for name, (links, given_weights) in readings.items():
        placed, written = [], []
        for case, pairs, pair_weights in zip(cases, links, given_weights, strict=True):
            placed.append(place(case["en"], len(case["fr"]), pairs, weights=pair_weights, target_words=case["fr"]))
            written.append(transfer(case["en"], case["fr"], pairs, weights=pair_weights))
        rows[name] = (placed, written)
    return rows


def parts(cases: list[dict]) -> dict[str, list[int]]:
    """The cases of each reported part: the help segments' halves (the first chooses, the
    second reports) and each EUR-Lex set (dev chooses, test reports)."""
    help_segments = [k for k, case in enumerate(cases) if case["set"] == "help"]
    middle = len(help_segments) // 2
    named = {"help, first half": help_segments[:middle], "help, second half": help_segments[middle:]}
    for name in EURLEX_SETS:
        named[name] = [k for k, case in enumerate(cases) if case["set"] == name]
    return {name: ks for name, ks in named.items() if ks}


def measured_parts(cases: list[dict], placed: list, written: list[str]) -> dict:
    return {
        name: measured([cases[k] for k in ks], [placed[k] for k in ks], [written[k] for k in ks])
        for name, ks in parts(cases).items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "translators")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--aligner-steps", type=int, default=1200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--links-only", action="store_true")
    parser.add_argument("--tempers", nargs="*", type=float, default=[], help="powers of the modules' jump tables")
    parser.add_argument("--floor", type=float, default=0.02, help="with --tempers: the least weight of a jump")
    parser.add_argument(
        "--one-word", type=float, help="with --tempers: the power an element of one source word's rows are read at"
    )
    parser.add_argument("--timing", type=int, default=0, metavar="ROUNDS", help="time `align --markup` by placement")
    parser.add_argument("--flickr", action="store_true", help="place synthetic markup on test_2016_flickr too")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pairs = segments()
    if pairs is None:
        print(f"no tagged segments at {SHARED}: nothing to measure (the set is not shipped)", file=sys.stderr)
        return
    sets = {"help": pairs, **eurlex()}
    first = write_corpus(args.work, sets)
    cases = [case for name, given in sets.items() for case in cases_of(given, first[name], name)]
    for name, ks in parts(cases).items():
        elements = sum(sum(cases[k]["reference"].values()) for k in ks)
        print(f"{name}: {len(ks)} tagged segments, {elements} elements", file=sys.stderr)
    eflomal = eflomal_links(args.work, steps=args.steps, threads=args.threads)
    rows = {}
    chosen = [eflomal[case["line"]] for case in cases]
    rows["eflomal grow-diag-final-and"] = {
        **measured_parts(cases, *by_links(cases, chosen)),
        "bound": bound(cases, chosen),
    }
    if not args.links_only:
        train_models(args.work, steps=args.steps, threads=args.threads)
        forward, backward = train_modules(
            args.work, [case["line"] for case in cases], steps=args.aligner_steps, threads=2 * args.threads
        )
        for name, reverse, weights in [
            ("module en→fr, links", None, False),
            ("module en→fr, weights", None, True),
            ("modules of both directions, soft", backward, False),
            ("modules of both directions, weights", backward, True),
        ]:
            rows[name] = measured_parts(cases, *by_module(cases, forward, reverse, weights))
        rows["default, en→fr alone (`align --markup`)"] = measured_parts(cases, *by_default(cases, forward, None))
        rows["default, both directions (`align --markup --reverse`)"] = measured_parts(
            cases, *by_default(cases, forward, backward)
        )
        if args.flickr:
            rows["flickr"] = flickr_rows(args.work, forward, backward, seed=1)
            print(f"test_2016_flickr, exact: {rows['flickr']}", file=sys.stderr)
        if args.timing:
            rows["timing"] = timed(cases, forward, backward, args.timing)
            print(f"ms per segment (least of {args.timing} rounds): {rows['timing']}", file=sys.stderr)
        for temper in args.tempers:
            tempered_rows = by_tempered_table(cases, forward, backward, temper, args.floor, args.one_word)
            one = "" if args.one_word is None else f", one word's {args.one_word:g}"
            for name, result in tempered_rows.items():
                rows[f"{name}, tables to the power {temper:g}{one}, floor {args.floor:g}"] = measured_parts(
                    cases, *result
                )
    for name, row in rows.items():
        print(f"\n{name}" + (f" (bound {row['bound']}%)" if "bound" in row else ""))
        for part, figures in row.items():
            if not isinstance(figures, dict):
                continue
            print(
                f"  {part:18s} exact {figures['exact']:5.1f}% (spans {figures['exact_spans']:5.1f}%)  "
                f"tag accuracy {figures['tag_accuracy']:5.1f}%  "
                f"distance {figures['character_distance']:5.2f}  span F1 {figures['span_f1']:5.1f}  "
                f"({figures['elements']} elements)"
            )
            print("    by name: " + ", ".join(f"{k} {v}" for k, v in figures["by_name"].items()))
            print("    by length: " + ", ".join(f"{k} {v}" for k, v in figures["by_length"].items()))
            print(f"    tags inside words at their character: {figures['inside_words']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
