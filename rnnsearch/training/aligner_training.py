"""`rnnsearch train-aligner`: the alignment module added to a trained model and trained
alone, every translation weight frozen, on the model's own training data.

The run lives in the model directory's `aligner/` (model_directory.ALIGNER_DIR):

    config.yaml          the model's config with the run's overrides and model.aligner: true
    weights.safetensors  the module's weights, with its size and the digest of the
                         translation weights it was trained on: what loading attaches
    jumps.json           the jump table counted from the module's links once the run has
                         ended (rnnsearch/jobs/module_run.py, the whole run that every caller runs),
                         read with its rows; removed when the weights it was counted from are replaced
    last.safetensors     the module's weights, Adam's state, the run's progress and its settings
                         (ALIGNER_RUN_KEYS): the resume point, written before the module's weights
    metrics.jsonl        training rows (the module's loss, learning rate, speed), as `train` writes them
    tensorboard/         with train.tensorboard, the same rows as curves
    prepared/            the training data, when the run's data section is not the model's
                         (word links added for the links objective, say)

The translation weights are never written, so the model translates exactly as before;
each file is written atomically, and a run killed at any moment resumes from its last
checkpoint (`--resume`), drawing the same batches.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from rnnsearch import kernels
from rnnsearch.alignments.words import transposed_pharaoh
from rnnsearch.config import Config, load_config
from rnnsearch.config.data import check_reverse
from rnnsearch.config.train import ALIGNER_RUN_KEYS, TrainConfig
from rnnsearch.devices import resolve_device
from rnnsearch.errors import UserError
from rnnsearch.files import atomic, model_directory
from rnnsearch.files.metrics_log import forget_rows_after
from rnnsearch.model.objectives import OBJECTIVES
from rnnsearch.model.seq2seq import build_aligner
from rnnsearch.prepared import PreparedPairs, ensure_prepared, prepared_dir
from rnnsearch.text.corpus import stream_lines
from rnnsearch.text.subwords import text_source
from rnnsearch.training import checkpoint
from rnnsearch.training.console import say
from rnnsearch.training.environment import configure_cpu, flushing_denormals
from rnnsearch.training.frozen_passes import GIB, FrozenPasses, TeacherForced
from rnnsearch.training.graphed_loss import GraphedLoss
from rnnsearch.training.loop import StepContext, TrainingLoop
from rnnsearch.training.loss import Objective
from rnnsearch.training.module_resume import (
    Attached,
    ResumePoint,
    assignments,
    attached_module,
    recorded_settings,
    save_modules,
)
from rnnsearch.training.schedule import Progress


def run_config(model_dir: Path, overrides: list[str]) -> Config:
    """The model's config with `overrides` (each of a key in ALIGNER_RUN_KEYS) and model.aligner:
    true; a run needs a budget, max_steps or max_minutes."""
    for assignment in overrides:
        key = assignment.partition("=")[0]
        if not any(key == allowed or key.startswith(allowed + ".") for allowed in ALIGNER_RUN_KEYS):
            raise UserError(
                f"train-aligner: --set {key}: not a key a train-aligner run takes; it takes "
                f"{', '.join(ALIGNER_RUN_KEYS)} (the translation model of {model_dir} is frozen)"
            )
    config = load_config(model_dir / model_directory.CONFIG, [*overrides, "model.aligner=true"])
    if config.train.max_steps is None and config.train.max_minutes is None:
        raise UserError(
            f"train-aligner: {model_dir}'s config sets no budget (train.max_steps or train.max_minutes); "
            "give one with --set train.max_steps=N"
        )
    return config


MODULE_RUN_KEYS = tuple(key for key in ALIGNER_RUN_KEYS if not key.startswith("data."))
"""The keys of how a run trained its module, beside the corpora it trained on."""


def train_aligner(
    model_dir: str | Path,
    overrides: list[str],
    *,
    resume: bool,
    run_dir: Path | None = None,
    reverse_dir: Path | None = None,
    reverse_run_dir: Path | None = None,
) -> Progress:
    """Train the alignment module of the model in `model_dir` (see the module docstring);
    the run lives in `run_dir` (None: the model directory's aligner/, the module loading
    attaches; self-training runs its rounds elsewhere and installs the module they end with).
    With `reverse_dir`, a model of the other direction whose vocabularies are the model's
    swapped, its module trains too, on the same pairs read the other way round, the two
    meeting in the agreement term (train.aligner_agreement_weight); it is written to
    `reverse_run_dir` (None: the reverse model's aligner/), and the run's resume point
    holds both.

    A resumed run is the run it resumes: its settings are those its resume point records
    (`ResumePoint`), `overrides` on top, and an override that would change what the run
    is refused. Everything is checked before the first file is written, so a refused
    call leaves the run as it was."""
    model_dir = Path(model_dir)
    run_dir = run_dir or model_dir / model_directory.ALIGNER_DIR
    config, point, changed = _checked_run(model_dir, run_dir, overrides, resume=resume, reverse_dir=reverse_dir)
    device = resolve_device(config.train.device, "train.device")
    configure_cpu(config.train.threads)
    torch.manual_seed(config.train.seed)  # the new modules' weights are drawn from it
    attached = [_attach(model_dir, run_dir, config, device)]
    if reverse_dir is not None:
        reverse_run_dir = reverse_run_dir or Path(reverse_dir) / model_directory.ALIGNER_DIR
        _check_reverse(model_dir, Path(reverse_dir), reverse_run_dir, fresh=point is None)
        attached.append(_attach(Path(reverse_dir), reverse_run_dir, config, device))
    modules = [attached_module(each.model) for each in attached]
    optimizer = torch.optim.Adam([p for m in modules for p in m.parameters()], lr=config.train.learning_rate)
    progress = point.restore(attached, optimizer, max_steps=config.train.max_steps) if point else Progress()
    _begin(run_dir, attached, config, progress, resumed=point is not None, asked_to_resume=resume, changed=changed)
    train = _training_pairs(model_dir, run_dir, config)
    if reverse_dir is not None:
        _write_reverse_config(Path(reverse_dir), attached[1].run_dir, config)
    context, chosen = _step_context(config, attached, optimizer, train, device, reverse_dir=reverse_dir)
    loop = ModuleLoop(config, run_dir, context=context, pairs=train, progress=progress, attached=attached)
    with flushing_denormals(), kernels.use(chosen):
        loop.run()
    if progress.step == 0:
        raise UserError(
            f"train-aligner: the run's budget ({_budget(config.train)}) ended before its first step, so no module "
            "was written; give it more"
        )
    return progress


def _checked_run(
    model_dir: Path, run_dir: Path, overrides: list[str], *, resume: bool, reverse_dir: Path | None
) -> tuple[Config, ResumePoint | None, list[str]]:
    """The run's config, its resume point (None for a run that starts) and what `overrides`
    change of the run it resumes (`ResumePoint.changes`), all checked, nothing written."""
    model_config = model_directory.load_model_files(model_dir)[0]
    if not model_config.data.aligns_words:
        raise UserError(f"train-aligner: {model_dir} {model_config.data.task}; the alignment module aligns words")
    started = (run_dir / model_directory.LAST).exists()
    if started and not resume:
        raise UserError(f"{run_dir}: already holds an alignment module's run; use --resume to continue it")
    point = ResumePoint.read(run_dir) if started else None
    config = run_config(model_dir, [*(point.settings if point else []), *overrides])
    changed = point.changes(config) if point else []
    agreeing = any(o.partition("=")[0] == "train.aligner_agreement_weight" for o in overrides)
    if agreeing and config.train.aligner_agreement_weight and reverse_dir is None:
        raise UserError(
            "train-aligner: train.aligner_agreement_weight is the agreement of two directions' modules; "
            "give the other direction's model with --reverse REVERSE_MODEL_DIR"
        )
    return config, point, changed


def _begin(
    run_dir: Path,
    attached: list[Attached],
    config: Config,
    progress: Progress,
    *,
    resumed: bool,
    asked_to_resume: bool,
    changed: list[str],
) -> None:
    """The run's first writes, once everything is checked: its folders tidied, its config,
    and its log trimmed to the resume point (or, for a run that starts, begun afresh)."""
    for each in attached:
        each.run_dir.mkdir(parents=True, exist_ok=True)
        checkpoint.remove_temporaries(each.run_dir)
    atomic.atomic_write(run_dir / model_directory.CONFIG, config.to_yaml().encode("utf-8"))
    if resumed:
        forget_rows_after(run_dir / model_directory.METRICS, progress.step)
        say(f"resuming {run_dir} at step {progress.step}" + (f", with {'; '.join(changed)}" if changed else ""))
        return
    if asked_to_resume:
        say(f"{run_dir}: no checkpoint to resume from (stopped before its first one); starting again")
    (run_dir / model_directory.METRICS).unlink(missing_ok=True)


def _training_pairs(model_dir: Path, run_dir: Path, config: Config) -> PreparedPairs:
    """The run's training pairs, prepared in the model directory, or in the run's folder
    where its data section is not the model's (word links added, say)."""
    model_config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    data_dir = prepared_dir(config, run_dir if config.data != model_config.data else model_dir)
    ensure_prepared(config, data_dir, (text_source(src_subwords, model_dir), tgt_subwords))  # it aligns words
    return PreparedPairs(data_dir)


def _step_context(
    config: Config,
    attached: list[Attached],
    optimizer: torch.optim.Optimizer,
    train: PreparedPairs,
    device: torch.device,
    *,
    reverse_dir: Path | None,
) -> tuple[StepContext, kernels.Kernels]:
    """What every update of the run works with, and the kernels it runs: two modules
    trained together (agreement) run eagerly, as the graphs replay one model's terms."""
    objective = Objective.of(config, translation=False)
    together = len(attached) > 1
    chosen = kernels.choose(device, purpose="train", cuda_graphs=config.train.cuda_graphs and not together)
    graphed = GraphedLoss(attached[0].model, objective, config.data.max_length + 1) if chosen.cuda_graphs else None
    module = attached_module(attached[0].model)
    say(
        f"alignment module: {sum(p.numel() for p in module.parameters()):,} parameters on {device}, "
        f"objective {config.train.aligner_objective} ({' + '.join(OBJECTIVES[config.train.aligner_objective])})"
        + _together(reverse_dir, config)
        + "; the translation's weights frozen"
        + ("; the module's terms replayed as CUDA graphs" if chosen.cuda_graphs else "")
    )
    context = StepContext(
        attached[0].model,
        optimizer,
        objective,
        config.train.clip_norm,
        graphed=graphed,
        reverse=attached[1].model if together else None,
        frozen=_frozen_passes(
            attached, train, config.train, teacher_forced=graphed.teacher_forced if graphed else None
        ),
    )
    return context, chosen


def _budget(options: TrainConfig) -> str:
    """A run's budget as a message names it."""
    budgets = [
        f"train.{key} {value:g}"
        for key, value in (("max_steps", options.max_steps), ("max_minutes", options.max_minutes))
        if value is not None
    ]
    return " and ".join(budgets)


def _frozen_passes(
    attached: list[Attached], pairs: PreparedPairs, options: TrainConfig, *, teacher_forced: TeacherForced | None
) -> tuple[FrozenPasses, ...]:
    """The passes of each frozen translation that the run keeps (frozen_passes.py), the
    memory divided between the models, computed by `teacher_forced` (None: eagerly); none
    with train.frozen_passes_gib 0."""
    if not options.frozen_passes_gib:
        return ()
    budget = options.frozen_passes_gib * GIB / len(attached)
    kept = tuple(
        FrozenPasses(each.model, pairs, options, budget=budget, swapped=swapped, teacher_forced=teacher_forced)
        for each, swapped in zip(attached, (False, True), strict=False)
    )
    mib = sum(each.kept_bytes for each in kept) / 2**20
    counts = " and ".join(f"{each.kept_pairs:,}" for each in kept)  # the model's, the reverse model's
    whose = "translations'" if len(kept) > 1 else "translation's"
    say(
        f"keeping the frozen {whose} passes of {counts} of {len(pairs):,} pairs "
        f"({mib:,.0f} MiB of train.frozen_passes_gib {options.frozen_passes_gib:g}), each computed once"
    )
    return kept


def _together(reverse_dir: Path | None, config: Config) -> str:
    """What the run's first line says of a reverse model's module trained with the model's."""
    if reverse_dir is None:
        return ""
    return f", trained with {reverse_dir}'s (agreement weight {config.train.aligner_agreement_weight})"


def _attach(model_dir: Path, run_dir: Path, config: Config, device: torch.device) -> Attached:
    """The model of `model_dir`, frozen, with a new module of model.aligner_size attached, on `device`."""
    model_config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    model = model_directory.load_model(model_dir, model_config, src_subwords, tgt_subwords, aligner=False)
    digest = model_directory.stored_digest(model_directory.weights_path(model_dir))
    model.aligner = build_aligner(model, size=config.model.aligner_size, null=config.model.aligner_null)
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    return Attached(model.to(device), digest, run_dir)


def _check_reverse(model_dir: Path, reverse_dir: Path, folder: Path, *, fresh: bool) -> None:
    """Refuse, in one line, a reverse model that is not of the other direction, whose
    subword models are not the model's swapped (agreement compares the two directions
    piece by piece), or, for a run that starts, whose module's `folder` holds one already."""
    config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    reverse, reverse_src, reverse_tgt = model_directory.load_model_files(reverse_dir)
    try:
        check_reverse(config.data, reverse.data, name=f"--reverse {reverse_dir}")
    except ValueError as error:
        raise UserError(f"train-aligner: {error}") from None
    swapped = [text_source(reverse_src, reverse_dir).digest, reverse_tgt.digest]
    if swapped != [tgt_subwords.digest, text_source(src_subwords, model_dir).digest]:
        raise UserError(
            f"train-aligner: --reverse {reverse_dir}: its subword models are not {model_dir}'s swapped; the modules "
            "agree piece by piece, so both models need the same vocabularies (a joint vocabulary of the same text)"
        )
    held = [name for name in (model_directory.ALIGNER_WEIGHTS, model_directory.LAST) if (folder / name).exists()]
    if fresh and held:
        raise UserError(
            f"train-aligner: {folder} already holds a module ({held[0]}); a run that trains it again with "
            f"{model_dir}'s would replace it: delete {folder} first"
        )


def _write_reverse_config(reverse_dir: Path, run_dir: Path, config: Config) -> None:
    """The reverse module's run config: the reverse model's own with the run's settings,
    and as its training data the run's corpora with their sides swapped, their links read
    transposed (written beside it, `corpus-K.links`), as its module learnt from them."""
    swapped = []
    for k, corpus in enumerate(config.data.train_corpora):
        swapped.append({"src": corpus.tgt, "tgt": corpus.src})
        if corpus.alignments is not None:
            links = run_dir / f"corpus-{k}.links"
            with atomic.replacing(links) as temporary, open(temporary, "w", encoding="utf-8") as out:
                out.writelines(f"{transposed_pharaoh(line)}\n" for line in stream_lines(corpus.alignments))
            swapped[-1]["alignments"] = str(links.resolve())
    module_settings = assignments(recorded_settings(config, MODULE_RUN_KEYS))
    settings = [*module_settings, f"data.train={json.dumps(swapped)}", "model.aligner=true"]
    reverse = load_config(reverse_dir / model_directory.CONFIG, settings)
    atomic.atomic_write(run_dir / model_directory.CONFIG, reverse.to_yaml().encode("utf-8"))


class ModuleLoop(TrainingLoop):
    """The training loop of the alignment module: the module alone trains (with a reverse
    model's, both), on the frozen models' passes, and a checkpoint writes the modules and
    the run's resume point."""

    command = "train-aligner"
    failed_loss = "the alignment module's loss"
    trained_weights = "the alignment module's weights"

    def __init__(
        self,
        config: Config,
        run_dir: Path,
        *,
        context: StepContext,
        pairs: PreparedPairs,
        progress: Progress,
        attached: list[Attached],
    ):
        super().__init__(config, run_dir, context=context, pairs=pairs, progress=progress)
        self.attached = attached  # the models whose modules train, the run's own first (`save_modules`)

    def start(self) -> None:
        """The frozen translations run without dropout; the modules have none."""
        for each in self.attached:
            each.model.eval()

    def checkpoint(self, *, everything: bool = False) -> bool:
        """Save the modules and the resume point; the run goes on until its budget is spent."""
        save_modules(self.attached, self.context.optimizer, self.progress, self.config)
        return False
