"""The `rnnsearch` command: parses arguments and hands each command to the library.

Each module of this package owns a command (or a few small ones): its arguments, from the
flag groups of `options`, and the function that runs it, reading its input and writing
its output through `streams`, so that a failed write is one line naming the file rather
than a traceback. A new command is a module with a `register` function, listed in
COMMANDS."""

from __future__ import annotations

import argparse
import sys

from rnnsearch.cli import (
    align,
    align_corpus,
    attention,
    average,
    evaluate,
    experiments,
    export,
    score,
    self_train,
    serve,
    train,
    train_aligner,
    translate,
    translate_document,
)
from rnnsearch.cli.streams import NamedOutput
from rnnsearch.errors import UserError

# The command modules, in the order `rnnsearch --help` lists their commands.
COMMANDS = (
    train,
    train_aligner,
    self_train,
    align_corpus,
    translate,
    translate_document,
    evaluate,
    score,
    align,
    average,
    export,
    experiments,
    attention,
    serve,
)


def build_parser() -> argparse.ArgumentParser:
    """The `rnnsearch` command's parser: `main` parses with it, and the manual's command
    reference (docs/reference/commands.md) is generated from it."""
    parser = argparse.ArgumentParser(prog="rnnsearch", description="Attentional encoder–decoder models (RNNsearch).")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` (by default the process's arguments) names, and return the
    exit status: 0, 1 for an error (one line on stderr), 130 when interrupted."""
    args = build_parser().parse_args(argv)
    stdout = sys.stdout
    sys.stdout = NamedOutput(stdout, "<stdout>")
    try:
        if getattr(args, "device", None) is not None:
            from rnnsearch.translation.translator import resolve_device

            resolve_device(args.device, "--device")
        args.run(args)
        sys.stdout.flush()
    except UserError as error:
        print(f"rnnsearch: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rnnsearch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"rnnsearch: error: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    finally:
        sys.stdout = stdout
    return 0
