"""Data-parallel training: two gloo processes on the CPU, spawned by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from safetensors.torch import load_file, save_file

from rnnsearch.text.batches import make_batch
from rnnsearch.training.distributed import SINGLE_PROCESS, World
from rnnsearch.training.trainer import training_step
from tests.conftest import random_sources, tiny_model
from tests.integration.conftest import tiny_config, write_config

CLIP = 0.5
LEARNING_RATE = 0.1


def pairs_for_rank(rank: int) -> list[tuple[list[int], list[int]]]:
    """Each rank's own sentences, of different lengths and counts."""
    sources = random_sources(5 + 2 * rank, 12, seed=10 + rank, max_len=8)
    targets = random_sources(5 + 2 * rank, 12, seed=20 + rank, max_len=6)
    return list(zip(sources, targets))


def one_update(model, pairs, world: World = SINGLE_PROCESS) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    training_step(model, optimizer, make_batch(pairs), label_smoothing=0.1, clip_norm=CLIP, world=world)


def update_on_one_rank(rank: int, size: int, folder: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=size)
    torch.set_num_threads(1)
    model = tiny_model(seed=3)
    one_update(torch.nn.parallel.DistributedDataParallel(model), pairs_for_rank(rank), World(rank, size, rank, size))
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


def test_torchrun_trains_with_two_processes_one_writer_and_resumes(corpus, tmp_path):
    run = tmp_path / "run"
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, run, max_steps=6, valid_every=3, log_every=3))
    first = torchrun(config)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "2 processes" in first.stderr
    assert first.stderr.count("step 3: valid loss") == 1 and first.stderr.count("step 6: valid loss") == 1
    assert first.stderr.count("preparing the training data") == 1  # rank 0 prepares; both ranks map its files
    assert not [p for p in (run / "prepared").iterdir() if p.name.startswith(".")]

    names = sorted(p.name for p in run.iterdir())
    assert [n for n in names if n.endswith(".safetensors")] == ["best.safetensors", "last.safetensors"]
    assert not [n for n in names if n.startswith(".")], names  # no temporary left by a second writer
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "valid_loss" in r] == [3, 6]
    assert [r["step"] for r in rows if "train_loss" in r] == [3, 6]

    resumed = torchrun(config, "--set", "train.max_steps=9", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "prepared pairs in" in resumed.stderr and "preparing" not in resumed.stderr  # reused
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "valid_loss" in r] == [3, 6, 9]


def test_a_resumed_torchrun_draws_the_dropout_masks_of_an_uninterrupted_one(corpus, tmp_path):
    """Dropout (0.1 in the tiny config) draws from each rank's generator: a resumed run
    matches a run that never stopped only if every rank's generator goes on as it was."""

    def train_losses(run: Path) -> list[tuple[int, float]]:
        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        return [(r["step"], r["train_loss"]) for r in rows if "train_loss" in r]

    options = {"max_steps": 4, "valid_every": 2, "log_every": 1}
    whole = write_config(tmp_path / "whole.yaml", tiny_config(corpus, tmp_path / "whole", **options))
    assert torchrun(whole).returncode == 0
    split = write_config(tmp_path / "split.yaml", tiny_config(corpus, tmp_path / "split", **options))
    assert torchrun(split, "--set", "train.max_steps=2").returncode == 0
    resumed = torchrun(split, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert train_losses(tmp_path / "split") == train_losses(tmp_path / "whole")
