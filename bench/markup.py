"""How well markup survives translation: tags placed by each alignment against the places
human alignments give them, and what `translate --markup` costs.

    python bench/markup.py [--work runs/bench-alignment] [--steps 1200] [--threads 1]
                           [--variants NAME ...] [--modules FOLDER ...] [--placement-only]
                           [--seed 1] [--json out.json]

1. Models and links as bench/alignment.py makes them (and reuses, in the same `--work`):
   English→French and French→English trained on Multi30k plus the Hansards' text,
   `--steps` steps each, the guided variants of `--variants` (default guided-1, λ = 1),
   and eflomal's links of the same text.
2. Placement on the 447 Hansards pairs of `data/alignment/`: each English sentence gets
   synthetic markup, drawn with `--seed`: 1 to 3 elements over spans of 1 to 4 words, a
   quarter of them nested in another, and a `<br/>` at a word boundary in a third of the
   sentences. The reference places every tag on the French reference translation by the
   human sure links (rnnsearch.markup's rules); each system places them on the same
   translation by its own links, as `rnnsearch align --markup` does: the attention of the
   English→French model (and both directions combined by grow-diag-final-and), guided
   attention, eflomal's grow-diag-final-and links, and the alignment modules of
   `--modules` (folders of `--work` holding en-fr and fr-en models with modules, as
   bench/aligner.py leaves them: aligner-both-withheld, self-trained-both), each direction
   alone and both combined by grow-diag-final-and and by `soft`; and the modules' word
   weights (`--placement weights`: en→fr alone, and with fr→en's), on all the pairs and
   on each half (the rule's form was chosen on the first). Reported: the share of elements placed
   exactly where the reference places them (the same target words, or for a tag without
   words the same boundary), Zenkel et al.'s tag accuracy (each opening, closing or
   standalone tag at exactly its reference position), the share of sentences with every
   tag right, and the word-level F1 of the elements' spans, summed over every element the
   reference gives words; the human links' own placement is the ceiling. The same on
   Multi30k test_2016_flickr, the models' own domain, where eflomal's grow-diag-final-and
   links place the reference (each module's links and weights).
3. On Multi30k test_2016_flickr, English→French with beam 5: the same synthetic markup on
   each English sentence, `translate(…, markup="xml")` against plain translation. The
   translations must be the same (so BLEU is), every output well-formed, and every tag
   kept; 20 examples are printed. Then the speed of both, alternating, the best of
   `--rounds` each, in sentences per second. `--placement-only` stops after 2 and the
   cost of each module's placement by weights against its links (`translate --markup`
   with the module's en→fr model, alternating).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import alignment as setup  # noqa: E402  (bench/alignment.py: the corpus, the models and eflomal's links)

ROOT = setup.ROOT

from rnnsearch.markup import MarkedUp, WordWeights, escape, parse, place  # noqa: E402

Links = list[list[tuple[int, int]]]


def tagged(words: list[str], rng: random.Random) -> str:
    """`words` with synthetic markup: 1–3 elements over 1–4 words, some nested, sometimes a <br/>."""
    count = len(words)
    opens: dict[int, list[str]] = {}
    closes: dict[int, list[str]] = {}
    used: list[tuple[int, int]] = []
    for k in range(rng.randint(1, 3)):
        length = rng.randint(1, min(4, count))
        start = rng.randrange(count - length + 1)
        span = (start, start + length)
        if span in used or any(_crosses(span, other) for other in used):
            continue
        used.append(span)
        name, attribute = rng.choice([("b", ""), ("i", ""), ("a", f' href="#{k}"'), ("span", ' class="x"')])
        opens.setdefault(span[0], []).append((span[1], f"<{name}{attribute}>"))
        closes.setdefault(span[1], []).append((span[0], f"</{name}>"))
        if rng.random() < 0.25 and length >= 2:  # a child over its words but the first
            inner = (span[0] + 1, span[1])
            if inner not in used and all(not _crosses(inner, other) for other in used):
                used.append(inner)
                opens.setdefault(inner[0], []).append((inner[1], "<em>"))
                closes.setdefault(inner[1], []).append((inner[0], "</em>"))
    line_break = rng.randrange(1, count) if count > 1 and rng.random() < 1 / 3 else None
    parts = []
    for position in range(count + 1):
        # closing innermost first (latest start), opening outermost first (furthest end)
        parts.extend(tag for _, tag in sorted(closes.get(position, []), reverse=True))
        if position == line_break:
            parts.append("<br/>")
        if position < count:
            parts.append(" " if position else "")
            parts.extend(tag for _, tag in sorted(opens.get(position, []), reverse=True))
            parts.append(escape(words[position]))
    return "".join(parts)


def _crosses(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two spans overlap without one holding the other (markup cannot express it)."""
    return a[0] < b[0] < a[1] < b[1] or b[0] < a[0] < b[1] < a[1]


