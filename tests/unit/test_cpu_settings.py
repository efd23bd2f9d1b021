"""The trainer's process-wide CPU settings (threads, malloc arenas, oneDNN's cache).

`configure_cpu` changes the whole process, so each test runs it in a fresh Python
process: the settings never leak into the tests that run after these.
"""

import json
import os
import subprocess
import sys

from rnnsearch.training.environment import ONEDNN_CACHE_CAPACITY

CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
PROBE = """
import json, os, torch
from rnnsearch.training.environment import configure_cpu
configure_cpu(1)
print(json.dumps({"cache": os.environ.get("ONEDNN_PRIMITIVE_CACHE_CAPACITY"), "threads": torch.get_num_threads()}))
"""


def configured(environment: dict[str, str]) -> dict:
    """What `configure_cpu(1)` leaves in a fresh process started with `environment`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def test_training_caps_the_onednn_cache():
    environment = {k: v for k, v in os.environ.items() if k != CACHE}
    assert int(ONEDNN_CACHE_CAPACITY) < 1024  # oneDNN's own default
    assert configured(environment) == {"cache": ONEDNN_CACHE_CAPACITY, "threads": 1}


def test_a_capacity_from_the_environment_wins():
    assert configured({**os.environ, CACHE: "7"})["cache"] == "7"
