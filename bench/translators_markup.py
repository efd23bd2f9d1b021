"""Tags where translators put them: the project's placement of markup against the tags
professional translators placed, on the English–French Salesforce help segments of
`../shared/data/markup/` (Hashimoto et al. 2019; the set Zenkel, Wuebker & DeNero 2021
measure placement on). The data's licence is non-commercial: this bench reads it from
`../shared` where it is, says so where it is not, and nothing of it enters the package.

    python bench/translators_markup.py [--work runs/translators] [--steps 1200] [--threads 1]
                                       [--aligner-steps 1200] [--links-only] [--tempers 0.5 ...]
                                       [--floor 0.02] [--json out.json]

1. Training text, as a user would make it: Multi30k's English–French training set and the
   untagged text of the 2,000 segments (`train.en`, `train.fr` in `--work`); English→French
   and French→English models from `configs/multi30k_en_fr.yaml` on it, `--steps` steps
   each (reused where trained).
2. Links, as a user would make them: `rnnsearch align-corpus` (eflomal, grow-diag-final-and)
   over all of it. The alignment modules of both directions (`train-aligner en-fr --reverse
   fr-en`, agreeing, `--aligner-steps` steps) learn from those links with the links of the
   575 tagged segments withheld, so that they align those as any new text.
3. Placement: each tagged English segment's tags are placed into the translators' French
   text with its tags removed, as `rnnsearch align --markup xml` places them, by eflomal's
   links, by the en→fr module (its links, its weights) and by both modules (combined by
   `soft`, and by the weights of both). The reference is where the translators put each
   element: the French words its tags enclose. Reported, on the first half of the tagged
   segments (where rules are chosen), on the second (reported) and on all:
   - elements placed exactly: on the same French words as the translators' (an element
     without words: at the same word boundary), and the same per element name;
   - Zenkel et al.'s tag accuracy: each opening, closing or standalone tag at exactly the
     character of the tag-free text where the translators put it (a tag next to a space
     counted on the word's side), and the mean distance in characters;
   - the word-level F1 of the elements' spans;
   - the bound the links allow: elements whose translators' span starts and ends on a word
     linked to the element's words (a rule that only chooses among the links places no
     more).
   With `--links-only` the modules are skipped (eflomal's links alone: no training).
   With `--tempers`, the modules' rows are also read with each module's jump table
   (`aligner/jumps.json`) raised to each power, any jump at least `--floor` (bench/counted_jumps.py's
   `tempered`), and placed by the en→fr module's weights, by both modules' `soft` links, and
   by both modules' weights averaged (where `align` reads the lesser; not a default).

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

import yaml

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "markup"
MULTI30K = ROOT / "data" / "multi30k"
BASE_CONFIG = ROOT / "configs" / "multi30k_en_fr.yaml"

sys.path.insert(0, str(ROOT))
from counted_jumps import tempered  # noqa: E402  (bench/counted_jumps.py: a table read at a power)

from rnnsearch.markup import MarkedUp, WordWeights, parse, place, transfer  # noqa: E402

Links = list[tuple[int, int]]


def segments() -> list[tuple[str, str, str]] | None:
    """(id, English, French) of every segment, in id order; None without the shared set."""
    english, french = SHARED / "enfr_en_dev.json", SHARED / "enfr_fr_dev.json"
    if not english.exists() or not french.exists():
        return None
    en = json.loads(english.read_text(encoding="utf-8"))["text"]
    fr = json.loads(french.read_text(encoding="utf-8"))["text"]
    return [(key, en[key], fr[key]) for key in sorted(en) if key in fr]


def plain(line: str) -> str:
    """A segment's text without its tags, its words separated by single spaces."""
    return " ".join(parse(line, "xml").text.split())


def write_corpus(work: Path, pairs: list[tuple[str, str, str]]) -> int:
    """Multi30k's training text and the segments' untagged text, in `work`; the index
    of the first segment's line."""
    work.mkdir(parents=True, exist_ok=True)
    first = 0
    for side, column in (("en", 1), ("fr", 2)):
        with gzip.open(MULTI30K / f"train.{side}.gz", "rt", encoding="utf-8") as corpus:
            lines = corpus.read().splitlines()
        first = len(lines)
        lines += [plain(pair[column]) for pair in pairs]
        (work / f"train.{side}").write_text("\n".join(lines) + "\n", encoding="utf-8")
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
    """`align-corpus`'s grow-diag-final-and links of every training pair (reused where made)."""
    links = work / "train.en-fr.align"
    if not links.exists():
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


