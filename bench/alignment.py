"""How good RNNsearch's word alignments are: AER against human English–French alignments,
each way of reading α, each symmetrisation, and eflomal trained on the same text.

    python bench/alignment.py [--work runs/bench-alignment] [--steps 1200] [--threads 1]
                              [--variants NAME ...] [--coverage-penalties β ...] [--seed N]
                              [--json out.json]

1. Training text: Multi30k's English–French training set (29,000 pairs, as distributed:
   cased, untokenised) followed by the 447 Hansards sentence pairs of `data/alignment/`
   (tokenised, French contractions split: "de le" for "du"), without their gold links.
   Written to `--work` as `train.en` and `train.fr`.
2. Two models, English→French and French→English, from `configs/multi30k_en_fr.yaml`
   (the default sizes) with that training text, `--steps` steps, the learning rate
   annealed over the last 25%, `--threads` CPU threads each; both train at once. A model
   whose run finished is reused.
3. For each model, the Hansards pairs aligned by teacher forcing (`Translator.align`)
   with each reading of α in `rnnsearch.alignments.readings.READINGS`, and, with the other
   direction's model as the reverse, every symmetrisation in `rnnsearch.alignments.symmetrisation`;
   for English→French also the other rule, a link wherever a word's weight reaches
   0.3 or 0.5; each scored against `data/alignment/enfr.gold` (sure and possible links,
   1-based). A diagonal alignment (no model) is the floor.
4. eflomal (`pip install -e '.[align]'`) on exactly the same training text, words split
   at spaces, both directions and every symmetrisation, scored the same way.
5. Where the links go wrong, for RNNsearch English→French (default reading) and eflomal:
   precision and recall by the kind of French word (punctuation, function word, content
   word), links on words people left unaligned, and how far wrong links land from the
   right English word. And how far the Hansards lie from Multi30k: the share of their
   words Multi30k's training set never has.
6. Where no human alignments exist, eflomal's grow-diag-final-and links stand in: on
   Multi30k test_2016_flickr, the models' own domain (eflomal aligning those pairs
   together with the training text), and on the Hansards for comparison.
7. Each model's sacreBLEU on Multi30k test_2016_flickr (beam 5), so alignment and
   translation are read together.
8. The variants (`VARIANTS`), each trained with the same steps, two at a time as the
   baseline's pair trains: guided alignment at three weights λ, trained on eflomal's
   grow-diag-final-and links of the whole training text (the very links its AER row
   scores; `guide.en-fr` and `guide.fr-en` in `--work`), the coverage model, and
   coverage with guidance. For each: AER of each direction and of the two combined by
   grow-diag-final-and (default reading), in the models' own domain the English→French
   AER on test_2016_flickr against eflomal's links (as in 6), English→French sacreBLEU on
   test_2016_flickr (beam 5), repeated words per 100 output words
   (`rnnsearch.evaluation.repetition`) and training speed (target tokens/s, the mean
   over the logged steps). The unguided variants also decode with each coverage penalty
   β of `--coverage-penalties`. eflomal's links are kept in `--work` and reused, since
   it samples and a second run would give other links. `--seed N` trains every model
   from another seed (in another `--work`), to see how far a seed moves the figures.

Models already trained in `--work` are reused. On a 2-core CPU each pair of models trains
in 20–30 minutes, so a first run of every variant takes about three hours.

Prints Markdown tables (AER, precision, recall in percent, links) and, with `--json`,
writes every figure. `make bench-alignment` installs eflomal and runs it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HANSARDS = ROOT / "data" / "alignment"
MULTI30K = ROOT / "data" / "multi30k"
BASE_CONFIG = ROOT / "configs" / "multi30k_en_fr.yaml"
LANGUAGES = ("en", "fr")


def hansards_pairs() -> list[tuple[str, str]]:
    """The 447 Hansards pairs, English then French, words single-spaced."""
    lines = (HANSARDS / "enfr.src-tgt").read_text(encoding="utf-8").splitlines()
    pairs = []
    for line in lines:
        english, french = line.split("|||")
        pairs.append((" ".join(english.split()), " ".join(french.split())))
    return pairs


def write_corpus(work: Path) -> dict[str, Path]:
    """Multi30k's training set followed by the Hansards pairs, one file per language."""
    work.mkdir(parents=True, exist_ok=True)
    hansards = hansards_pairs()
    paths = {}
    for side, language in enumerate(LANGUAGES):
        with gzip.open(MULTI30K / f"train.{language}.gz", "rt", encoding="utf-8") as handle:
            multi30k = handle.read().splitlines()
        path = work / f"train.{language}"
        text = "\n".join([*multi30k, *(pair[side] for pair in hansards)]) + "\n"
        path.write_text(text, encoding="utf-8")
        (work / f"hansards.{language}").write_text("\n".join(p[side] for p in hansards) + "\n", encoding="utf-8")
        paths[language] = path
    return paths


