"""A run's TensorBoard event files (train.tensorboard): the rows of metrics.jsonl as
curves, and the validation heatmaps as images, in MODEL_DIR/tensorboard/.

They are written by TensorBoard's own writer (torch.utils.tensorboard), and they are a
log, not one of the model directory's files written whole: the writer appends to an
event file from a thread of its own and puts it on disk at every validation (and every
two minutes). A kill loses at most what came after the last of those, and may leave a
last record cut short, which TensorBoard's reader skips. Each run (and each resumed run)
starts an event file of its own whose first record purges, for TensorBoard's reader,
every step from the run's first on: the steps a killed run logged after its last
checkpoint, which the resumed run trains again, are shown once, the resumed run's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from rnnsearch.config.data import VALIDATION_LOSS, ValidationScore
from rnnsearch.errors import UserError
from rnnsearch.evaluation.metrics import perplexity
from rnnsearch.files.metrics_log import MetricsRow

FOLDER = "tensorboard"
TAGS = {
    "train_loss": "train/loss",
    "lr": "train/learning_rate",
    "tokens_per_second": "train/target_tokens_per_second",
    "epoch": "train/epoch",
    VALIDATION_LOSS.key: VALIDATION_LOSS.tag,
    "valid_ppl": "valid/perplexity",
}
"""Tags of the values every run's rows hold: a curve's name in TensorBoard. The scores of
validation are the kind of data's, each with its tag (`ValidationScore`); a value of the
last validation over the whole set (valid_bleu_all, …) is its subset's tag + "_all"."""

HEATMAP = re.compile(r"step(\d+)-(\d+)\.png", re.ASCII)


def tags_of(scores: Sequence[ValidationScore]) -> dict[str, str]:
    """The tags of a run's rows: every run's (TAGS) and those of its kind's validation `scores`."""
    return TAGS | {score.key: score.tag for score in scores}


def tag(key: str, tags: Mapping[str, str] = TAGS) -> str | None:
    """The TensorBoard tag of a row's key among `tags` (`tags_of`); None for what is not a
    curve (the step, a count)."""
    if key in tags:
        return tags[key]
    if key.endswith("_all") and key.removesuffix("_all") in tags:
        return tags[key.removesuffix("_all")] + "_all"
    return None


class EventLog:
    """The event files of a run in `model_dir`/tensorboard/; `first_step` is the first
    step this run logs (1, or the resume point's step + 1); `scores`: the validation
    scores of the run's kind of data."""

    def __init__(self, model_dir: Path, *, first_step: int, scores: Sequence[ValidationScore] = ()):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise UserError(
                "train.tensorboard: the tensorboard package is not installed; "
                "pip install 'rnnsearch[tensorboard]', or set train.tensorboard: false"
            ) from None
        self.writer = SummaryWriter(str(model_dir / FOLDER), purge_step=first_step)
        self.written: set[tuple[str, int]] = set()
        self.tags = tags_of(scores)

    def _add(self, name: str, step: int) -> bool:
        """Whether `name` at `step` is still to be written: the last validation over the
        whole set validates the step the last regular one did, and its row repeats the
        subset's values, which a curve shows once."""
        if (name, step) in self.written:
            return False
        self.written.add((name, step))
        return True

    def scalars(self, row: MetricsRow) -> None:
        """Every curve's value in a metrics.jsonl row, at the row's step; with the training
        loss, its perplexity too (of the label-smoothed loss, as training minimises it)."""
        step = int(row["step"])
        for key, value in row.items():
            name = tag(key, self.tags)
            if name is not None and self._add(name, step):
                self.writer.add_scalar(name, value, step)
        if "train_loss" in row and self._add("train/perplexity", step):
            self.writer.add_scalar("train/perplexity", perplexity(row["train_loss"]), step)

    def heatmaps(self, step: int, alignments: Path) -> None:
        """The heatmaps validation drew at `step` (alignments/step{N}-{k}.png), as images
        `alignment/{k}`, a slider over the steps for each validation sentence."""
        import matplotlib.image

        for path in sorted(alignments.glob(f"step{step:07d}-*.png")):
            match = HEATMAP.fullmatch(path.name)
            if match is not None and self._add(f"alignment/{match[2]}", step):
                pixels = matplotlib.image.imread(path)[..., :3]
                self.writer.add_image(f"alignment/{match[2]}", pixels, step, dataformats="HWC")

    def flush(self) -> None:
        """Put what the writer holds on disk."""
        self.writer.flush()

    def close(self) -> None:
        """Flush and end the writer's thread."""
        self.writer.close()
