"""The packages of rnnsearch do not import each other in both directions.

Read from the source with `ast`, imports inside functions included: a lazy import is
still a dependency. A unit is a subpackage (rnnsearch.model, rnnsearch.text, …) or a
top-level module (rnnsearch.config, rnnsearch.translator, …).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rnnsearch"


def unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def dependencies() -> dict[str, dict[str, str]]:
    """unit → {unit it imports: where (file:line)}, between different units only."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("rnnsearch.") and unit(name) != unit(module) and _is_unit(unit(name)):
                    found[unit(module)].setdefault(unit(name), f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def _is_unit(name: str) -> bool:
    leaf = name.split(".")[1]
    return (PACKAGE / leaf).is_dir() or (PACKAGE / f"{leaf}.py").is_file()


def test_no_two_packages_import_each_other():
    graph = dependencies()
    both_ways = {
        frozenset({a, b}): (graph[a][b], graph[b][a]) for a in graph for b in graph[a] if a in graph.get(b, {})
    }
    assert not both_ways, both_ways
