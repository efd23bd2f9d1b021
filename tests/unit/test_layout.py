"""The package's shape, as docs/architecture.md describes it: a few top-level modules
beside packages named for what they do, every one of them placed in the layers contract
that lint-imports checks, and no module too long to read whole."""

import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rnnsearch"
MOST_TOP_LEVEL_MODULES = 9
MOST_LINES = 400


def _layered_names() -> set[str]:
    settings = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    contracts = settings["tool"]["importlinter"]["contracts"]
    whole = [c for c in contracts if c["type"] == "layers" and "containers" not in c]
    assert len(whole) == 1, "one layers contract over the whole package"
    return {name.strip() for layer in whole[0]["layers"] for name in layer.split("|")}


def _top_level() -> set[str]:
    modules = {f"rnnsearch.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    packages = {f"rnnsearch.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    return modules | packages


def test_the_top_level_holds_few_modules():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MOST_TOP_LEVEL_MODULES, modules


def test_the_layers_contract_places_every_top_level_module_and_package():
    layered = _layered_names()
    assert _top_level() - layered == set(), "not placed in a layer"
    assert layered - _top_level() == set(), "placed, but no longer in the package"


def test_no_module_is_too_long_to_read_whole():
    lengths = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in lengths.items() if n > MOST_LINES} == {}
