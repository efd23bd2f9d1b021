"""`rnnsearch compare`: train several variants of one config alike and compare them.

An experiment file names a base config, a shared budget and the variants, each a set
of `section.key: value` overrides:

    base: configs/synthetic_reverse.yaml
    output: runs/compare-reverse
    budget: {max_minutes: 5}          # or {max_steps: 2000}; applied to every variant
    variants:
      rnnsearch: {model.attention.score: additive}
      fixed-context: {model.attention: none}

Every variant trains with the same data, seed and budget; then its best checkpoint
translates the base config's test set. The output folder gets results.md and
results.csv (variant, parameters, training tokens/s, validation perplexity, test
BLEU and chrF) and bleu_by_length.png, BLEU per source-length bucket with one line
per variant (the analogue of Bahdanau et al.'s Figure 2).
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rnnsearch.config import load_config, read_yaml
from rnnsearch.config.data import files_section
from rnnsearch.errors import UserError
from rnnsearch.evaluation import metrics
from rnnsearch.evaluation.plots import bleu_by_length_plot
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import read_metrics
from rnnsearch.kinds import data_kind
from rnnsearch.text.corpus import read_lines
from rnnsearch.training.trainer import Trainer
from rnnsearch.translation.translator import load


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_steps: int | None = Field(None, gt=0)
    max_minutes: float | None = Field(None, gt=0)


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base: str
    output: str
    budget: Budget
    variants: dict[str, dict[str, object]] = Field(min_length=1)


def load_experiment(path: str | Path) -> Experiment:
    path = Path(path)
    try:
        return Experiment.model_validate(read_yaml(path.read_text(encoding="utf-8")) or {})
    except FileNotFoundError:
        raise UserError(f"{path}: no such experiment file") from None
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: {key}: {first['msg']}") from None


def _overrides(experiment: Experiment, name: str) -> list[str]:
    settings = {**experiment.variants[name], "train.model_dir": str(Path(experiment.output) / name)}
    settings.update({f"train.{k}": v for k, v in experiment.budget.model_dump().items()})
    return [f"{key}={json.dumps(value)}" for key, value in settings.items()]


def _metric_rows(model_dir: Path) -> list[dict]:
    return read_metrics(model_dir / model_directory.METRICS)


def _train_speed(model_dir: Path) -> float:
    speeds = [row["tokens_per_second"] for row in _metric_rows(model_dir) if "tokens_per_second" in row]
    return statistics.median(speeds) if speeds else float("nan")


def run_variant(experiment: Experiment, name: str) -> tuple[dict[str, object], list[tuple[str, int, float]]]:
    """Train one variant (resuming if it has a checkpoint) and score it on the test set."""
    config = load_config(experiment.base, _overrides(experiment, name))
    test = files_section(config.data).test if config.data.prepared_on_disk else None
    if test is None:
        raise UserError(f"{experiment.base}: data.test is needed to compare variants (text, tested on its files)")
    model_dir = Path(config.train.model_dir)
    progress = Trainer(config, model_dir, data_kind(config)).run(resume=(model_dir / model_directory.LAST).exists())
    translator = load(model_dir, device=config.train.device)
    sources, references = read_lines(test.src), read_lines(test.tgt)
    hypotheses = [t.text for t in translator.translate(sources)]
    row = {
        "variant": name,
        "parameters": sum(p.numel() for p in translator.model.parameters()),
        "steps": progress.step,
        "train_tokens_per_s": round(_train_speed(model_dir)),
        "valid_ppl": round(min(r["valid_ppl"] for r in _metric_rows(model_dir) if "valid_ppl" in r), 2),
        "test_bleu": round(metrics.bleu(hypotheses, references).value, 2),
        "test_chrf": round(metrics.chrf(hypotheses, references).value, 2),
    }
    return row, metrics.bleu_by_length(hypotheses, references, [len(s.split()) for s in sources])


def _markdown(rows: list[dict[str, object]]) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(f"{row[key]:,}" if isinstance(row[key], int) else str(row[key]) for key in header) + " |"
        for row in rows
    ]
    return "\n".join(lines) + "\n"


def compare(path: str | Path) -> Path:
    """Run every variant of the experiment at `path`; return the output folder."""
    experiment = load_experiment(path)
    output = Path(experiment.output)
    output.mkdir(parents=True, exist_ok=True)
    rows, curves = [], {}
    for name in experiment.variants:
        row, curves[name] = run_variant(experiment, name)
        rows.append(row)
    with (output / "results.csv").open("w", newline="", encoding="utf-8") as table:
        writer = csv.DictWriter(table, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (output / "results.md").write_text(_markdown(rows), encoding="utf-8")
    bleu_by_length_plot(curves, output / "bleu_by_length.png")
    (output / "bleu_by_length.json").write_text(json.dumps(curves, indent=1), encoding="utf-8")
    return output
