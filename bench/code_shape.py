"""The package's shape as a maintainer counts it, at any commit: what BENCHMARKS.md's
"The code's shape, measured" reports, counted the same way every time.

    python bench/code_shape.py                 # the work tree
    python bench/code_shape.py --at 8331078    # a commit, read from git
    python bench/code_shape.py --at 8331078 --at HEAD --at .

Counted over rnnsearch/'s Python modules by their syntax trees: calls of `typing.cast`,
names `Any` (annotations written as strings included), functions over 60 lines and
functions of 8 or more parameters (a method's `self` aside), modules
over 400 lines, top-level modules (`__init__` and `__main__` aside), modules with a function
that takes a parameter named `prefixes`, `glossary` or `avoid` (a call's per-sentence
inputs, which travel inside its request); and the files under rnnsearch/ (any kind) whose
text names `alignment_from`.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rnnsearch"


COUNTS = (
    "top-level modules",
    "modules over 400 lines",
    "functions over 60 lines",
    "functions of 8+ parameters",
    "cast(",
    "Any",
    "naming alignment_from",
    "naming prefixes, glossary or avoid as a parameter",
)
"""What is counted, in the order the table lists it."""


def files(at: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every file of the package: in the work tree ("."), or at a commit."""
    if at == ".":
        for path in sorted((ROOT / PACKAGE).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield str(path.relative_to(ROOT)), path.read_text(errors="replace")
        return
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", at, PACKAGE], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in names:
        shown = subprocess.run(["git", "show", f"{at}:{name}"], cwd=ROOT, check=True, capture_output=True)
        yield name, shown.stdout.decode(errors="replace")


def _names_any(node: ast.AST) -> int:
    if isinstance(node, ast.Name) and node.id == "Any":
        return 1
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        try:
            parsed = ast.parse(node.value, mode="eval")
        except SyntaxError:
            return 0
        return sum(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(parsed))
    return 0


def _is_cast(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    called = node.func
    if isinstance(called, ast.Name):
        return called.id == "cast"
    return (
        isinstance(called, ast.Attribute)
        and called.attr == "cast"
        and isinstance(called.value, ast.Name)
        and called.value.id == "typing"
    )


def shape(at: str) -> dict[str, int]:
    """Every count, at one commit or in the work tree."""
    counts = dict.fromkeys(COUNTS, 0)
    for name, text in files(at):
        if "alignment_from" in text:
            counts["naming alignment_from"] += 1
        if not name.endswith(".py"):
            continue
        if name.count("/") == 1 and not name.endswith("__init__.py") and not name.endswith("__main__.py"):
            counts["top-level modules"] += 1
        counts["modules over 400 lines"] += len(text.splitlines()) > 400
        tree = ast.parse(text)
        counts["naming prefixes, glossary or avoid as a parameter"] += _names_inputs(tree)
        for node in ast.walk(tree):
            counts["cast("] += _is_cast(node)
            counts["Any"] += _names_any(node)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                counts["functions over 60 lines"] += (node.end_lineno or node.lineno) - node.lineno + 1 > 60
                counts["functions of 8+ parameters"] += _parameters(node) >= 8
    return counts


PER_SENTENCE = ("prefixes", "glossary", "avoid")


def _names_inputs(tree: ast.AST) -> bool:
    """Whether a function of the module takes a parameter named as a per-sentence input."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            if any(a.arg in PER_SENTENCE for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
                return True
    return False


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters a function takes, a method's `self` or `cls` not counted."""
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    count = len(names) + len(arguments.kwonlyargs) + (arguments.vararg is not None) + (arguments.kwarg is not None)
    return count - (bool(names) and names[0] in ("self", "cls"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at", action="append", help="a commit (default: the work tree, '.')")
    args = parser.parse_args()
    shapes = {at: shape(at) for at in args.at or ["."]}
    print("| | " + " | ".join(shapes) + " |")
    print("|---|" + "---|" * len(shapes))
    for key in next(iter(shapes.values())):
        print(f"| {key} | " + " | ".join(str(counts[key]) for counts in shapes.values()) + " |")


if __name__ == "__main__":
    main()
