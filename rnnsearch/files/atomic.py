"""Files written whole or not at all: a write goes to a temporary that is renamed into
place, so a kill at any moment leaves the previous complete file, never a torn one.

A temporary is written in a folder named `.{file}.{8 hex digits}.rnnsearch-tmp` beside
its file, so that the ones a kill leaves behind can be told from anything else and
removed. A failed write (a full disk, say) is one UserError naming the file.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rnnsearch.errors import UserError

TEMPORARY_SUFFIX = ".rnnsearch-tmp"
_TEMPORARY_NAME = re.compile(r"\..+\.[0-9a-f]{8}" + re.escape(TEMPORARY_SUFFIX))


def write_failure(path: Path | str, error: Exception) -> UserError:
    """The one-line error for a failed write of `path`: the file and the system's reason
    (a writer such as safetensors may give only the reason's error number, inside its
    own message)."""
    reason = getattr(error, "strerror", None)
    if reason is None:
        number = re.search(r"os error (\d+)", str(error))
        reason = os.strerror(int(number.group(1))) if number else " ".join(str(error).split())
    return UserError(f"{path}: cannot write: {reason}")


def _private_folder(path: Path) -> Path:
    """A new, empty folder beside `path`, named by the temporary pattern."""
    while True:
        folder = path.parent / f".{path.name}.{secrets.token_hex(4)}{TEMPORARY_SUFFIX}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        except OSError as error:
            raise write_failure(path, error) from None
        return folder


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file for the block to write; on success it is synced to disk and
    renamed over `path`, so readers see the old file or the new one, whole.

    The temporary lies in a folder of its own beside `path`, so that whatever a writer
    puts beside the file it is given (safetensors' own temporary) is in that folder
    too, and is removed with it. The file gets the permissions of any new file (0666
    less the umask), not the 0600 of a temporary. A failed write (a full disk, say)
    leaves the old file and no temporary, and raises a UserError naming `path`.
    """
    folder = _private_folder(path)
    temporary = folder / path.name
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
        mode = stat.S_IMODE(temporary.stat().st_mode)
        yield temporary
        os.chmod(temporary, mode)  # a writer that renamed its own file over it brought 0600
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
        folder.rmdir()
    except OSError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise write_failure(path, error) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


@contextmanager
def new_directory(path: Path, *, last: str) -> Iterator[Path]:
    """A temporary folder for the block to fill with the files of a new directory `path`;
    on success it becomes `path`, renamed into place in one step when `path` does not
    exist or is empty, else its entries moved in one by one with `last` (the file that
    makes the directory what it is) moved last. A failure (a full disk, say) removes the
    temporary and leaves `path` as it was, so trying again starts clean; an error names
    the file as it would be in `path`, not in the temporary folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_failure(path.parent, error) from None
    folder = _private_folder(path)
    try:
        yield folder
        if not path.exists() or (path.is_dir() and not any(path.iterdir())):
            os.replace(folder, path)
            return
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name == last)
        for entry in entries:
            os.replace(entry, path / entry.name)
        folder.rmdir()
    except OSError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise write_failure(path, error) from None
    except UserError as error:  # a file of the block's that could not be written: named where it belongs
        shutil.rmtree(folder, ignore_errors=True)
        raise UserError(str(error).replace(str(folder), str(path))) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def remove_temporaries(*folders: Path) -> list[Path]:
    """Delete the temporaries that killed writes left in `folders`; return them. Only
    names of the temporary pattern are touched."""
    removed = []
    for parent in folders:
        if parent.is_dir():
            removed += [_removed(entry) for entry in parent.iterdir() if _TEMPORARY_NAME.fullmatch(entry.name)]
    return removed


def remove_temporaries_of(*paths: Path) -> list[Path]:
    """Delete the temporaries that killed writes of the files `paths` left beside them;
    return them. A folder shared with other writers (a user's output folder) keeps every
    other file's, whoever is writing it now."""
    removed = []
    for path in paths:
        if path.parent.is_dir():
            pattern = re.compile(re.escape(f".{path.name}.") + r"[0-9a-f]{8}" + re.escape(TEMPORARY_SUFFIX))
            removed += [_removed(entry) for entry in path.parent.iterdir() if pattern.fullmatch(entry.name)]
    return removed


def _removed(entry: Path) -> Path:
    """`entry`, a temporary, deleted (a folder with all it holds)."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)
    return entry


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, whole."""
    with replacing(path) as temporary, open(temporary, "wb") as out:
        out.write(data)


def append_line(path: Path, line: str) -> None:
    """Append `line` and a newline to the text file `path`. A failed append is cut back
    off, so that a full disk leaves the file as it was, with no torn last line."""
    data = line.encode("utf-8") + b"\n"
    with path.open("ab", buffering=0) as out:
        size = out.tell()
        try:
            written = 0
            while written < len(data):  # an unbuffered write may take only part of the data
                written += out.write(data[written:])
        except OSError as error:
            os.ftruncate(out.fileno(), size)
            raise write_failure(path, error) from None
