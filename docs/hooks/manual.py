"""MkDocs hooks that generate the manual's reference pages at build time, from the code
and files they describe, so that they cannot drift from them:

- reference/commands.md: every command and option, from the `rnnsearch` command's own
  parser (rnnsearch.cli.build_parser), each command's help as `rnnsearch CMD --help`
  prints it;
- reference/config.md: every config key with its type, default, bounds and meaning,
  from the config's schema (rnnsearch.config.Config);
- reference/layout.md: every module of the package with the first sentence of its
  docstring, package by package in the order of the layers that import-linter checks
  (pyproject.toml), and the repository's other folders;
- benchmarks/: BENCHMARKS.md, the one file that holds the figures, one page per topic
  (each of its `## ` sections), with an index of them.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
import types
import typing
from pathlib import Path

import annotated_types
from mkdocs.structure.files import File, Files
from pydantic import BaseModel
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[2]


def on_config(config):
    """List the benchmark pages, one per topic of BENCHMARKS.md, under the nav's Benchmarks."""
    pages = benchmark_pages((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))
    topics = [{_title(text): path} for path, text in pages.items() if path != "benchmarks/index.md"]
    for entry in config["nav"]:
        if isinstance(entry, dict) and "Benchmarks" in entry:
            entry["Benchmarks"] = [{"Overview": "benchmarks/index.md"}, *topics]
    return config


def on_files(files: Files, config) -> Files:
    """Add the generated pages to the files MkDocs builds."""
    pages = {
        "reference/commands.md": commands_page(),
        "reference/config.md": config_page(),
        "reference/layout.md": layout_page(),
    }
    pages |= benchmark_pages((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))
    for path, text in pages.items():
        files.append(File.generated(config, path, content=text))
    return files


def _title(page: str) -> str:
    """A generated page's title: its first heading."""
    return page.splitlines()[0].lstrip("#").strip()


def commands_page() -> str:
    """Every command's help, as the parser prints it, in the order of `rnnsearch --help`."""
    from rnnsearch.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal's width: the same page everywhere
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")  # the subparsers
    parts = [
        "# Commands",
        "Generated from the `rnnsearch` command's own parser when the manual is built: each section "
        "is what `rnnsearch COMMAND --help` prints.",
        "```text\n" + parser.format_help().rstrip() + "\n```",
    ]
    for name, command in commands.choices.items():
        parts.append(f"## rnnsearch {name}\n\n```text\n{command.format_help().rstrip()}\n```")
    return "\n\n".join(parts) + "\n"


def config_page() -> str:
    """Every config key, section by section, from the schema."""
    from rnnsearch.config import Config
    from rnnsearch.config.data import DATA_SECTIONS

    parts = [
        "# Config keys",
        "Generated from the config's schema (`rnnsearch/config/`, `rnnsearch/model/settings.py`, "
        "`rnnsearch/config/search.py`) when the "
        "manual is built. A config is a YAML file of these sections; `--set SECTION.KEY=VALUE` overrides one key "
        "on the command line, and an unknown key or a value out of its bounds is one line naming it.",
    ]
    sections = [(f"data ({kind})", section) for kind, section in DATA_SECTIONS.items()]
    sections += [(name, _model_of(field)) for name, field in Config.model_fields.items() if name != "data"]
    for title, model in sections:
        parts.extend(_section_tables(title.split(" ")[0], title, model))
    return "\n\n".join(parts) + "\n"


FOLDERS = {
    "configs/": "YAML configs to copy",
    "experiments/": "`rnnsearch compare` experiment files",
    "data/multi30k/": "the bundled benchmark (see its README for source and citation)",
    "data/alignment/": "English–French Hansards pairs with human word alignments (see its README)",
    "bench/": "speed and quality scripts; their figures are in BENCHMARKS.md",
    "docs/": "this manual: model.md (the specification), architecture.md, the guides, tutorial.ipynb",
    "tests/": "unit/ (one part at a time) and integration/ (commands, the server, training to a target)",
}
"""The repository's folders beside the package, as the layout page describes them."""


