"""How well the alignment module aligns text whose links it never saw: AER against human
English–French alignments, and agreement with eflomal in the models' own domain, for
each objective of the module, with self-training rounds and the soft combination.

    python bench/aligner.py [--work runs/bench-alignment] [--steps 1200] [--threads 1]
                            [--objectives prediction links both] [--scored-links withheld seen]
                            [--agreement WEIGHT ...] [--self-train-rounds N] [--null] [--json out.json]
    python bench/aligner.py --speed MODEL_DIR [--work runs/bench-alignment] [--threads 2]
                            [--device cuda] [--prepared PREPARED_DIR] [--rounds 2]

1. The two baseline models of `bench/alignment.py` (English→French and French→English,
   trained on Multi30k's training text plus the 447 Hansards pairs, in `--work`; run that
   script first) are copied, weights and all, into `--work`/aligner-OBJECTIVE[-withheld]/,
   once per objective of `--objectives` and set-up of `--scored-links`.
2. Each copy gets an alignment module from `rnnsearch train-aligner`, trained `--steps`
   steps (default: as many as the translation models trained) on the models' own training
   text, the translation frozen; `links` and `both` learn from eflomal's grow-diag-final-and
   links of that text (`guide.en-fr` and `guide.fr-en` in `--work`, as the guided variants
   of bench/alignment.py use). Both directions train at once, `--threads` threads each.
   `--scored-links withheld` (the headline, and the case of every new text a user aligns
   or translates) withholds the links of the 447 scored Hansards pairs from that training,
   their text kept (`guide.withheld.*`: those lines empty); `seen` trains on them too, as
   earlier figures did, where the module can at best learn eflomal's answer.
3. With `--agreement W ...`, both directions' modules also train together, withheld,
   agreeing with weight W (`train-aligner en-fr --reverse fr-en`, in
   aligner-OBJECTIVE-withheld-agreement-W/, one process of 2 × `--threads` threads).
   With `--self-train-rounds N`, the withheld modules of each objective, and the agreeing
   ones of each weight, are copied to `--work`/self-trained-OBJECTIVE[-agreement-W]/ and
   given N rounds of `rnnsearch self-train` (each round `--steps` steps per direction,
   the agreeing modules' rounds agreeing too), scored after each round. `--null` trains
   every module with the NULL option (`model.aligner_null`; folders ending in -null).
4. The Hansards pairs aligned by each module (`Translator.align(alignment_from="aligner")`),
   each direction and every combination of the two (the heuristics and `soft`), scored
   against `data/alignment/enfr.gold`; beside them the attention of the same models and
   eflomal, from the files bench/alignment.py left in `--work`. For `soft`, its threshold
   swept: AER on test_2016_flickr against eflomal's links (where it is chosen) and on the
   Hansards against the human links (where it is reported).
5. On Multi30k test_2016_flickr, the English→French module's links against eflomal's
   grow-diag-final-and links (bench/alignment.py's in-domain reference).
6. The module's training speed (target tokens/s, from its log) against the translation
   model's, and the time `align` takes for 1,000 test_2016_flickr pairs with the module
   and with α. Those logs are of runs that share the CPU: `--speed MODEL_DIR` times a
   model with a module alone, alternating α and the module, and a `train-aligner` step
   (its frozen passes computed at the step, and kept) against a translation step on the
   same batches (`--device cuda`: the steps alone, on a GPU, eager and as CUDA graphs);
   and the part of `align` the contiguity
   prior adds: the module's rows of the same pairs read into word alignments without it
   and with it, alternating.

Modules and rounds already trained in `--work` are reused. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import alignment as bench  # noqa: E402  (bench/alignment.py: the corpus, eflomal and the tables)

OBJECTIVES = ("prediction", "links", "both")
DIRECTIONS = ("en-fr", "fr-en")
SCORED_LINKS = ("withheld", "seen")
SOFT_THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)


def copy_model(source: Path, target: Path) -> None:
    """The trained model directory `source` as `target`, without its prepared data (a
    module run whose data is the model's links to it)."""
    if target.exists():
        return
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("prepared", "checkpoints", "alignments"))
    (target / "prepared").symlink_to((source / "prepared").resolve())


