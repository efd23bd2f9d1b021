import os

import torch

from rnnsearch.training.trainer import ONEDNN_CACHE_CAPACITY, configure_cpu

CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"


def test_training_caps_the_onednn_cache(monkeypatch):
    monkeypatch.delenv(CACHE, raising=False)
    configure_cpu(torch.get_num_threads())
    assert int(ONEDNN_CACHE_CAPACITY) < 1024  # oneDNN's own default
    assert os.environ[CACHE] == ONEDNN_CACHE_CAPACITY


def test_a_capacity_from_the_environment_wins(monkeypatch):
    monkeypatch.setenv(CACHE, "7")
    configure_cpu(torch.get_num_threads())
    assert os.environ[CACHE] == "7"