def tag_positions(line: str) -> list[tuple[str, int]]:
    """Zenkel et al.'s tags of a line: each tag and its character in the tag-free text,
    white space collapsed, a tag beside a space counted on its word's side."""
    reader = _Tags()
    reader.feed(line)
    reader.close()
    raw, positions = reader.text, []
    for tag, at, opens in reader.tags:
        before = " ".join(raw[:at].split()) + (" " if raw[:at][-1:].isspace() and raw[:at].strip() else "")
        where = len(before)
        if not opens and before.endswith(" "):
            where -= 1
        positions.append((tag, where))
    return positions


def spans_by_tag(marked: MarkedUp, spans: list[tuple[int, int]]) -> Counter:
    """The multiset of (start tag, span) of a line's elements."""
    return Counter((element.start_tag, span) for element, span in zip(marked.elements, spans, strict=True))


def measured(cases: list[dict], placed: list[list[tuple[int, int]]], written: list[str]) -> dict:
    """The measures (module docstring) of `placed` (each case's element spans) and
    `written` (each case's marked-up French line) against the translators'."""
    exact = total = overlap = predicted = expected = tags = tags_right = distance = 0
    by_name: Counter = Counter()
    right_by_name: Counter = Counter()
    for case, spans, line in zip(cases, placed, written, strict=True):
        ours, theirs = spans_by_tag(case["en"], spans), case["reference"]
        for (start_tag, span), count in theirs.items():
            name = start_tag.strip("<>/").split()[0]
            by_name[name] += count
            right_by_name[name] += min(count, ours.get((start_tag, span), 0))
        total += sum(theirs.values())
        exact += sum((ours & theirs).values())
        mine, good = sorted(ours.elements()), sorted(theirs.elements())
        for (_, (a, b)), (_, (c, d)) in zip(mine, good, strict=True):
            words, wanted = set(range(a, b)), set(range(c, d))
            overlap, predicted, expected = overlap + len(words & wanted), predicted + len(words), expected + len(wanted)
        hypothesis, reference = Counter(tag_positions(line)), Counter(case["tags"])
        tags += sum(reference.values())
        tags_right += sum((hypothesis & reference).values())
        for tag, at in reference.elements():
            distance += min((abs(at - there) for name, there in hypothesis if name == tag), default=len(line))
    precision, recall = overlap / max(predicted, 1), overlap / max(expected, 1)
    return {
        "exact": round(100 * exact / max(total, 1), 1),
        "tag_accuracy": round(100 * tags_right / max(tags, 1), 1),
        "character_distance": round(distance / max(tags, 1), 2),
        "span_f1": round(100 * (2 * precision * recall / (precision + recall) if precision + recall else 0.0), 1),
        "elements": total,
        "by_name": {name: f"{right_by_name[name]}/{count}" for name, count in by_name.most_common()},
    }


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