def withheld_guides(work: Path) -> dict[str, Path]:
    """eflomal's links of the training text with the scored Hansards pairs' lines emptied
    (their text stays in the corpus): `guide.withheld.en-fr` and `guide.withheld.fr-en`."""
    scored = len(bench.hansards_pairs())
    paths = {}
    for direction in DIRECTIONS:
        path = work / f"guide.withheld.{direction}"
        if not path.exists():
            lines = (work / f"guide.{direction}").read_text(encoding="utf-8").splitlines()
            path.write_text("\n".join([*lines[:-scored], *[""] * scored]) + "\n", encoding="utf-8")
        paths[direction] = path
    return paths


def guides(work: Path, scored_links: str) -> dict[str, Path]:
    """The links each direction's module learns from: eflomal's, the scored pairs' included or
    withheld (written here where bench/alignment.py ran without its guided variants)."""
    bench.write_guides(work, work / "eflomal.hansards.fwd", work / "eflomal.hansards.rev")
    if scored_links == "withheld":
        return withheld_guides(work)
    return {direction: work / f"guide.{direction}" for direction in DIRECTIONS}


def module_folder(work: Path, objective: str, scored_links: str, agreement: float = 0.0, null: bool = False) -> Path:
    name = f"aligner-{objective}" if scored_links == "seen" else f"aligner-{objective}-withheld"
    name = f"{name}-agreement-{agreement:g}" if agreement else name
    return work / (f"{name}-null" if null else name)


def train_modules(
    work: Path,
    objective: str,
    *,
    scored_links: str,
    steps: int,
    threads: int,
    agreement: float = 0.0,
    null: bool = False,
) -> dict[str, Path]:
    """Both directions' modules of `objective`, trained at once (reused when done); with
    `agreement`, in one run (`train-aligner --reverse`) whose agreement term weighs that;
    with `null`, modules with the NULL option."""
    models, running = {}, []
    links = guides(work, scored_links)
    folder = module_folder(work, objective, scored_links, agreement, null)
    for direction in DIRECTIONS:
        model_dir = folder / direction
        copy_model(work / direction, model_dir)
        models[direction] = model_dir
        if (model_dir / "aligner" / "trained").exists() or (agreement and direction == "fr-en"):
            continue
        settings = [
            f"train.aligner_objective={objective}",
            f"train.max_steps={steps}",
            f"train.threads={threads}",
            f"train.valid_every={max(steps // 4, 1)}",
            "train.log_every=50",
            f"model.aligner_null={str(null).lower()}",
        ]
        if objective != "prediction":
            settings.append(f"data.train.alignments={links[direction].resolve()}")
        resume = ["--resume"] if (model_dir / "aligner" / "last.safetensors").exists() else []
        command = [sys.executable, "-m", "rnnsearch", "train-aligner", str(model_dir), *resume]
        if agreement:
            command += ["--reverse", str(folder / "fr-en")]
            settings += [f"train.aligner_agreement_weight={agreement}", f"train.threads={2 * threads}"]
        command += [item for setting in settings for item in ("--set", setting)]
        log = open(model_dir.parent / f"{direction}.log", "a", encoding="utf-8")
        running.append((model_dir, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)))
    for model_dir, process in running:
        if process.wait() != 0:
            raise SystemExit(f"train-aligner failed for {model_dir}: see {model_dir.parent}")
        (model_dir / "aligner" / "trained").touch()
        if agreement:
            (folder / "fr-en" / "aligner" / "trained").touch()
    return models