def model_config(work: Path, source: str, target: str, *, steps: int, threads: int, variant: Variant) -> Path:
    """The default en–fr config, turned to `source`→`target`, this corpus and budget, and `variant`'s settings."""
    config = yaml.safe_load(BASE_CONFIG.read_text(encoding="utf-8"))
    data = config["data"]
    data["train"] = {"src": str(work / f"train.{source}"), "tgt": str(work / f"train.{target}")}
    if variant.guide:
        data["train"]["alignments"] = str(work / f"guide.{source}-{target}")
    for split in ("valid", "test"):
        stem = Path(data[split]["src"]).name.split(".")[0]
        data[split] = {"src": str(MULTI30K / f"{stem}.{source}.gz"), "tgt": str(MULTI30K / f"{stem}.{target}.gz")}
    data["src_lang"], data["tgt_lang"] = source, target
    train = config["train"]
    train.update(
        model_dir=str(variant.directory(work) / f"{source}-{target}"),
        max_steps=steps,
        max_minutes=None,
        valid_every=max(steps // 3, 1),
        threads=threads,
    )
    for key, value in variant.settings.items():
        *sections, name = key.split(".")
        tree = config
        for section in sections:
            tree = tree[section]
        tree[name] = value
    path = variant.directory(work) / f"{source}-{target}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Variant:
    """A way to train the benchmark's models: settings over the default config, whether
    eflomal's links guide the attention, and which directions it trains."""

    name: str
    settings: dict = field(default_factory=dict)
    guide: bool = False
    directions: tuple[str, ...] = ("en-fr", "fr-en")

    def directory(self, work: Path) -> Path:
        """Where its models, configs and logs go: `work` itself for the baseline."""
        return work if self.name == "baseline" else work / self.name


# The variants trained with the same budget; `--variants` picks among them. Guidance uses
# eflomal's grow-diag-final-and links on the training text (the links its AER row scores).
VARIANTS = {
    variant.name: variant
    for variant in (
        Variant("baseline"),
        Variant("guided-1", {"train.guided_alignment_weight": 1.0}, guide=True),
        Variant("guided-0.3", {"train.guided_alignment_weight": 0.3}, guide=True, directions=("en-fr",)),
        Variant("guided-3", {"train.guided_alignment_weight": 3.0}, guide=True, directions=("en-fr",)),
        Variant("coverage", {"model.attention.coverage": True}),
        Variant(
            "coverage-guided-1",
            {"model.attention.coverage": True, "train.guided_alignment_weight": 1.0},
            guide=True,
            directions=("en-fr",),
        ),
    )
}


def write_guides(work: Path, forward: Path, reverse: Path) -> None:
    """eflomal's two directions over the whole training text, combined by
    grow-diag-final-and, as the Pharaoh files guided variants train on: `guide.en-fr`
    (English word first) and `guide.fr-en` (French word first). Written once."""
    from rnnsearch.alignments.symmetrisation import symmetrise

    if (work / "guide.fr-en").exists():
        return
    english = (work / "train.en").read_text(encoding="utf-8").splitlines()
    french = (work / "train.fr").read_text(encoding="utf-8").splitlines()
    count = len(english)
    lines = {"en-fr": [], "fr-en": []}
    links = zip(read_pharaoh(forward, count), read_pharaoh(reverse, count), english, french, strict=True)
    for f, r, e, fr in links:
        both = symmetrise(
            f, r, source_length=len(e.split()), target_length=len(fr.split()), method="grow-diag-final-and"
        )
        lines["en-fr"].append(" ".join(f"{i}-{j}" for i, j in both))
        lines["fr-en"].append(" ".join(f"{j}-{i}" for i, j in sorted(both, key=lambda link: (link[1], link[0]))))
    for name, text in lines.items():
        (work / f"guide.{name}").write_text("\n".join(text) + "\n", encoding="utf-8")


def train_models(work: Path, *, steps: int, threads: int, variants: list[Variant], parallel: int = 2) -> dict:
    """Each variant's model directories by direction, training those not finished before,
    `parallel` at a time (so each trains under the same load as the baseline's pair)."""
    todo = []
    for variant in variants:
        for name in variant.directions:
            finished = variant.directory(work) / f"{name}.trained"
            if not (finished.exists() and json.loads(finished.read_text())["steps"] == steps):
                todo.append((variant, name))
    running: list = []
    while todo or running:
        while todo and len(running) < parallel:
            variant, name = todo.pop(0)
            running.append((variant, name, *start_training(work, variant, name, steps=steps, threads=threads)))
        for run in [run for run in running if run[2].poll() is not None]:
            running.remove(run)
            variant, name, process, log, start = run
            log.close()
            if process.returncode != 0:
                raise SystemExit(f"training {variant.name} {name} failed: see {variant.directory(work) / name}.log")
            record = {"steps": steps, "threads": threads, "seconds": round(time.time() - start)}
            (variant.directory(work) / f"{name}.trained").write_text(json.dumps(record), encoding="utf-8")
        time.sleep(5)
    return {v.name: {name: v.directory(work) / name for name in v.directions} for v in variants}


def start_training(work: Path, variant: Variant, name: str, *, steps: int, threads: int) -> tuple:
    """`rnnsearch train` of one variant's one direction, started: its process, log and start time."""
    source, target = name.split("-")
    config = model_config(work, source, target, steps=steps, threads=threads, variant=variant)
    subprocess.run(["rm", "-rf", str(variant.directory(work) / name)], check=True)
    log = open(variant.directory(work) / f"{name}.log", "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    command = [sys.executable, "-m", "rnnsearch", "train", str(config)]
    return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log, time.time()


Row = dict[str, object]


def scored(system: str, links: list[list[tuple[int, int]]], gold: list) -> Row:
    """One table row: `system`'s links scored against the gold ones."""
    from rnnsearch.evaluation.alignment_error import alignment_error_rate

    return {"system": system, **alignment_error_rate(links, gold).as_dict()}


def check_words(alignments: list, texts: list[tuple[str, str]], name: str) -> None:
    """That the model reads each Hansards pair as the words the gold links count."""
    for number, (alignment, (source, target)) in enumerate(zip(alignments, texts, strict=True), start=1):
        counts = (len(alignment.source_words), len(alignment.target_words))
        if counts != (len(source.split()), len(target.split())):
            raise SystemExit(f"{name}: Hansards pair {number}: the model reads {counts} words, not the text's")


Links = list[list[tuple[int, int]]]  # per pair, (English word, French word) links, 0-based


def rnnsearch_links(models: dict[str, Path]) -> dict[str, Links]:
    """Each direction's links read each way from α, and every symmetrisation of the two."""
    import rnnsearch
    from rnnsearch.alignments.readings import READINGS
    from rnnsearch.alignments.symmetrisation import METHODS
    from rnnsearch.alignments.words import combine

    pairs = hansards_pairs()
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    en_fr, fr_en = (rnnsearch.load(models[name], device="cpu") for name in ("en-fr", "fr-en"))
    systems = {}
    for reading in READINGS:
        forward = en_fr.align(english, french, reading=reading)
        backward = fr_en.align(french, english, reading=reading)
        check_words(forward, pairs, "en-fr")
        check_words(backward, [(f, e) for e, f in pairs], "fr-en")
        systems[f"RNNsearch en→fr, {reading} reading"] = [a.pairs for a in forward]
        for threshold in THRESHOLDS:
            systems[f"RNNsearch en→fr, {reading} reading, every weight ≥ {threshold}"] = [
                above(a, threshold) for a in forward
            ]
        systems[f"RNNsearch fr→en, {reading} reading"] = [[(e, f) for f, e in a.pairs] for a in backward]
        for method in METHODS:
            links = [combine(f, b, method=method).pairs for f, b in zip(forward, backward, strict=True)]
            systems[f"RNNsearch {method}, {reading} reading"] = links
    return systems


THRESHOLDS = (0.3, 0.5)  # the other rule: a link wherever a word's weight reaches it


def above(alignment, threshold: float) -> list[tuple[int, int]]:
    """The links of every (source word, target word) whose word-level α is at least `threshold`."""
    targets, sources = (alignment.weights >= threshold).nonzero()
    return sorted(zip(sources.tolist(), targets.tolist(), strict=True))


def unseen_words() -> str:
    """How far the Hansards lie from Multi30k: the share of their (lowercased) words that
    Multi30k's tokenised training set never has, or has fewer than 5 times."""
    lines = []
    for side, language in enumerate(LANGUAGES):
        with gzip.open(MULTI30K / "tok" / f"train.lc.norm.tok.{language}.gz", "rt", encoding="utf-8") as handle:
            counts = Counter(handle.read().split())
        words = [word.lower() for pair in hansards_pairs() for word in pair[side].split()]
        unseen = sum(counts[word] == 0 for word in words) / len(words)
        rare = sum(counts[word] < 5 for word in words) / len(words)
        lines.append(
            f"{language}: {100 * unseen:.1f}% never in Multi30k's training set, {100 * rare:.1f}% under 5 times"
        )
    return "Hansards words (" + "; ".join(lines) + ")"


def diagonal_links() -> dict[str, Links]:
    """The floor: each French word linked to the English word at the same relative position."""
    links = []
    for english, french in hansards_pairs():
        n, m = len(english.split()), len(french.split())
        links.append([(min(int((j + 0.5) * n / m), n - 1), j) for j in range(m)])
    return {"diagonal (no model)": links}


# Closed-class words, lowercased, for the breakdown of errors by kind of word.
FUNCTION_WORDS = {
    "en": set(
        "the a an of to in on at by for with from as and or but not no that this these those which who whom whose "
        "it its is are was were be been being have has had do does did will would shall should can could may might "
        "must he she they we you i me him her them us his their our your my there here than then so if".split()
    ),
    "fr": set(
        "le la les l' un une des de d' du au aux à en dans par pour sur avec sans sous et ou mais ni que qu' qui "
        "dont où ce cet cette ces c' est sont était a ont été être il elle ils elles nous vous je j' on se s' ne n' "
        "pas plus y son sa ses leur leurs notre nos votre vos mon ma mes me m' te t' lui si".split()
    ),
}


def word_kind(word: str, language: str) -> str:
    """punctuation (no letter or digit), function word (FUNCTION_WORDS) or content word."""
    if not any(character.isalnum() for character in word):
        return "punctuation"
    return "function word" if word.lower() in FUNCTION_WORDS[language] else "content word"


def breakdown(links: list[list[tuple[int, int]]], gold: list) -> dict:
    """Where links go wrong, by the kind of the French word: predicted links and the share
    that is possible, sure links and the share found; links on French words that people
    left unaligned; and, for each wrong link on a French word people did align, how far
    its English word lies from the nearest English word people linked to it."""
    kinds: dict[str, dict[str, int]] = {}
    offsets: dict[str, int] = {}
    for predicted, truth, (_, french) in zip(links, gold, hansards_pairs(), strict=True):
        french_words = french.split()
        linked: dict[int, list[int]] = {}
        for source, target in truth.possible:
            linked.setdefault(target, []).append(source)
        for source, target in predicted:
            counts = kinds.setdefault(word_kind(french_words[target], "fr"), dict.fromkeys(KIND_COUNTS, 0))
            counts["links"] += 1
            counts["possible"] += (source, target) in truth.possible
            counts["unaligned"] += target not in linked
            if target in linked and (source, target) not in truth.possible:
                offset = min((source - other for other in linked[target]), key=abs)
                key = f"{offset:+d}" if abs(offset) <= 2 else "beyond ±2"
                offsets[key] = offsets.get(key, 0) + 1
        found = set(predicted)
        for source, target in truth.sure:
            counts = kinds.setdefault(word_kind(french_words[target], "fr"), dict.fromkeys(KIND_COUNTS, 0))
            counts["sure"] += 1
            counts["found"] += (source, target) in found
    return {"kinds": kinds, "offsets": dict(sorted(offsets.items()))}


KIND_COUNTS = ("links", "possible", "unaligned", "sure", "found")


def breakdown_table(name: str, figures: dict) -> str:
    """`breakdown`'s figures as Markdown."""
    lines = [
        f"{name}, by the kind of French word:",
        "",
        "| French word | links | precision | on words people left unaligned | sure links | recall |",
        "|---|---|---|---|---|---|",
    ]
    for kind, c in sorted(figures["kinds"].items()):
        lines.append(
            f"| {kind} | {c['links']:,} | {100 * c['possible'] / max(c['links'], 1):.1f} | "
            f"{c['unaligned']:,} | {c['sure']:,} | {100 * c['found'] / max(c['sure'], 1):.1f} |"
        )
    wrong = sum(figures["offsets"].values())
    shares = ", ".join(f"{key} {100 * n / max(wrong, 1):.0f}%" for key, n in figures["offsets"].items())
    lines += ["", f"Wrong links on aligned French words ({wrong:,}), English word minus nearest gold one: {shares}"]
    return "\n".join(lines)


def read_pharaoh(path: Path, last: int) -> list[list[tuple[int, int]]]:
    """The last `last` lines of a Pharaoh file as (source, target) pairs."""
    lines = path.read_text(encoding="utf-8").splitlines()[-last:]
    return [[tuple(int(i) for i in link.split("-")) for link in line.split()] for line in lines]


def run_eflomal(work: Path, pairs: list[tuple[str, str]], name: str, *, append: bool) -> tuple[Links, Links] | None:
    """eflomal's links, each direction in (English, French) orientation, for `pairs`,
    aligned together with the training text: `pairs` are its last lines, or with `append`
    are added after it; None when eflomal is not installed."""
    try:
        import eflomal
    except ImportError:
        print("eflomal is not installed (pip install -e '.[align]'): no eflomal rows", file=sys.stderr)
        return None
    text = {}
    for side, language in enumerate(LANGUAGES):
        lines = (work / f"train.{language}").read_text(encoding="utf-8").splitlines()
        text[language] = [*lines, *(pair[side] for pair in pairs)] if append else lines
    forward_file, reverse_file = work / f"eflomal.{name}.fwd", work / f"eflomal.{name}.rev"
    if all(aligned_lines(path) == len(text["en"]) for path in (forward_file, reverse_file)):
        print(f"eflomal's links of {len(text['en']):,} pairs reused from {forward_file}", file=sys.stderr)
        return read_pharaoh(forward_file, len(pairs)), read_pharaoh(reverse_file, len(pairs))
    start = time.perf_counter()
    eflomal.Aligner().align(
        text["en"], text["fr"], links_filename_fwd=str(forward_file), links_filename_rev=str(reverse_file)
    )
    print(f"eflomal aligned {len(text['en']):,} pairs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return read_pharaoh(forward_file, len(pairs)), read_pharaoh(reverse_file, len(pairs))


def aligned_lines(path: Path) -> int:
    """How many lines of links an earlier eflomal run left in `path` (0: none). eflomal
    samples, so its links are reused: the guided variants train on the very links
    whose AER the eflomal rows report."""
    if not path.exists():
        return 0
    with path.open(encoding="utf-8") as handle:
        return sum(1 for _ in handle)


def symmetrised(forward: Links, reverse: Links, pairs: list[tuple[str, str]], method: str) -> Links:
    """Two directions' links (both in (English, French) orientation) combined by `method`."""
    from rnnsearch.alignments.symmetrisation import symmetrise

    return [
        symmetrise(f, r, source_length=len(e.split()), target_length=len(fr.split()), method=method)
        for f, r, (e, fr) in zip(forward, reverse, pairs, strict=True)
    ]


def eflomal_links(work: Path) -> dict[str, Links]:
    """eflomal on the same training text, English as source: each direction, and each
    symmetrisation of the two, on the Hansards pairs (the training text's last lines)."""
    from rnnsearch.alignments.symmetrisation import METHODS

    pairs = hansards_pairs()
    links = run_eflomal(work, pairs, "hansards", append=False)
    if links is None:
        return {}
    systems = {"eflomal en→fr": links[0], "eflomal fr→en": links[1]}
    for method in METHODS:
        systems[f"eflomal {method}"] = symmetrised(*links, pairs, method)
    return systems


def multi30k_test_pairs() -> list[tuple[str, str]]:
    """Multi30k test_2016_flickr, English then French, words single-spaced."""
    english, french = test_set(*LANGUAGES)
    return [(" ".join(e.split()), " ".join(f.split())) for e, f in zip(english, french, strict=True)]


def as_gold(reference: Links) -> list:
    """An aligner's links taken as gold, every link sure (and so possible)."""
    from rnnsearch.evaluation.alignment_error import GoldLinks

    return [GoldLinks(sure=frozenset(links), possible=frozenset(links)) for links in reference]


def agreement_with_eflomal(models: dict[str, Path], pairs: list[tuple[str, str]], reference: Links) -> list[Row]:
    """RNNsearch's links on `pairs` scored against eflomal's grow-diag-final-and links
    (`reference`) taken as sure links: each reading, English→French and symmetrised."""
    import rnnsearch
    from rnnsearch.alignments.readings import READINGS
    from rnnsearch.alignments.words import combine

    gold = as_gold(reference)
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    en_fr, fr_en = (rnnsearch.load(models[name], device="cpu") for name in ("en-fr", "fr-en"))
    rows = []
    for reading in READINGS:
        forward = en_fr.align(english, french, reading=reading)
        backward = fr_en.align(french, english, reading=reading)
        rows.append(scored(f"RNNsearch en→fr, {reading} reading", [a.pairs for a in forward], gold))
        both = [combine(f, b, method="grow-diag-final-and").pairs for f, b in zip(forward, backward, strict=True)]
        rows.append(scored(f"RNNsearch grow-diag-final-and, {reading} reading", both, gold))
    return rows


def flickr_links(work: Path) -> Links | None:
    """eflomal's grow-diag-final-and links on Multi30k test_2016_flickr, the models' own
    domain (eflomal aligning those pairs together with the training text); None without eflomal."""
    pairs = multi30k_test_pairs()
    links = run_eflomal(work, pairs, "multi30k-test", append=True)
    return None if links is None else symmetrised(*links, pairs, "grow-diag-final-and")


def in_domain_agreement(models: dict[str, Path], flickr: Links | None, hansards: Links | None) -> dict[str, list[Row]]:
    """Where no human alignments exist, eflomal stands in: on Multi30k test_2016_flickr
    (`flickr`: eflomal's links there), and on the Hansards for comparison (`hansards`)."""
    if flickr is None or hansards is None:
        return {}
    return {
        "Multi30k test_2016_flickr": agreement_with_eflomal(models, multi30k_test_pairs(), flickr),
        "Hansards": agreement_with_eflomal(models, hansards_pairs(), hansards),
    }


def bleu(model_dir: Path, source: str, target: str) -> dict:
    """The model's sacreBLEU and chrF on Multi30k test_2016_flickr, beam 5, as `rnnsearch evaluate` gives them."""
    command = [
        sys.executable, "-m", "rnnsearch", "evaluate", str(model_dir), "--json",
        "--src", str(MULTI30K / f"test_2016_flickr.{source}.gz"),
        "--ref", str(MULTI30K / f"test_2016_flickr.{target}.gz"),
    ]  # fmt: skip
    output = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table, percentages with one decimal."""
    lines = ["| system | AER | precision | recall | links |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row['system']} | {row['aer']:.1f} | {row['precision']:.1f} | {row['recall']:.1f} | {row['links']:,} |"
        )
    return "\n".join(lines)


def test_set(source: str, target: str) -> tuple[list[str], list[str]]:
    """Multi30k test_2016_flickr's lines, `source` side and `target` side, as `rnnsearch evaluate` reads them."""
    sides = []
    for language in (source, target):
        with gzip.open(MULTI30K / f"test_2016_flickr.{language}.gz", "rt", encoding="utf-8") as handle:
            sides.append(handle.read().splitlines())
    return sides[0], sides[1]


def translation_figures(model_dir: Path, *, coverage_penalty: float) -> Row:
    """English→French test_2016_flickr translated with beam 5 (and `coverage_penalty`):
    sacreBLEU, and repeated words (`rnnsearch.evaluation.repetition`)."""
    import rnnsearch
    from rnnsearch.evaluation import metrics
    from rnnsearch.evaluation.repetition import repetitions

    sources, references = test_set("en", "fr")
    translator = rnnsearch.load(model_dir, device="cpu", coverage_penalty=coverage_penalty)
    hypotheses = [t.text for t in translator.translate(sources, beam_size=5)]
    repeated = repetitions(hypotheses, references)
    return {
        "bleu": metrics.bleu(hypotheses, references).value,
        "repeated_per_100_words": repeated.per_100_words,
        "repeated_words": repeated.repeated,
        "words": repeated.words,
    }


def train_speed(model_dir: Path) -> float:
    """Target tokens per second, the mean over the training run's logged steps."""
    from rnnsearch.files import model_directory
    from rnnsearch.files.metrics_log import read_metrics

    speeds = [row["tokens_per_second"] for row in read_metrics(model_dir / model_directory.METRICS)
              if "tokens_per_second" in row]  # fmt: skip
    return sum(speeds) / len(speeds)


def variant_rows(
    models: dict[str, dict[str, Path]], gold: list, *, flickr: Links | None, penalties: tuple[float, ...]
) -> list[Row]:
    """For each variant: AER of its English→French model, of its French→English one and
    of the two combined by grow-diag-final-and (default reading); in the models' own
    domain, the English→French AER on test_2016_flickr against eflomal's links there
    (`flickr`); BLEU and repeated words of English→French on test_2016_flickr; training
    speed. The variants that
    guidance leaves out also decode with each coverage penalty in `penalties`, which
    leaves their teacher-forced alignments, and so their AER, as they are."""
    import rnnsearch
    from rnnsearch.alignments.words import combine

    pairs = hansards_pairs()
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    rows = []
    for name, directions in models.items():
        row: Row = {"variant": name, "train_tokens_per_second": train_speed(directions["en-fr"])}
        en_fr = rnnsearch.load(directions["en-fr"], device="cpu")
        forward = en_fr.align(english, french)
        row["aer_en_fr"] = scored(name, [a.pairs for a in forward], gold)["aer"]
        if "fr-en" in directions:
            backward = rnnsearch.load(directions["fr-en"], device="cpu").align(french, english)
            row["aer_fr_en"] = scored(name, [[(e, f) for f, e in a.pairs] for a in backward], gold)["aer"]
            both = [combine(f, b, method="grow-diag-final-and").pairs for f, b in zip(forward, backward, strict=True)]
            row["aer_grow_diag_final_and"] = scored(name, both, gold)["aer"]
        if flickr is not None:
            row["aer_flickr_against_eflomal"] = flickr_agreement(en_fr, flickr)
        rows.append({**row, **translation_figures(directions["en-fr"], coverage_penalty=0.0)})
        if not VARIANTS[name].guide:
            for beta in penalties:
                figures = translation_figures(directions["en-fr"], coverage_penalty=beta)
                rows.append({"variant": f"{name}, coverage penalty β = {beta:g} at decoding", **figures})
    return rows


def flickr_agreement(en_fr, flickr: Links) -> float:
    """The English→French model's AER (default reading) on test_2016_flickr against eflomal's links there."""
    pairs = multi30k_test_pairs()
    links = [a.pairs for a in en_fr.align([p[0] for p in pairs], [p[1] for p in pairs])]
    return scored("", links, as_gold(flickr))["aer"]


def variant_table(rows: list[Row], eflomal: dict[str, Links], gold: list) -> str:
    """The variants' rows as Markdown, eflomal's last; a figure a row lacks is a dash."""

    def cell(row: Row, key: str, form: str) -> str:
        return format(row[key], form) if key in row else "–"

    lines = [
        "| variant | AER en→fr | AER fr→en | AER grow-diag-final-and | AER en→fr on test_2016_flickr against eflomal "
        "| BLEU en→fr | repeated words per 100 | train tokens/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['variant']} | {cell(row, 'aer_en_fr', '.1f')} | {cell(row, 'aer_fr_en', '.1f')} | "
            f"{cell(row, 'aer_grow_diag_final_and', '.1f')} | {cell(row, 'aer_flickr_against_eflomal', '.1f')} | "
            f"{row['bleu']:.2f} | "
            f"{row['repeated_per_100_words']:.2f} ({row['repeated_words']:,} of {row['words']:,}) | "
            f"{cell(row, 'train_tokens_per_second', ',.0f')} |"
        )
    if eflomal:
        aer = {
            key: scored(key, eflomal[f"eflomal {key}"], gold)["aer"]
            for key in ("en→fr", "fr→en", "grow-diag-final-and")
        }
        lines.append(
            f"| eflomal | {aer['en→fr']:.1f} | {aer['fr→en']:.1f} | {aer['grow-diag-final-and']:.1f} | – | – | – | – |"
        )
    return "\n".join(lines)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """--work, --steps and --threads: where the models are kept and how they train
    (bench/markup.py takes them too, to use the same models)."""
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "bench-alignment")
    parser.add_argument("--steps", type=int, default=1200, help="training steps of each model")
    parser.add_argument("--threads", type=int, default=max(len(os.sched_getaffinity(0)) // 2, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_options(parser)
    parser.add_argument(
        "--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
        help="which variants to train and compare (the baseline always; default all)",
    )  # fmt: skip
    parser.add_argument(
        "--coverage-penalties", type=float, nargs="*", default=[0.2, 0.5, 1.0],
        help="coverage penalties β to decode the unguided variants with (default 0.2 0.5 1)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, help="train.seed of every model (default: the config's, 1)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    write_corpus(args.work)
    from rnnsearch.alignments.readings import DEFAULT_READING
    from rnnsearch.evaluation.alignment_error import read_gold

    gold = read_gold(HANSARDS / "enfr.gold", one_based=True)
    eflomal = eflomal_links(args.work)
    chosen = [VARIANTS["baseline"], *(VARIANTS[name] for name in args.variants if name != "baseline")]
    if args.seed is not None:
        chosen = [replace(variant, settings={**variant.settings, "train.seed": args.seed}) for variant in chosen]
    if any(variant.guide for variant in chosen):
        if not eflomal:
            raise SystemExit("the guided variants train on eflomal's links: pip install -e '.[align]'")
        write_guides(args.work, args.work / "eflomal.hansards.fwd", args.work / "eflomal.hansards.rev")
    trained = train_models(args.work, steps=args.steps, threads=args.threads, variants=chosen)
    models = trained["baseline"]
    systems = {**diagonal_links(), **rnnsearch_links(models), **eflomal}
    rows = [scored(name, links, gold) for name, links in systems.items()]
    print(table(rows))
    details = {}
    for name in (f"RNNsearch en→fr, {DEFAULT_READING} reading", "eflomal en→fr"):
        if name in systems:
            details[name] = breakdown(systems[name], gold)
            print(f"\n{breakdown_table(name, details[name])}")
    print(f"\n{unseen_words()}")
    flickr = flickr_links(args.work)
    agreement = in_domain_agreement(models, flickr, systems.get("eflomal grow-diag-final-and"))
    for name, agreeing in agreement.items():
        print(f"\nOn {name}, against eflomal's grow-diag-final-and links:\n")
        print(table(agreeing))
    scores = {name: bleu(path, *name.split("-")) for name, path in models.items()}
    for name, score in scores.items():
        print(f"{name}: test_2016_flickr {json.dumps(score)}")
    variants = variant_rows(trained, gold, flickr=flickr, penalties=tuple(args.coverage_penalties))
    print(f"\nThe variants, each trained {args.steps} steps:\n\n{variant_table(variants, eflomal, gold)}")
    if args.json:
        figures = {
            "rows": rows, "breakdown": details, "in_domain_agreement": agreement, "bleu": scores, "variants": variants,
        }  # fmt: skip
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
