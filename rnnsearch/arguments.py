"""Checks of the arguments the Python API is called with: one clear error naming the
argument or item, instead of a failure deep inside a search or a silent misreading
(a str taken for a list of one-character texts, a dict for its keys)."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sized
from typing import TypeVar

from rnnsearch.errors import ArgumentTypeError, ArgumentValueError

Checked = TypeVar("Checked")


def checked_iterable(values: object, name: str, *, example: str = "a list") -> Iterable:
    """`values` if it is an iterable other than a single str, bytes or mapping.

    A str is refused rather than taken for a sequence of one-character texts, and a
    mapping rather than taken for its keys; `example` shows the caller what to pass.
    """
    if isinstance(values, (str, bytes, bytearray)):
        raise ArgumentTypeError(f"{name}: expected a list, got a single {type(values).__name__}; pass {example}")
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise ArgumentTypeError(f"{name}: expected a list, got {type(values).__name__}; pass {example}")
    return values


def checked_list(values: object, name: str, *, example: str) -> list:
    """`values` (see checked_iterable) as a list, read once: a generator is welcome."""
    return list(checked_iterable(values, name, example=example))


def checked_strings(values: object, name: str, *, example: str, unicode: bool = True) -> list[str]:
    """`values` as a list of str (see checked_list), each item checked; with `unicode`, a
    str that cannot be encoded as UTF-8 (a lone surrogate) is refused too."""
    items = checked_list(values, name, example=example)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise ArgumentTypeError(f"{name}[{index}]: expected a str, got {type(item).__name__}")
        if unicode:
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ArgumentValueError(
                    f"{name}[{index}]: not valid Unicode (a lone surrogate at character {error.start + 1})"
                ) from None
    return items


def checked_count(value: object, name: str, *, maximum: int | None = None) -> int:
    """`value` as an int from 1 to `maximum` (no upper bound for None); a bool, a float or a
    str is refused rather than converted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name}: expected an int, got {type(value).__name__}")
    count = int(value)
    if count < 1 or (maximum is not None and count > maximum):
        bound = "at least 1" if maximum is None else f"from 1 to {maximum}"
        raise ArgumentValueError(f"{name}: {count} is out of range; it must be {bound}")
    return count


def checked_choice(value: object, name: str, choices: Collection[str]) -> str:
    """`value` if it is a str and one of `choices`; anything else (a list of one name, say)
    is refused with the choices listed."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name}: expected a str, one of {', '.join(choices)}; got {type(value).__name__}")
    if value not in choices:
        raise ArgumentValueError(f"{name}: {value!r} is not one of {', '.join(choices)}")
    return value


def checked_real(value: object, name: str) -> float:
    """`value` as a float if it is a real number (an int, a float or a NumPy scalar of
    either); a bool, a str or anything else is refused rather than converted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def numbered_chunks(
    chunks: Iterable[object], check: Callable[[object, int], Checked], lines: Callable[[Checked], Sized]
) -> Iterator[tuple[int, int, Checked]]:
    """Each chunk of inputs that arrive a chunk at a time, checked by `check(chunk, index)`,
    as (index, the number of its first line, the checked chunk): lines are numbered
    across the chunks as in one list, counting `lines(checked)` of each chunk."""
    first_line = 1
    for index, chunk in enumerate(chunks):
        checked = check(chunk, index)
        yield index, first_line, checked
        first_line += len(lines(checked))


class GivenTwice(ArgumentValueError):
    """A key given twice in one JSON object."""


def unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object's members as `json.loads` hands them to its `object_pairs_hook`, a
    key given twice refused (GivenTwice, naming it), where JSON keeps the last silently:
    a request or a file that says one thing to its writer and another to its reader."""
    mapping: dict[str, object] = {}
    for key, value in pairs:
        if key in mapping:
            raise GivenTwice(f"{key!r} is given twice in one object")
        mapping[key] = value
    return mapping
