"""What every section of the config is: a pydantic model that refuses unknown keys and
does not change once read. The config's sections (config/) and the model's
(model/settings.py) share it."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

MAX_SEED = 2**64 - 1
"""The largest seed: torch.manual_seed takes 64 bits."""

MAX_THREADS = 1024
"""The most CPU threads a run may ask for: more than any machine has cores, and far from
the counts at which OpenMP aborts the process."""

MAX_COUNT = 100_000_000
"""The most of anything counted in a config (tokens in a batch, sentences sampled, pieces
in a vocabulary, utterances made): far beyond any run's, and small enough that a mistyped
number is refused with its key rather than met by a library's crash or a day's work."""


MAX_RATE = 3.4e37
"""The largest learning rate: float32's largest finite value (3.4e38) times 1 − β1 (0.1),
so that Adam's first step, the rate divided by 1 − β1, still fits the float32 it is
applied in. A larger rate (1e308) ended in a traceback deep inside PyTorch's Adam; one
this large still makes weights overflow, which a run stops on in one line."""


class Section(BaseModel):
    """Every number a section holds is finite: infinity and NaN are refused with the key."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def registered_name(name: str, registry: Mapping[str, object], kind: str) -> str:
    """`name`, if the registry has it; else a ValueError listing the registered names."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; choose from {', '.join(registry)}")
    return name