def hansards_markup(seed: int) -> list[tuple[MarkedUp, list[str]]]:
    """Each Hansards pair's English side with synthetic markup, parsed, and its French words."""
    rng = random.Random(seed)
    return [(parse(tagged(english.split(), rng), "xml"), french.split()) for english, french in setup.hansards_pairs()]


def placement(
    pairs: list[tuple[MarkedUp, list[str]]],
    links: Links,
    reference: Links,
    weights: list[WordWeights] | None = None,
) -> dict:
    """Against the reference's places: the share of elements placed exactly there, Zenkel
    et al.'s tag accuracy (each tag, opening, closing or standalone, at exactly its
    reference position), the share of sentences with every tag right, and the word-level
    F1 of the spans of the elements the reference gives words. With `weights` (one per
    pair), tags are placed by them."""
    exact = total = tags = tags_right = sentences_right = overlap = predicted = expected = 0
    for k, ((marked, target), ours, theirs) in enumerate(zip(pairs, links, reference, strict=True)):
        given = None if weights is None else weights[k]
        mine = place(marked, len(target), ours, weights=given, target_words=target)  # as `align --markup` places
        right = place(marked, len(target), theirs)
        all_right = True
        for element, (start, stop), (good_start, good_stop) in zip(marked.elements, mine, right, strict=True):
            total += 1
            exact += (start, stop) == (good_start, good_stop)
            all_right &= (start, stop) == (good_start, good_stop)
            ends = [(start, good_start)] + ([(stop, good_stop)] if element.end_tag is not None else [])
            tags, tags_right = tags + len(ends), tags_right + sum(ours_at == theirs_at for ours_at, theirs_at in ends)
            if good_stop > good_start:
                words, good = set(range(start, stop)), set(range(good_start, good_stop))
                overlap, predicted, expected = overlap + len(words & good), predicted + len(words), expected + len(good)
        sentences_right += all_right
    precision, recall = overlap / max(predicted, 1), overlap / max(expected, 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "exact": 100 * exact / total,
        "tag_accuracy": 100 * tags_right / max(tags, 1),
        "sentences_right": 100 * sentences_right / max(len(pairs), 1),
        "span_f1": 100 * f1,
        "elements": total,
    }


def model_links(
    model: Path, pairs: list[tuple[MarkedUp, list[str]]], reverse: Path | None = None, symmetrize: str | None = None
) -> Links:
    """The links `align --markup` places tags by: the model's, with `reverse` both
    directions' combined by `symmetrize` (None: `align`'s default)."""
    return model_alignments(model, pairs, reverse, symmetrize)[0]


def model_alignments(
    model: Path, pairs: list[tuple[MarkedUp, list[str]]], reverse: Path | None = None, symmetrize: str | None = None
) -> tuple[Links, list[WordWeights]]:
    """`model_links`, and the word weights `align --markup --placement weights` places tags
    by: the model's, with `reverse` the reverse model's too."""
    import rnnsearch

    translator = rnnsearch.load(model, device="cpu")
    backward = None if reverse is None else rnnsearch.load(reverse, device="cpu")
    sources = [marked.line for marked, _ in pairs]
    targets = [" ".join(target) for _, target in pairs]
    combined = {} if symmetrize is None else {"symmetrize": symmetrize}
    aligned = translator.align(sources, targets, reverse=backward, markup="xml", **combined)
    reverse_weights: list[np.ndarray | None] = [None] * len(pairs)
    if backward is not None:
        plain = [marked.text for marked, _ in pairs]
        reverse_weights = [words.weights for words in backward.align(targets, plain)]
    weights = [WordWeights(words.weights, back) for words, back in zip(aligned, reverse_weights, strict=True)]
    return [words.pairs for words in aligned], weights


def flickr_placement(work: Path, folders: list[str], seed: int) -> dict[str, dict]:
    """Placement on Multi30k test_2016_flickr, the models' own domain, where eflomal's
    grow-diag-final-and links (aligned with the training text) place the reference: each
    module folder's links and weights; {} without eflomal."""
    reference = setup.flickr_links(work)
    if reference is None:
        return {}
    rng = random.Random(seed)
    pairs = [(parse(tagged(en.split(), rng), "xml"), fr.split()) for en, fr in setup.multi30k_test_pairs()]
    rows = {}
    for folder in folders:
        forward, backward = work / folder / "en-fr", work / folder / "fr-en"
        links, weights = model_alignments(forward, pairs)
        rows[f"module {folder} en→fr"] = placement(pairs, links, reference)
        rows[f"module {folder} en→fr, weights"] = placement(pairs, links, reference, weights)
        links, weights = model_alignments(forward, pairs, backward, "soft")
        rows[f"module {folder}, both directions (soft)"] = placement(pairs, links, reference)
        rows[f"module {folder}, both directions, weights"] = placement(pairs, links, reference, weights)
    return rows