def self_train(
    work: Path, source: Path, round_number: int, *, objective: str, agreement: float, steps: int, threads: int
) -> dict[str, Path]:
    """The withheld modules of `source` (a `module_folder`) after `round_number` rounds of
    `rnnsearch self-train` (in `--work`/self-trained-…/, named after `source`, reused and
    resumed); the rounds keep the modules' NULL option, and agree with weight `agreement`
    (0: each direction in a run of its own)."""
    folder = work / ("self-trained-" + source.name.removeprefix("aligner-").replace("-withheld", ""))
    models = {direction: folder / direction for direction in DIRECTIONS}
    for direction, model_dir in models.items():
        if not model_dir.exists():
            shutil.copytree(source / direction, model_dir, symlinks=True)
    marker = folder / f"round-{round_number}.done"
    if marker.exists():
        return models
    settings = [
        f"train.aligner_objective={objective if objective != 'prediction' else 'both'}",
        f"train.aligner_agreement_weight={agreement}",
        f"train.max_steps={steps}",
        f"train.threads={threads}",
        f"train.valid_every={max(steps // 4, 1)}",
        "train.log_every=50",
    ]
    resume = ["--resume"] if (models["en-fr"] / "self-training").exists() else []
    command = [sys.executable, "-m", "rnnsearch", "self-train", str(models["en-fr"]), "--reverse"]
    command += [str(models["fr-en"]), "--rounds", str(round_number), *resume]
    command += [item for setting in settings for item in ("--set", setting)]
    with open(folder / "self-train.log", "a", encoding="utf-8") as log:
        if subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT).returncode != 0:
            raise SystemExit(f"self-train failed: see {folder / 'self-train.log'}")
    marker.touch()
    return models


def module_links(models: dict[str, Path], alignment_from: str) -> dict[str, bench.Links]:
    """Each direction's links on the Hansards pairs, and every combination of the two."""
    import rnnsearch

    pairs = bench.hansards_pairs()
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    en_fr, fr_en = (rnnsearch.load(models[name], device="cpu") for name in DIRECTIONS)
    forward = en_fr.align(english, french, alignment_from=alignment_from)
    backward = fr_en.align(french, english, alignment_from=alignment_from)
    return combined(forward, backward, label=alignment_from)


def combined(forward: list, backward: list, *, label: str) -> dict[str, bench.Links]:
    """The links of each direction's word alignments of the Hansards pairs (`forward`
    English→French, `backward` French→English) and of every combination of the two,
    as (English word, French word) pairs, each named after `label`."""
    from rnnsearch.alignments.symmetrisation import COMBINATIONS
    from rnnsearch.alignments.words import combine

    systems = {
        f"{label} en→fr": [a.pairs for a in forward],
        f"{label} fr→en": [[(e, f) for f, e in a.pairs] for a in backward],
    }
    for method in COMBINATIONS:
        links = [combine(f, b, method=method).pairs for f, b in zip(forward, backward, strict=True)]
        systems[f"{label} {method}"] = links
    return systems


def soft_sweep(models: dict[str, Path], flickr: bench.Links | None) -> list[dict]:
    """AER of the soft combination at each threshold of SOFT_THRESHOLDS: on test_2016_flickr
    against eflomal's links, and on the Hansards against the human links."""
    import numpy as np

    import rnnsearch
    from rnnsearch.evaluation.alignment_error import alignment_error_rate, read_gold

    en_fr, fr_en = (rnnsearch.load(models[name], device="cpu") for name in DIRECTIONS)
    sets = {"hansards": (bench.hansards_pairs(), read_gold(bench.HANSARDS / "enfr.gold", one_based=True))}
    if flickr is not None:
        sets["flickr"] = (bench.multi30k_test_pairs(), bench.as_gold(flickr))
    means = {}
    for name, (pairs, _) in sets.items():
        english, french = [p[0] for p in pairs], [p[1] for p in pairs]
        forward = en_fr.align(english, french, alignment_from="aligner")
        backward = fr_en.align(french, english, alignment_from="aligner")
        means[name] = [(f.weights + b.weights.T) / 2 for f, b in zip(forward, backward, strict=True)]
    rows = []
    for threshold in SOFT_THRESHOLDS:
        row: dict = {"threshold": threshold}
        for name, (_, gold) in sets.items():
            links = [
                sorted((int(s), int(t)) for t, s in zip(*np.nonzero(mean >= threshold), strict=True))
                for mean in means[name]
            ]
            row[name] = round(alignment_error_rate(links, gold).aer, 1)
        rows.append(row)
    return rows