def cases_of(pairs: list[tuple[str, str, str]], first: int) -> list[dict]:
    """Each tagged segment: its parsed English, the translators' French words and the
    spans (and tag positions) of their elements; its line in the training text."""
    cases = []
    for k, (key, english, french) in enumerate(pairs):
        marked = parse(english, "xml")
        if not marked.elements:
            continue
        theirs = parse(french, "xml")
        if sorted(e.start_tag for e in theirs.elements) != sorted(e.start_tag for e in marked.elements):
            continue
        spans = [(e.first, e.stop) for e in theirs.elements]
        cases.append(
            {
                "id": key,
                "line": first + k,
                "en": marked,
                "fr": theirs.text.split(),
                "reference": spans_by_tag(theirs, spans),
                "tags": tag_positions(" ".join(french.split())),
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


def by_tempered_table(
    cases: list[dict], forward: Path, backward: Path, temper: float, floor: float
) -> dict[str, tuple[list, list[str]]]:
    """The modules' rows read with their jump tables at the power `temper`, any jump at
    least `floor`: tags placed by the en→fr weights, by both directions' `soft` links, and
    around those by both directions' weights averaged (each link's probability their mean,
    where `align` reads the lesser: a link both must hold), by name."""
    import rnnsearch
    from rnnsearch.alignments.words import combine, read_translations

    longest = {"max_source_length": 2000}
    sources = [case["en"].text for case in cases]
    targets = [" ".join(case["fr"]) for case in cases]
    read = []
    for model_dir, given in ((forward, (sources, targets)), (backward, (targets, sources))):
        model = rnnsearch.load(model_dir, device="cpu", search=longest)
        table = model.module_jumps()
        if table is None:
            raise SystemExit(f"{model_dir}: its module has no jump table to temper")
        pairs = [pair.as_translation() for pair in model.score(*given, alignment_from="aligner")]
        read.append(read_translations(pairs, reading="output", prior=tempered(table, temper, floor)))
    rows = {}
    ahead, back = read
    soft = [combine(f, b, method="soft").pairs for f, b in zip(ahead, back, strict=True)]
    readings = {
        "module en→fr, weights": ([a.pairs for a in ahead], [WordWeights(a.weights) for a in ahead]),
        "modules of both directions, soft": (soft, [None] * len(ahead)),
        "modules of both directions, weights averaged": (
            soft,
            [WordWeights((a.weights + b.weights.T) / 2) for a, b in zip(ahead, back, strict=True)],
        ),
    }
    for name, (links, weights) in readings.items():
        placed, written = [], []
        for case, pairs, given_weights in zip(cases, links, weights, strict=True):
            placed.append(place(case["en"], len(case["fr"]), pairs, weights=given_weights, target_words=case["fr"]))
            written.append(transfer(case["en"], case["fr"], pairs, weights=given_weights))
        rows[name] = (placed, written)
    return rows


def halves(cases: list[dict], placed: list, written: list[str]) -> dict:
    middle = len(cases) // 2
    parts = {"first half": slice(0, middle), "second half": slice(middle, None), "all": slice(None)}
    return {name: measured(cases[part], placed[part], written[part]) for name, part in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "translators")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--aligner-steps", type=int, default=1200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--links-only", action="store_true")
    parser.add_argument("--tempers", nargs="*", type=float, default=[], help="powers of the modules' jump tables")
    parser.add_argument("--floor", type=float, default=0.02, help="with --tempers: the least weight of a jump")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pairs = segments()
    if pairs is None:
        print(f"no tagged segments at {SHARED}: nothing to measure (the set is not shipped)", file=sys.stderr)
        return
    first = write_corpus(args.work, pairs)
    cases = cases_of(pairs, first)
    print(f"{len(cases)} tagged segments, {sum(sum(c['reference'].values()) for c in cases)} elements", file=sys.stderr)
    eflomal = eflomal_links(args.work, steps=args.steps, threads=args.threads)
    rows = {}
    chosen = [eflomal[case["line"]] for case in cases]
    rows["eflomal grow-diag-final-and"] = {**halves(cases, *by_links(cases, chosen)), "bound": bound(cases, chosen)}
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
            rows[name] = halves(cases, *by_module(cases, forward, reverse, weights))
        for temper in args.tempers:
            for name, result in by_tempered_table(cases, forward, backward, temper, args.floor).items():
                rows[f"{name}, tables to the power {temper:g}, floor {args.floor:g}"] = halves(cases, *result)
    for name, row in rows.items():
        print(f"\n{name}" + (f" (bound {row['bound']}%)" if "bound" in row else ""))
        for part in ("first half", "second half", "all"):
            figures = row[part]
            print(
                f"  {part:12s} exact {figures['exact']:5.1f}%  tag accuracy {figures['tag_accuracy']:5.1f}%  "
                f"distance {figures['character_distance']:5.2f}  span F1 {figures['span_f1']:5.1f}  "
                f"({figures['elements']} elements)"
            )
        print("  by name (all): " + ", ".join(f"{k} {v}" for k, v in row["all"]["by_name"].items()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
