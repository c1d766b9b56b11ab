"""One JSON line as ragkit reads it, in a ``.jsonl`` file and on standard input
(``ragkit ingest -``): one parser, so a line is accepted or refused for the same reason in both.

A line is refused, with a reason naming what is wrong, when it is not JSON or when its arrays
and objects nest deeper than :data:`MAX_DEPTH` (Python's own limits turn deeper values into a
``RecursionError`` somewhere later). What a record's fields may not hold (an unpaired
surrogate escape such as ``"\\udc80"``, ``NaN``) is checked field by field after the line is
parsed (:mod:`ragkit.documents.checks`), so the reason names the field. The first line of an input may start with a UTF-8 byte order mark: it is dropped.

Example:
    >>> parse_line('\\ufeff{"id": "a", "text": "A."}', first=True)
    {'id': 'a', 'text': 'A.'}
    >>> parse_line("[" * 200 + "]" * 200)
    Traceback (most recent call last):
    ...
    ragkit.errors.RagkitError: arrays or objects nested deeper than 100 levels
"""

from __future__ import annotations

import json
from typing import Any

from ragkit.errors import RagkitError

MAX_DEPTH = 100  # levels of arrays and objects in one value (records hold a few)
BOM = "\ufeff"


def parse_line(line: str, first: bool = False) -> Any:
    """The JSON value of one line (``first``: the input's first line, whose byte order mark
    is dropped), or a :class:`RagkitError` whose message is the reason to refuse it.

    Example:
        >>> parse_line('{"id": "a", "text": ')
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: invalid JSON (Expecting value)
    """
    if first and line.startswith(BOM):
        line = line[len(BOM) :]
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise RagkitError(f"invalid JSON ({error.msg})") from None
    except RecursionError:
        raise RagkitError(too_deep()) from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise RagkitError(f"invalid JSON ({error})") from None
    check_value(value)
    return value


def check_value(value: Any) -> None:
    """A :class:`RagkitError` when ``value`` (parsed JSON, or a record's metadata) nests
    deeper than :data:`MAX_DEPTH`; walked without recursion, so any depth is refused rather
    than overflowing the stack.

    Example:
        >>> check_value({"year": 2021, "tags": ["a", {"b": "c"}]})
        >>> nested: list = []
        >>> for _ in range(150):
        ...     nested = [nested]
        >>> check_value({"deep": nested})
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: arrays or objects nested deeper than 100 levels
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        if depth >= MAX_DEPTH:
            raise RagkitError(too_deep())
        stack.extend((child, depth + 1) for child in children)


def too_deep() -> str:
    """The reason a value nested too deep is refused."""
    return f"arrays or objects nested deeper than {MAX_DEPTH} levels"