def flickr_agreement(model: Path, flickr: bench.Links | None) -> dict[str, float]:
    """AER of the en→fr module's and attention's links against eflomal's on test_2016_flickr."""
    import rnnsearch
    from rnnsearch.evaluation.alignment_error import alignment_error_rate

    if flickr is None:
        return {}
    pairs = bench.multi30k_test_pairs()
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    translator = rnnsearch.load(model, device="cpu")
    return {
        source: alignment_error_rate(
            [a.pairs for a in translator.align(english, french, alignment_from=source)], bench.as_gold(flickr)
        ).aer
        for source in ("attention", "aligner")
    }


def training_speed(model_dir: Path) -> dict[str, float]:
    """The module's and the translation model's training speed, target tokens/s, the mean
    over their logged steps."""
    speeds = {}
    for name, log in (
        ("module", model_dir / "aligner" / "metrics.jsonl"),
        ("translation", model_dir / "metrics.jsonl"),
    ):
        rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        speed = [row["tokens_per_second"] for row in rows if "tokens_per_second" in row]
        speeds[f"{name} tokens/s"] = sum(speed) / len(speed)
    return speeds


def align_seconds(model: Path, *, count: int = 1000, rounds: int = 3) -> dict[str, list[float]]:
    """Seconds to align the first `count` test_2016_flickr pairs by α and by the module,
    the two alternating, `rounds` times each."""
    import rnnsearch

    pairs = bench.multi30k_test_pairs()[:count]
    english, french = [p[0] for p in pairs], [p[1] for p in pairs]
    translator = rnnsearch.load(model, device="cpu")
    translator.align(english[:50], french[:50])  # warm-up
    times: dict[str, list[float]] = {"attention": [], "aligner": []}
    for _ in range(rounds):
        for source, seconds in times.items():
            start = time.perf_counter()
            translator.align(english, french, alignment_from=source)
            seconds.append(time.perf_counter() - start)
    return times | prior_seconds(translator, english, french, rounds=rounds)


def prior_seconds(translator, english: list[str], french: list[str], *, rounds: int) -> dict[str, list[float]]:
    """Seconds to read the module's rows of the pairs into word alignments without a prior
    and with CONTIGUITY (the part of `align` the prior adds to), alternating."""
    from rnnsearch.alignments.distortion import CONTIGUITY
    from rnnsearch.alignments.words import read_translations

    chunks = translator.align_chunks([(english, french)], alignment_from="aligner")
    pairs = [aligned.pair for chunk in chunks for aligned in chunk]
    times: dict[str, list[float]] = {"aligner's rows read as they are": [], "read with the contiguity prior": []}
    for _ in range(rounds):
        for seconds, prior in zip(times.values(), (None, CONTIGUITY), strict=True):
            start = time.perf_counter()
            read_translations(pairs, reading="output", prior=prior)  # as `align` reads a call's pairs
            seconds.append(time.perf_counter() - start)
    return times


