"""What every section of the config is: a pydantic model that refuses unknown keys and
does not change once read. The config's sections (config/) and the model's
(model/settings.py) share it."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """Every number a section holds is finite: infinity and NaN are refused with the key."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def registered_name(name: str, registry: Mapping[str, object], kind: str) -> str:
    """`name`, if the registry has it; else a ValueError listing the registered names."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; choose from {', '.join(registry)}")
    return name
