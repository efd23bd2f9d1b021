"""Data-parallel training: two gloo processes on the CPU, spawned by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from safetensors.torch import load_file, save_file

from rnnsearch.text.batches import make_batch
from rnnsearch.training.distributed import SINGLE_PROCESS, World
from rnnsearch.training.loop import StepContext, training_step
from rnnsearch.training.loss import Objective
from tests.conftest import random_sources, tiny_model
from tests.integration.conftest import tiny_config, write_config

CLIP = 0.5
LEARNING_RATE = 0.1


def pairs_for_rank(rank: int) -> list[tuple[list[int], list[int]]]:
    """Each rank's own sentences, of different lengths and counts."""
    sources = random_sources(5 + 2 * rank, 12, seed=10 + rank, max_len=8)
    targets = random_sources(5 + 2 * rank, 12, seed=20 + rank, max_len=6)
    return list(zip(sources, targets))


def one_update(model, pairs, world: World = SINGLE_PROCESS, ddp=None) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    training_step(StepContext(model, optimizer, Objective(0.1), CLIP, world=world, ddp=ddp), make_batch(pairs))


def update_on_one_rank(rank: int, size: int, folder: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=size)
    torch.set_num_threads(1)
    model = tiny_model(seed=3)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    one_update(model, pairs_for_rank(rank), World(rank, size, rank, size), ddp=ddp)
    save_file({name: p.detach().contiguous() for name, p in model.named_parameters()}, f"{folder}/rank{rank}.st")
    dist.destroy_process_group()


def test_two_processes_make_the_update_of_one_process_on_both_batches(tmp_path):
    mp.spawn(update_on_one_rank, args=(2, str(tmp_path)), nprocs=2, join=True)
    model = tiny_model(seed=3)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    one_update(model, pairs_for_rank(0) + pairs_for_rank(1))
    for rank in (0, 1):
        trained = load_file(tmp_path / f"rank{rank}.st")
        for name, parameter in model.named_parameters():
            assert not torch.equal(parameter, before[name]) or parameter.grad.abs().sum() == 0, name
            assert torch.allclose(trained[name], parameter.detach(), atol=1e-6), (rank, name)


def torchrun(config: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    command += ["-m", "rnnsearch", "train", str(config), *extra]
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def train_losses(run: Path) -> list[tuple[int, float]]:
    return [(row["step"], row["train_loss"]) for row in metrics(run) if "train_loss" in row]


@pytest.fixture(scope="module")
def torchruns(corpus, tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """Two torchrun trainings of the tiny config for 6 steps: one uninterrupted ("whole"),
    one stopped at step 3 ("stopped") and resumed from there ("resumed"); each run's
    model directory and what the launch printed."""
    folder = tmp_path_factory.mktemp("torchrun")
    options = {"max_steps": 6, "valid_every": 3, "log_every": 1}
    whole, split = (folder / name for name in ("whole", "split"))
    runs = {}
    for name, run, extra in (
        ("whole", whole, ()),
        ("stopped", split, ("--set", "train.max_steps=3")),
        ("resumed", split, ("--resume",)),
    ):
        result = torchrun(write_config(folder / f"{run.name}.yaml", tiny_config(corpus, run, **options)), *extra)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = run, result
    return runs


def test_torchrun_trains_with_two_processes_and_one_writer(torchruns):
    run, result = torchruns["whole"]
    assert "2 processes" in result.stderr
    assert result.stderr.count("step 3: valid loss") == 1 and result.stderr.count("step 6: valid loss") == 1
    assert result.stderr.count("preparing the training data") == 1  # rank 0 prepares; both ranks map its files
    assert not [p for p in (run / "prepared").iterdir() if p.name.startswith(".")]

    names = sorted(p.name for p in run.iterdir())
    assert [n for n in names if n.endswith(".safetensors")] == ["best.safetensors", "last.safetensors"]
    assert not [n for n in names if n.startswith(".")], names  # no temporary left by a second writer
    rows = metrics(run)
    assert [r["step"] for r in rows if "valid_loss" in r] == [3, 6]
    assert [step for step, _ in train_losses(run)] == [1, 2, 3, 4, 5, 6]


def test_a_resumed_torchrun_reuses_its_data_and_draws_the_dropout_masks_of_an_uninterrupted_one(torchruns):
    """Dropout (0.1 in the tiny config) draws from each rank's generator: a resumed run
    matches a run that never stopped only if every rank's generator goes on as it was."""
    (run, stopped), (_, resumed) = torchruns["stopped"], torchruns["resumed"]
    assert "preparing the training data" in stopped.stderr
    assert "prepared pairs in" in resumed.stderr and "preparing" not in resumed.stderr  # reused
    assert f"resuming {run} at step 3" in resumed.stderr
    assert [r["step"] for r in metrics(run) if "valid_loss" in r] == [3, 6]
    assert train_losses(run) == train_losses(torchruns["whole"][0])