def flickr(model: Path, seed: int, rounds: int) -> dict:
    """Synthetic markup on test_2016_flickr's English side, translated with and without it."""
    import rnnsearch

    translator = rnnsearch.load(model, device="cpu")
    sources, _ = setup.test_set("en", "fr")
    rng = random.Random(seed)
    lines = [tagged(source.split(), rng) if source.split() else source for source in sources]
    plain_texts = [parse(line, "xml").text for line in lines]
    marked = translator.translate(lines, beam_size=5, markup="xml")
    plain = translator.translate(plain_texts, beam_size=5)
    same = sum(m.text == p.text for m, p in zip(marked, plain, strict=True))
    well_formed = kept = 0
    for line, result in zip(lines, marked, strict=True):
        try:
            output = parse(result.marked_up, "xml")
        except ValueError:
            continue
        well_formed += 1
        kept += _tags(output) == _tags(parse(line, "xml"))
    speeds = {"plain": 0.0, "markup": 0.0}
    for _ in range(rounds):
        for name, texts, markup in (("plain", plain_texts, None), ("markup", lines, "xml")):
            start = time.perf_counter()
            translator.translate(texts, beam_size=5, markup=markup)
            speeds[name] = max(speeds[name], len(texts) / (time.perf_counter() - start))
    examples = [(line, result.marked_up) for line, result in zip(lines[:20], marked[:20], strict=True)]
    count = len(lines)
    return {
        "sentences": count,
        "same_translation": 100 * same / count,
        "well_formed": 100 * well_formed / count,
        "tags_kept": 100 * kept / count,
        "sentences_per_s": {name: round(value, 1) for name, value in speeds.items()},
        "markup_speed_ratio": round(speeds["markup"] / speeds["plain"], 3),
        "examples": examples,
    }


def placement_cost(model: Path, seed: int, rounds: int) -> dict:
    """`translate --markup` on test_2016_flickr with a module's model (beam 5), its tags
    placed by the links and by the weights, alternating: the best of `rounds` each, in
    sentences per second, and the same translations either way."""
    import rnnsearch

    translator = rnnsearch.load(model, device="cpu")
    sources, _ = setup.test_set("en", "fr")
    rng = random.Random(seed)
    lines = [tagged(source.split(), rng) if source.split() else source for source in sources]
    speeds = {"links": 0.0, "weights": 0.0}
    texts = {}
    for _ in range(rounds):
        for placed in speeds:
            start = time.perf_counter()
            results = translator.translate(lines, beam_size=5, markup="xml", placement=placed)
            speeds[placed] = max(speeds[placed], len(lines) / (time.perf_counter() - start))
            texts[placed] = [result.text for result in results]
    return {
        "sentences_per_s": {name: round(value, 1) for name, value in speeds.items()},
        "weights_over_links_time": round(speeds["links"] / speeds["weights"], 3),
        "same_translations": texts["links"] == texts["weights"],
    }


