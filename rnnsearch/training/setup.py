"""What a training run works with, made before its first step: the model directory
tidied, the corpus prepared and mapped, the model built (fresh, resumed from the last
checkpoint, or started from another model's weights), its optimizer, validator, DDP
wrapper and CUDA graphs (the context of its updates), and the kernels it trains with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel

from rnnsearch import kernels
from rnnsearch.config import Config
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import forget_rows_after
from rnnsearch.files.model_directory import source_and_target_sizes
from rnnsearch.model.seq2seq import RNNSearch, build_model
from rnnsearch.text.subwords import Subwords
from rnnsearch.training import checkpoint
from rnnsearch.training.console import say
from rnnsearch.training.distributed import World
from rnnsearch.training.environment import configure_cpu, seed_generators
from rnnsearch.training.graphed_loss import GraphedLoss
from rnnsearch.training.loop import StepContext
from rnnsearch.training.loss import Objective
from rnnsearch.training.run_data import Corpus, CorpusKind
from rnnsearch.training.schedule import Progress
from rnnsearch.training.validation import Validator


@dataclass
class TrainingSetup:
    """Everything the loop of one process of a run works with."""

    context: StepContext  # the model, optimizer, objective, world, DDP wrapper and CUDA graphs of its updates
    corpus: Corpus
    validator: Validator
    record: dict[str, object]  # what the weights record of the files they belong with
    progress: Progress
    kernels: kernels.Kernels


def set_up(
    config: Config,
    model_dir: Path,
    world: World,
    device: torch.device,
    kind: CorpusKind,
    *,
    resume: bool,
    restart: bool,
) -> TrainingSetup:
    """This process's part of a run on data of `kind`: `resume` from the model directory's
    last checkpoint, or start afresh (`restart`: a resumed run that found no checkpoint to
    resume from)."""
    options = config.train
    if world.distributed and config.model.aligner:
        raise UserError(
            "model.aligner trains in one process: the alignment module reads the model's pass outside the "
            "DistributedDataParallel wrapper, whose ranks would not share its gradients; train it with "
            "`rnnsearch train-aligner` after the run, or in one process"
        )
    if restart and world.is_main:
        say(f"{model_dir}: no checkpoint to resume from (stopped before its first one); starting again")
    device = world.device(device)
    configure_cpu(options.threads or world.cpu_threads())
    if world.is_main:
        checkpoint.remove_temporaries(model_dir)
        if not resume:
            _forget_an_earlier_start(model_dir)
    torch.manual_seed(options.seed)
    corpus, src_subwords, tgt_subwords = kind.prepare_corpus(config, model_dir, resume, world)
    model = build_model(config.model, *source_and_target_sizes(config, src_subwords, tgt_subwords)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=options.learning_rate, fused=True)
    decoding = Decoding(model, kind.input(config, [src_subwords]), tgt_subwords, config.search)
    validator = Validator(decoding, corpus, config, kind=kind, alignments=model_dir / model_directory.ALIGNMENTS)
    progress = Progress()
    if resume:
        progress = _restore(model, optimizer, model_dir, world, (src_subwords, tgt_subwords), options.max_steps)
    elif options.init_from:
        _start_from(model, Path(options.init_from), world)
    seed_generators(options.seed, world.rank, progress.step)
    record = model_directory.files_record(model_dir, src_subwords, tgt_subwords)
    objective = Objective.of(config)
    cuda_graphs = options.cuda_graphs and not world.distributed
    chosen = kernels.choose(device, purpose="train", precision=options.precision, cuda_graphs=cuda_graphs)
    graphed = None
    if chosen.cuda_graphs:
        graphed = GraphedLoss(model, objective, config.data.max_length + 1)
    if world.is_main:
        say(
            f"model: {sum(p.numel() for p in model.parameters()):,} parameters on {device}"
            + (f", {world.size} processes" if world.distributed else "")
            + f", kernels: {chosen.name}"
            + (", decoder replayed as CUDA graphs" if graphed else "")
        )
    ddp = None  # made last: see Trainer.run on why nothing may hold it after a failure
    if world.distributed:
        ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    context = StepContext(model, optimizer, objective, options.clip_norm, world, options.precision, graphed, ddp)
    return TrainingSetup(context, corpus, validator, record, progress, chosen)


def _start_from(model: RNNSearch, source: Path, world: World) -> None:
    """Fine-tuning: the weights of the model in `source`, with a fresh optimizer,
    schedule and best score."""
    path = model_directory.weights_path(source)
    info = model_directory.load_weights(model, path)
    if world.is_main:
        say(f"starting from the weights of {path}" + (f" (step {info['step']})" if "step" in info else ""))


def _restore(
    model: RNNSearch,
    optimizer: torch.optim.Optimizer,
    model_dir: Path,
    world: World,
    subwords: tuple[Subwords | None, Subwords],
    max_steps: int | None,
) -> Progress:
    """The weights, optimizer state and progress of the model directory's last checkpoint,
    each checked (the progress within the budget of `max_steps`); what was logged and kept
    after it is forgotten, as the resumed run redoes it."""
    path = model_dir / model_directory.LAST
    tensors, info = model_directory.read_tensors(path)
    progress = checkpoint.resumed_progress(info, path, max_steps=max_steps)
    model_directory.require_finite(tensors, path, refusal="a run cannot resume from it")
    model_directory.check_files(info, path, *subwords)
    model_directory.assign_weights(model, tensors, path)
    checkpoint.restore_optimizer(optimizer, tensors, info, path)
    if world.is_main:
        forget_rows_after(model_dir / model_directory.METRICS, progress.step)
        checkpoint.forget_checkpoints_after(model_dir, progress.step)
        say(f"resuming {model_dir} at step {progress.step}")
    return progress


def _forget_an_earlier_start(model_dir: Path) -> None:
    """What a run stopped before its first checkpoint left: its log rows and kept
    weights, which a new run from step 0 must not append to or mix with its own."""
    (model_dir / model_directory.METRICS).unlink(missing_ok=True)
    checkpoint.forget_checkpoints_after(model_dir, 0)
