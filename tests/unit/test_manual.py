"""The README, the manual and BENCHMARKS.md name only commands, flags and config keys that
exist: every `rnnsearch …` command line they show is read, its command and each flag
looked up in the command's own parser, and every config key they name (`--set KEY=…`,
`section.key` in code) looked up in the config's schema."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from rnnsearch.cli import build_parser
from rnnsearch.config import Config
from rnnsearch.config.data import DATA_SECTIONS, DataSection

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]
SECTIONS = tuple(Config.model_fields)
FILE_ENDINGS = {"de", "en", "fr", "gz", "txt", "py", "md", "yaml", "json", "jsonl", "png", "model", "tok", "align"}


def subcommands() -> dict[str, object]:
    parser = build_parser()
    return next(action for action in parser._actions if action.dest == "command").choices


def command_lines(text: str) -> list[str]:
    """What follows `rnnsearch ` in the page's code: its code blocks, continued lines joined,
    cut at a comment, a pipe or the end of a shell command, and its inline code."""
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            for match in re.finditer(r"(?:^|[\s|;&(]|\$ )rnnsearch\s+(.*)", line):
                found.append(re.split(r"\s#|\s\||;|&&|\)", match.group(1))[0])
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    found += [match.group(1) for match in re.finditer(r"`rnnsearch ([^`]+)`", text)]
    return [" ".join(line.split()) for line in found]


def config_keys(text: str) -> list[str]:
    """The config keys a page names: after --set, and in code as `section.key`, leaving out
    what only looks like one: a file (`train.de`), a module (`search.beam.accept`) or a
    call (`model.translate(…)`)."""
    sections = "|".join(SECTIONS)
    keys = re.findall(r"--set[ =]+((?:" + sections + r")\.[a-z_.\[\]]+)=", text)
    for match in re.finditer(r"`((?:" + sections + r")\.[a-z_]+(?:\[\])?(?:\.[a-z_]+)*)(?![\w(/])", text):
        key = match.group(1)
        parts = key.replace("[]", "").split(".")
        module = ROOT / "rnnsearch" / parts[0] / parts[1]
        if not ({parts[1], parts[-1]} & FILE_ENDINGS or module.with_suffix(".py").exists() or module.is_dir()):
            keys.append(key)
    return keys


def in_schema(key: str) -> bool:
    """Whether the dotted `key` names a field of the config (a list's items written `[]`)."""
    models: list[type[BaseModel]] = [Config]
    for part in key.replace("[]", "").split("."):
        fields = [model.model_fields[part] for model in models if part in model.model_fields]
        if not fields:
            return False
        models = [t for field in fields for t in _types(field.annotation) if _is_section(t)]
        if DataSection in models:  # the data key holds the section of its kind
            models = list(DATA_SECTIONS.values())
    return True


def _is_section(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _types(annotation: object) -> list[object]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, typing.Annotated):
        arguments = typing.get_args(annotation)
        return [
            t for argument in (arguments[:1] if origin is typing.Annotated else arguments) for t in _types(argument)
        ]
    return [annotation]


def unknown_flags(line: str, commands: dict) -> list[str]:
    """The command or flags of one command line that its parser does not know."""
    words = [word.strip("[](){}…,.") for word in line.split()]
    name = words[0] if words else ""
    if not name or name.isupper() or name.startswith("-"):  # a placeholder (COMMAND), or the top level
        return []
    if name not in commands:
        return [name]
    known = commands[name]._option_string_actions
    flags = [word.split("=")[0] for word in words[1:] if re.fullmatch(r"--?[a-z][a-z0-9-]*(=.*)?", word)]
    return [flag for flag in flags if flag not in known]


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_command_and_flag_a_page_names_exists(page):
    commands = subcommands()
    text = page.read_text(encoding="utf-8")
    unknown = {line: wrong for line in command_lines(text) if (wrong := unknown_flags(line, commands))}
    assert not unknown, unknown


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_config_key_a_page_names_exists(page):
    unknown = sorted({key for key in config_keys(page.read_text(encoding="utf-8")) if not in_schema(key)})
    assert not unknown, unknown


def test_the_checks_catch_what_they_are_for():
    commands = subcommands()
    assert unknown_flags("translate runs/de-en --beam-size 5 --no-such-flag", commands) == ["--no-such-flag"]
    assert unknown_flags("transmogrify runs/de-en", commands) == ["transmogrify"]
    assert command_lines("```sh\nrnnsearch align M --src a \\\n  --tgt b | head\n```\nand `rnnsearch score M`") == [
        "align M --src a --tgt b",
        "score M",
    ]
    assert config_keys("`train.max_steps` and `train.de` and --set search.beam_size=2") == [
        "search.beam_size",
        "train.max_steps",
    ]
    assert in_schema("data.train[].alignments") and in_schema("model.attention.score")
    assert not in_schema("train.no_such_key") and not in_schema("model.attention.nothing")


NAMED_PATH = re.compile(
    r"(?<![\w./-])((?:\.\./)*(?:[\w.-]+/)+[\w.-]+\.(?:py|md|yaml|yml|ipynb|toml|json|png|sh))(?![\w/])"
)
REPOSITORY_FOLDERS = {"rnnsearch", "docs", "bench", "tests", "configs", "data", "experiments", ".ci"}
GENERATED_PAGES = ("docs/reference/commands.md", "docs/reference/config.md", "docs/reference/layout.md")


def repository_path(named: str, where: Path) -> Path | None:
    """The file of the repository that `named`, a path written in the file `where`, stands
    for: from the repository's root, from the package (`training/loop.py`), from the manual
    (`guides/alignments.md`), from the tests, or from `where` itself (`../model.md`); None
    for a path of the user's (`runs/demo/alignment.png`, `aligner/jumps.json`)."""
    first = named.split("/")[0]
    if first == "..":
        return (where.parent / named).resolve()
    if first in REPOSITORY_FOLDERS:
        return ROOT / named
    for base in (ROOT / "rnnsearch", ROOT / "docs", ROOT / "tests"):
        if (base / first).is_dir() or (base is ROOT / "docs" and first in ("reference", "benchmarks")):
            return base / named
    return None


def test_every_repository_path_named_in_the_docs_docstrings_and_help_exists():
    """A renamed or moved module left its old path in help texts and pages (the --markup
    help named rnnsearch/markup.py long after it became a package)."""
    texts = [*PAGES, *sorted((ROOT / "rnnsearch").rglob("*.py")), *sorted((ROOT / "bench").glob("*.py"))]
    missing = []
    for path in texts:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in NAMED_PATH.finditer(line):
                named = repository_path(match.group(1), path)
                generated = named is not None and (
                    str(named.relative_to(ROOT)) in GENERATED_PAGES or named.parent == ROOT / "docs" / "benchmarks"
                )
                if named is not None and not named.exists() and not generated:
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {match.group(1)}")
    assert missing == []
