"""The user's terms on a pseudo-terminology test, as the WMT 2023 terminology task
measures them: whether each term's target is written (term success rate), what the
translation's quality becomes (chrF), what the search costs, and whether the word
alignment links each forced term to its source term.

    python bench/terminology.py [--model runs/translators/en-fr] [--work runs/translators]
                                [--sentences 1000] [--beam-size 5] [--rounds 2] [--threads 2]
                                [--seed 1] [--eurlex dev-glossary|test-glossary] [--json out.json]

1. Multi30k test_2016_flickr, English→French, and eflomal's grow-diag-final-and links
   of its pairs with their references (aligned together with the training text in
   `--work`, as bench/alignment.py aligns it; reused there).
2. Terms of each sentence, 1 to 3 drawn with `--seed`, in two modes:
   - content: an English content word (letters only, three or more, not a function
     word) and the one reference word it is linked to, linked to it alone: the nearest
     to the task's "proper" terms (nouns and their translations) without a tagger;
   - random: any word of the source and the one reference word it is linked to, linked
     to it alone (letters only).
   Each sentence's terms are its own (the same English word may have other targets in
   other sentences), so they go to the search as per-sentence terms, through the same
   constraint as a glossary's (`Request.wanted`, `Wanted.terms`).
3. For each mode, beside the free search on the same sentences: the share of terms
   whose target is written (a whole word, as written), chrF and BLEU (sacreBLEU), and
   the seconds of each (the best of `--rounds`, free and constrained alternating). A
   glossary that matches nothing against none, alternating, gives what a glossary costs
   a batch without a term, and checks that its output is unchanged.
4. With an alignment module in the model: of the terms written, the share whose every
   target word the module's own links (read as `translate --hard-alignments` reads them,
   before a term's links replace them) link to the source term's word.

Terms "run on" are those whose target stands in the output only as the start of a longer
word ("patients" for "patient"). With `--eurlex`, instead: the terms of a real glossary on
EU legal text, the EUR-Lex glossary sets of `../shared/data/xliff-tags/` (Hanneman & Dinu
2020, CC BY 4.0; each `<g>` pair an entry), against the free search on the same
sentences: term success, run-on terms, the words written against the free translation's
plus the terms' own, chrF and the time ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import alignment as setup  # noqa: E402  (bench/alignment.py: the test pairs and eflomal's links)

ROOT = setup.ROOT

FUNCTION_WORDS = frozenset(
    "a an the and or but of in on at to for from with by as into onto over under near while is are was "
    "were be been being has have had do does did his her their its our your my this that these those "
    "who whom which what there here some one two three four five up down out off about through".split()
)
"""English words that are no term: articles, prepositions, pronouns, auxiliaries, numerals."""

Term = tuple[int, str, str]  # (source word index, source word, reference word)


def one_to_one(links: list[tuple[int, int]]) -> dict[int, int]:
    """Source word → reference word, for the links whose two words have no other link."""
    sources: dict[int, int] = {}
    targets: dict[int, int] = {}
    for s, t in links:
        sources[s] = sources.get(s, 0) + 1
        targets[t] = targets.get(t, 0) + 1
    return {s: t for s, t in links if sources[s] == 1 and targets[t] == 1}


def drawn_terms(pairs: list[tuple[str, str]], links: list, mode: str, rng: random.Random) -> list[list[Term]]:
    """1 to 3 terms of each sentence (module docstring), as many as it has."""
    terms = []
    for (english, french), sentence_links in zip(pairs, links, strict=True):
        source, reference = english.split(), french.split()
        candidates = []
        for s, t in sorted(one_to_one(sentence_links).items()):
            word, target = source[s], reference[t]
            if not (word.isalpha() and target.isalpha()):
                continue
            if mode == "content" and (len(word) < 3 or word.lower() in FUNCTION_WORDS):
                continue
            candidates.append((s, word, target))
        rng.shuffle(candidates)
        terms.append(sorted(candidates[: rng.randint(1, 3)]))
    return terms


def written(text: str, target: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(target)}(?!\w)", text) is not None


def run_on(text: str, target: str) -> bool:
    """Whether the target stands in `text` only as the start of a longer word ("patients"
    for "patient"): run on, not written."""
    return not written(text, target) and re.search(rf"(?<!\w){re.escape(target)}\w", text) is not None


def searched(translator, sources: list[str], terms: list[list[Term]] | None, beam_size: int) -> list:
    """The translations of `sources`, each sentence with its own terms (None: free)."""
    from rnnsearch.decoding.wanted import Wanted

    request = translator.request({"beam_size": beam_size}, shown=False)
    wanted = None
    if terms is not None:
        targets = [[target for _, _, target in sentence] for sentence in terms]
        before = [" ".join(text.split()[: s + 1]) for text, sentence in zip(sources, terms) for s, _, _ in sentence]
        counts = iter(translator.input_kind.pieces(before) if before else [])
        ends = [[next(counts) for _ in sentence] for sentence in terms]  # the source piece after each term
        wanted = Wanted.asked(translator.tgt_subwords, terms=targets, term_ends=ends)
    return translator.decode(sources, sources, request.searched, wanted=wanted, read_from=request.source)


def eurlex_terms(name: str) -> tuple[list[tuple[str, str]], list[list[Term]]]:
    """The EUR-Lex glossary set `name` (dev-glossary, test-glossary) of
    `../shared/data/xliff-tags/` (Hanneman & Dinu 2020, CC BY 4.0): each English line
    without its tags and its French reference, and as its terms each `<g>` pair, the
    English words (their last word's index) and the French words the same id holds."""
    from rnnsearch.markup import parse

    folder = ROOT.parent / "shared" / "data" / "xliff-tags"
    english = (folder / f"{name}.en").read_text(encoding="utf-8").splitlines()
    french = (folder / f"{name}.fr").read_text(encoding="utf-8").splitlines()
    pairs, terms = [], []
    for en, fr in zip(english, french, strict=True):
        source, reference = parse(en, "xml"), parse(fr, "xml")
        held = {e.start_tag: " ".join(reference.words[e.first : e.stop]) for e in reference.elements}
        sentence = [
            (e.stop - 1, " ".join(source.words[e.first : e.stop]), held[e.start_tag])
            for e in source.elements
            if e.stop > e.first and held.get(e.start_tag)
        ]
        pairs.append((" ".join(source.words), " ".join(reference.words)))
        terms.append(sorted(dict.fromkeys(sentence)))
    return pairs, terms


def timed(runs: dict, rounds: int) -> tuple[dict[str, float], dict[str, list]]:
    """Each run's best seconds over `rounds`, the runs alternating, and its last outputs."""
    best = dict.fromkeys(runs, float("inf"))
    outputs = {}
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            outputs[name] = run()
            best[name] = min(best[name], time.perf_counter() - started)
    return best, outputs


def module_agreement(translator, translations: list, terms: list[list[Term]]) -> float | None:
    """Of the terms written, the share whose target word the module's own links link
    to the source term's word; None for a model without a module."""

    if not translator.model.has_alignment or not translator.request({}, shown=True).source.from_module:
        return None
    aligned = translator.align([t.source for t in translations], [t.text for t in translations])
    linked = total = 0
    for words, translation, sentence in zip(aligned, translations, terms, strict=True):
        targets = translation.text.split()
        for s, _, target in sentence:
            places = [k for k, word in enumerate(targets) if re.fullmatch(rf"\W*{re.escape(target)}\W*", word)]
            if not places:
                continue
            total += 1
            linked += any((s, k) in set(words.pairs) for k in places)
    return round(100 * linked / max(total, 1), 1)


def measured_terms(translator, pairs: list[tuple[str, str]], terms: list[list[Term]], args) -> dict:
    """A set's terms against the free search: term success, the words written, chrF and
    the seconds of each (the best of `--rounds`, alternating)."""
    import sacrebleu

    sources, references = [e for e, _ in pairs], [f for _, f in pairs]
    seconds, outputs = timed(
        {
            "free": lambda: searched(translator, sources, None, args.beam_size),
            "terms": lambda: searched(translator, sources, terms, args.beam_size),
        },
        args.rounds,
    )
    found = [(target, t.text) for sentence, t in zip(terms, outputs["terms"]) for _, _, target in sentence]
    words = {name: sum(len(t.text.split()) for t in outputs[name]) for name in outputs}
    term_words = sum(len(target.split()) for sentence in terms for _, _, target in sentence)
    row = {
        "sentences": len(pairs),
        "terms": len(found),
        "term_success": round(100 * sum(written(text, target) for target, text in found) / max(len(found), 1), 2),
        "run_on": sum(run_on(text, target) for target, text in found),
        "words": words,
        "term_words": term_words,
        "words_over_free_plus_terms": round(words["terms"] / max(words["free"] + term_words, 1), 3),
        "seconds": seconds,
        "ratio": round(seconds["terms"] / seconds["free"], 3),
    }
    for name in ("free", "terms"):
        row[f"chrf_{name}"] = round(sacrebleu.corpus_chrf([t.text for t in outputs[name]], [references]).score, 2)
    return row


def main() -> None:
    import sacrebleu

    import rnnsearch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "runs" / "translators" / "en-fr")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "translators")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eurlex", help="a EUR-Lex glossary set (dev-glossary, test-glossary): its terms")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    translator = rnnsearch.load(args.model, device="cpu", search={"max_source_length": 2000})
    if args.eurlex:
        pairs, terms = eurlex_terms(args.eurlex)
        report = measured_terms(translator, pairs[: args.sentences], terms[: args.sentences], args)
        print(json.dumps(report, indent=1))
        if args.json:
            args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
        return
    pairs = setup.multi30k_test_pairs()[: args.sentences]
    links = setup.flickr_links(args.work)
    if links is None:
        raise SystemExit("eflomal is not installed (pip install -e '.[align]'): no terms to draw")
    links = links[: len(pairs)]
    sources, references = [e for e, _ in pairs], [f for _, f in pairs]
    report: dict[str, object] = {"sentences": len(pairs), "beam_size": args.beam_size}
    nothing = {"Xylophonzzz": "xylo"}
    seconds, outputs = timed(
        {
            "free": lambda: translator.translate(sources, beam_size=args.beam_size),
            "a glossary matching nothing": lambda: translator.translate(
                sources, beam_size=args.beam_size, glossary=nothing
            ),
        },
        args.rounds,
    )
    free = [(t.text, t.score) for t in outputs["free"]]
    report["a batch without a term"] = {
        "seconds": seconds,
        "ratio": round(seconds["a glossary matching nothing"] / seconds["free"], 3),
        "unchanged": free == [(t.text, t.score) for t in outputs["a glossary matching nothing"]],
    }
    for mode in ("content", "random"):
        terms = drawn_terms(pairs, links, mode, random.Random(args.seed))
        seconds, outputs = timed(
            {
                "free": lambda: searched(translator, sources, None, args.beam_size),
                "terms": lambda terms=terms: searched(translator, sources, terms, args.beam_size),
            },
            args.rounds,
        )
        found = [(target, t.text) for sentence, t in zip(terms, outputs["terms"]) for _, _, target in sentence]
        free_found = [(target, t.text) for sentence, t in zip(terms, outputs["free"]) for _, _, target in sentence]
        row = {
            "terms": len(found),
            "term_success": round(100 * sum(written(text, target) for target, text in found) / len(found), 2),
            "term_success_free": round(100 * sum(written(text, target) for target, text in free_found) / len(found), 2),
            "run_on": sum(run_on(text, target) for target, text in found),
            "seconds": seconds,
            "ratio": round(seconds["terms"] / seconds["free"], 3),
        }
        for name in ("free", "terms"):
            hypotheses = [t.text for t in outputs[name]]
            row[f"chrf_{name}"] = round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2)
            row[f"bleu_{name}"] = round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)
        row["module_links_term"] = module_agreement(translator, outputs["terms"], terms)
        report[mode] = row
        print(f"{mode}: {json.dumps(row)}", file=sys.stderr)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