def layout_page() -> str:
    """The package's modules, each with the first sentence of its docstring, package by
    package from the top layer down, then the repository's other folders."""
    package = ROOT / "rnnsearch"
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers" and "containers" not in c)
    parts = [
        "# Layout",
        "Generated from the package when the manual is built: each module with the first sentence of its "
        "docstring, the packages in the order of the layers the import contracts check (pyproject.toml; each "
        "imports only those below it). [The architecture](../architecture.md) shows the data flow and how to "
        "add a score, a wiring or an input kind.",
    ]
    for layer in layers:
        for name in (part.strip().removeprefix("rnnsearch.") for part in layer.split("|")):
            folder = package / name
            if folder.is_dir():
                parts.append(f"## rnnsearch/{name}/\n\n{_first_sentence(folder / '__init__.py')}")
                modules = sorted(m for m in folder.rglob("*.py") if m.name != "__init__.py")
                rows = [f"| `{m.relative_to(folder)}` | {_cell(_first_sentence(m))} |" for m in modules]
                parts.append("| module | what it is |\n|---|---|\n" + "\n".join(rows))
            else:
                parts.append(f"## rnnsearch/{name}.py\n\n{_first_sentence(folder.with_suffix('.py'))}")
    rows = [f"| `{folder}` | {text} |" for folder, text in FOLDERS.items()]
    parts.append("## Beside the package\n\n| folder | what it holds |\n|---|---|\n" + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def _first_sentence(path: Path) -> str:
    """The first sentence of the docstring of the module at `path`, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s+(?=[A-Z`(])", paragraph, maxsplit=1)[0]


def _model_of(field: FieldInfo) -> type[BaseModel]:
    """The section class a field of Config holds."""
    return next(t for t in _types(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel))


def _types(annotation: object) -> list[object]:
    """The types a field's annotation allows, unions and Annotated unwrapped."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _types(arg)]
    if origin is typing.Annotated:
        return _types(typing.get_args(annotation)[0])
    if origin is list:
        return _types(typing.get_args(annotation)[0])
    return [annotation]


def _section_tables(key: str, title: str, model: type[BaseModel]) -> list[str]:
    """The table of a section's keys, then the tables of the sections nested in it."""
    rows, nested = [], []
    for name, field in model.model_fields.items():
        inner = [t for t in _types(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
        if inner:
            nested.extend(_section_tables(f"{key}.{name}", f"{key}.{name}", inner[0]))
        rows.append(
            f"| `{key}.{name}` | {_type_name(field.annotation)} | {_default(field)} | {_bounds(field)} "
            f"| {_cell(field.description or '')} |"
        )
    head = f"## {title}\n\n| key | type | default | bounds | meaning |\n|---|---|---|---|---|"
    return [head + "\n" + "\n".join(rows), *nested]


def _type_name(annotation: object) -> str:
    text = re.sub(r"\b(typing|rnnsearch\.[\w.]+|annotated_types|pydantic\.[\w.]+)\.", "", str(annotation))
    text = re.sub(r"Annotated\[(.*), FieldInfo\(.*\)\]", r"\1", text)
    return _cell(text.replace("<class '", "").replace("'>", "").replace("NoneType", "null"))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return "(its section's defaults)"
    return f"`{field.default!r}`" if field.default is not None else "`null`"


def _bounds(field: FieldInfo) -> str:
    bounds = []
    for constraint in field.metadata:
        for kind, attribute, symbol in BOUNDS:
            if isinstance(constraint, kind):
                bounds.append(f"{symbol} {getattr(constraint, attribute)}")
        if isinstance(constraint, annotated_types.MinLen):
            bounds.append(f"at least {constraint.min_length} items")
    return ", ".join(bounds)


BOUNDS = (
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Ge, "ge", "≥"),
    (annotated_types.Lt, "lt", "<"),
    (annotated_types.Le, "le", "≤"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def benchmark_pages(text: str) -> dict[str, str]:
    """BENCHMARKS.md as benchmarks/index.md (its opening and a list of the topics) and one
    page per `## ` section, its links made relative to the page."""
    text = text.replace("](docs/", "](../")
    sections = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    opening, topics = sections[0], sections[1:]
    pages, links = {}, []
    for section in topics:
        title = section.splitlines()[0][3:].strip()
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        pages[f"benchmarks/{slug}.md"] = re.sub(r"^#(#+) ", r"\1 ", section, flags=re.MULTILINE)
        links.append(f"- [{title}]({slug}.md)")
    pages["benchmarks/index.md"] = opening.rstrip() + "\n\n## Topics\n\n" + "\n".join(links) + "\n"
    return pages