def step_speed(model: Path, prepared: Path, *, device: str = "cpu", rounds: int = 2) -> dict[str, list[float]]:
    """Target tokens/s of a translation training step and of a `train-aligner` step (the
    translation frozen) on the same batches of the model's training data, alternating: the
    latter with the frozen passes computed at each step (as in a run's first epoch, or
    with train.frozen_passes_gib 0), and kept (as from the second epoch on). On a GPU, 150
    steps, each step eager and replayed as CUDA graphs (as the trainers run it), every
    shape captured in an untimed pass first; on the CPU, 17 steps after 3 of warm-up."""
    import torch

    from rnnsearch import kernels
    from rnnsearch.config.train import TrainConfig
    from rnnsearch.files import model_directory
    from rnnsearch.model.seq2seq import build_aligner
    from rnnsearch.prepared import PreparedPairs
    from rnnsearch.text.batches import epoch_batches, make_batch
    from rnnsearch.training.frozen_passes import GIB, FrozenPasses
    from rnnsearch.training.graphed_loss import GraphedLoss
    from rnnsearch.training.loop import StepContext, training_step
    from rnnsearch.training.loss import Objective

    on = torch.device(device)
    steps, warmup = (150, 20) if on.type == "cuda" else (17, 3)
    config, src_subwords, tgt_subwords = model_directory.load_model_files(model)
    data = PreparedPairs(prepared)
    options = TrainConfig(batch_tokens=config.train.batch_tokens, seed=config.train.seed)
    order = epoch_batches(data, options.batch_tokens, None, options.seed, 0)
    chosen = [order[k] for k in range(steps + warmup)]
    batches = [make_batch([data[i] for i in indices]).to(on) for indices in chosen]

    def prepared_step(name: str, graphs: bool) -> StepContext:
        translation = model_directory.load_model(model, config, src_subwords, tgt_subwords, aligner=False).to(on)
        if name == "translation":
            translation.train()
            objective = Objective(0.1)
            optimizer = torch.optim.Adam(translation.parameters(), lr=1e-4)
            graphed = GraphedLoss(translation, objective, config.data.max_length + 1) if graphs else None
            return StepContext(translation, optimizer, objective, 1.0, graphed=graphed)
        translation.aligner = build_aligner(translation, size=config.model.aligner_size).to(on)
        translation.requires_grad_(False)
        translation.aligner.requires_grad_(True)
        translation.eval()
        optimizer = torch.optim.Adam(translation.aligner.parameters(), lr=1e-4)
        objective = Objective(aligner="prediction", translation=False)
        graphed = GraphedLoss(translation, objective, config.data.max_length + 1) if graphs else None
        if name == "train-aligner, passes computed":
            return StepContext(translation, optimizer, objective, 1.0, graphed=graphed)
        kept = FrozenPasses(translation, data, options, budget=4 * GIB)
        for indices, batch in zip(chosen, batches, strict=True):
            kept.forced(indices, batch)  # kept, as by the first epoch
        return StepContext(translation, optimizer, objective, 1.0, graphed=graphed, frozen=(kept,))

    def timed(context: StepContext) -> float:
        warm = len(batches) if context.graphed else warmup  # graphs: every shape captured before timing
        for indices, batch in zip(chosen[:warm], batches[:warm], strict=True):
            training_step(context, batch, indices=indices)
        if on.type == "cuda":
            torch.cuda.synchronize()
        start, tokens = time.perf_counter(), 0
        for indices, batch in zip(chosen[warmup:], batches[warmup:], strict=True):
            tokens += training_step(context, batch, indices=indices)[1]
        if on.type == "cuda":
            torch.cuda.synchronize()
        return tokens / (time.perf_counter() - start)

    names = ("translation", "train-aligner, passes computed", "train-aligner, passes kept")
    variants = [(name, graphs) for name in names for graphs in ((False, True) if on.type == "cuda" else (False,))]
    speeds: dict[str, list[float]] = {f"{name}{', CUDA graphs' if graphs else ''}": [] for name, graphs in variants}
    with kernels.use(kernels.choose(on, purpose="train")):
        for _ in range(rounds):
            for (name, graphs), key in zip(variants, speeds, strict=True):
                speeds[key].append(timed(prepared_step(name, graphs)))
    return speeds


def scored_modules(models: dict[str, Path], gold: list, flickr: bench.Links | None) -> dict:
    """Every figure of one pair of modules: the Hansards rows, in-domain agreement, the soft sweep."""
    rows = [bench.scored(name, links, gold) for name, links in module_links(models, "aligner").items()]
    return {"hansards": rows, "flickr": flickr_agreement(models["en-fr"], flickr), "soft": soft_sweep(models, flickr)}