def _tags(marked: MarkedUp) -> Counter:
    return Counter((element.start_tag, element.end_tag) for element in marked.elements)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    setup.add_model_options(parser)
    parser.add_argument(
        "--variants", nargs="*", choices=[v for v in setup.VARIANTS if v != "baseline"], default=["guided-1"],
        help="guided or coverage variants whose attention places tags too (default guided-1)",
    )  # fmt: skip
    parser.add_argument(
        "--modules", nargs="*", default=[],
        help="folders of --work holding en-fr and fr-en models with alignment modules, whose links place tags too",
    )  # fmt: skip
    parser.add_argument("--placement-only", action="store_true", help="skip the translations of test_2016_flickr")
    parser.add_argument("--seed", type=int, default=1, help="the synthetic markup's seed")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each way of translating")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    setup.write_corpus(args.work)
    from rnnsearch.evaluation.alignment_error import read_gold

    eflomal = setup.eflomal_links(args.work)
    chosen = [setup.VARIANTS["baseline"], *(setup.VARIANTS[name] for name in args.variants)]
    if any(variant.guide for variant in chosen):
        setup.write_guides(args.work, args.work / "eflomal.hansards.fwd", args.work / "eflomal.hansards.rev")
    trained = setup.train_models(args.work, steps=args.steps, threads=args.threads, variants=chosen)
    pairs = hansards_markup(args.seed)
    gold = read_gold(setup.HANSARDS / "enfr.gold", one_based=True)
    reference = [sorted(links.sure) for links in gold]
    systems = {
        "attention en→fr": model_links(trained["baseline"]["en-fr"], pairs),
        "attention, both directions (grow-diag-final-and)": model_links(
            trained["baseline"]["en-fr"], pairs, reverse=trained["baseline"]["fr-en"]
        ),
    }
    for variant in args.variants:
        directions = trained[variant]
        systems[f"{variant} attention en→fr"] = model_links(directions["en-fr"], pairs)
    weighed: dict[str, list[WordWeights]] = {}
    weighed_links: dict[str, Links] = {}  # where the weights place no word, these place the tag
    for folder in args.modules:
        forward, backward = args.work / folder / "en-fr", args.work / folder / "fr-en"
        systems[f"module {folder} en→fr"], weighed[f"module {folder} en→fr, weights"] = model_alignments(forward, pairs)
        for method in ("grow-diag-final-and", "soft"):
            links, weights = model_alignments(forward, pairs, backward, method)
            systems[f"module {folder}, both directions ({method})"] = links
        weighed[f"module {folder}, both directions, weights"] = weights
        weighed_links[f"module {folder} en→fr, weights"] = systems[f"module {folder} en→fr"]
        weighed_links[f"module {folder}, both directions, weights"] = links  # soft's
    if eflomal:
        systems["eflomal grow-diag-final-and"] = eflomal["eflomal grow-diag-final-and"]
    reference_rows = {"human sure links (the ceiling)": placement(pairs, reference, reference)}
    rows = reference_rows | {name: placement(pairs, links, reference) for name, links in systems.items()}
    for name, weights in weighed.items():
        rows[name] = placement(pairs, weighed_links[name], reference, weights)
    _print_rows(rows)
    print(f"\n{next(iter(rows.values()))['elements']:,} elements on {len(pairs)} Hansards pairs (seed {args.seed})")
    _print_halves(pairs, reference, systems | weighed_links, weighed)
    in_domain = flickr_placement(args.work, args.modules, args.seed)
    if in_domain:
        print("\ntest_2016_flickr, tags placed by eflomal's grow-diag-final-and links as the reference:\n")
        _print_rows(in_domain)
    rows |= {f"flickr: {name}": row for name, row in in_domain.items()}
    for folder in args.modules:
        cost = placement_cost(args.work / folder / "en-fr", args.seed, args.rounds)
        print(f"\ntranslate --markup with {folder}'s en→fr, placed by links and by weights: {json.dumps(cost)}")
        rows[f"cost: {folder}"] = cost
    if args.placement_only:
        if args.json:
            args.json.write_text(json.dumps({"placement": rows}, ensure_ascii=False, indent=1))
        return
    figures = flickr(trained["baseline"]["en-fr"], args.seed, args.rounds)
    print(json.dumps({key: value for key, value in figures.items() if key != "examples"}, indent=1))
    print("\n| source | translation with its markup |\n|---|---|")
    for source, output in figures["examples"]:
        print(f"| {_cell(source)} | {_cell(output)} |")
    if args.json:
        args.json.write_text(json.dumps({"placement": rows, "flickr": figures}, ensure_ascii=False, indent=1))


def _print_rows(rows: dict[str, dict]) -> None:
    """Placement figures as a Markdown table, a row per system."""
    print("| placed by | tags placed exactly (%) | tag accuracy (%) | sentences all right (%) | span word F1 (%) |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(
            f"| {name} | {row['exact']:.1f} | {row['tag_accuracy']:.1f} | {row['sentences_right']:.1f} "
            f"| {row['span_f1']:.1f} |"
        )


def _print_halves(
    pairs: list[tuple[MarkedUp, list[str]]], reference: Links, links: dict[str, Links], weights: dict[str, list]
) -> None:
    """Each system's share of elements placed exactly on the first and on the second half
    of the pairs, where a rule's form was chosen on the first (BENCHMARKS.md)."""
    halves = [slice(None, len(pairs) // 2), slice(len(pairs) // 2, None)]
    print("\n| placed by | first half: exact (%) | second half: exact (%) |\n|---|---|---|")
    for name, placed in links.items():
        weighed = weights.get(name)
        exact = [placement(pairs[k], placed[k], reference[k], None if weighed is None else weighed[k])["exact"]
                 for k in halves]  # fmt: skip
        print(f"| {name} | {exact[0]:.1f} | {exact[1]:.1f} |")


def _cell(text: str) -> str:
    """Markup shown as text in a Markdown table cell."""
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


if __name__ == "__main__":
    main()