def report(title: str, figures: dict) -> None:
    print(f"\n## {title}\n\n{bench.table(figures['hansards'])}")
    print(json.dumps({k: v for k, v in figures.items() if k not in ("hansards", "soft")}))
    print("\n| soft threshold | flickr against eflomal | Hansards against people |\n|---|---|---|")
    for row in figures["soft"]:
        print(f"| {row['threshold']} | {row.get('flickr', '')} | {row['hansards']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "bench-alignment")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES))
    parser.add_argument(
        "--scored-links", nargs="+", choices=SCORED_LINKS, default=["withheld"],
        help="whether the modules train on eflomal's links of the scored pairs (seen) or not (withheld, the default)",
    )  # fmt: skip
    parser.add_argument("--self-train-rounds", type=int, default=0, help="self-training rounds of the withheld modules")
    parser.add_argument(
        "--agreement", type=float, nargs="*", default=[],
        help="agreement weights: each trains both directions' modules together (train-aligner --reverse), withheld",
    )  # fmt: skip
    parser.add_argument("--null", action="store_true", help="train modules with the NULL option (model.aligner_null)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--speed",
        type=Path,
        metavar="MODEL_DIR",
        help="only time a model with a module: aligning 1,000 pairs by α and by the module, and a train-aligner "
        "step against a translation step (on WORK/en-fr's prepared data), at --threads threads",
    )
    parser.add_argument("--device", default="cpu", help="with --speed: where the steps run (cuda: steps alone)")
    parser.add_argument("--prepared", type=Path, help="with --speed: the prepared data (default WORK/en-fr/prepared)")
    parser.add_argument("--rounds", type=int, default=2, help="with --speed: rounds of the alternating step timings")
    args = parser.parse_args()
    if args.speed:
        from rnnsearch.training.environment import configure_cpu

        configure_cpu(args.threads)
        prepared = args.prepared or args.work / "en-fr" / "prepared"
        if args.device == "cpu":
            print(json.dumps({"align seconds": align_seconds(args.speed)}))
        print(json.dumps({"target tokens/s": step_speed(args.speed, prepared, device=args.device, rounds=args.rounds)}))
        return
    from rnnsearch.evaluation.alignment_error import read_gold

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    gold = read_gold(bench.HANSARDS / "enfr.gold", one_based=True)
    baseline = {direction: args.work / direction for direction in DIRECTIONS}
    rows = [bench.scored(name, links, gold) for name, links in module_links(baseline, "attention").items()]
    eflomal = bench.eflomal_links(args.work)
    rows += [bench.scored(name, links, gold) for name, links in eflomal.items()]
    figures: dict = {"baseline": rows}
    flickr = bench.flickr_links(args.work)
    null = ", NULL option" if args.null else ""
    for objective in args.objectives:
        for scored_links in args.scored_links:
            models = train_modules(
                args.work, objective, scored_links=scored_links, steps=args.steps, threads=args.threads, null=args.null
            )
            name = f"{objective}, scored pairs' links {scored_links}{null}"
            figures[name] = scored_modules(models, gold, flickr)
            figures[name] |= {
                "align_seconds": align_seconds(models["en-fr"]),
                "training_speed": training_speed(models["en-fr"]),
            }
            report(f"objective {objective}, {args.steps} steps, the scored pairs' links {scored_links}", figures[name])
        for weight in args.agreement:
            models = train_modules(
                args.work,
                objective,
                scored_links="withheld",
                steps=args.steps,
                threads=args.threads,
                agreement=weight,
                null=args.null,
            )
            name = f"{objective}, withheld, both directions together, agreement weight {weight:g}{null}"
            figures[name] = scored_modules(models, gold, flickr)
            report(name, figures[name])
        for weight in [0.0, *args.agreement]:
            source = module_folder(args.work, objective, "withheld", weight, args.null)
            for round_number in range(1, args.self_train_rounds + 1):
                models = self_train(
                    args.work,
                    source,
                    round_number,
                    objective=objective,
                    agreement=weight,
                    steps=args.steps,
                    threads=2 * args.threads,
                )
                name = f"{source.name}, self-training round {round_number}"
                figures[name] = scored_modules(models, gold, flickr)
                report(name, figures[name])
    print(f"\n## the attention of the same models, and eflomal\n\n{bench.table(rows)}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
