"""Values an index cannot store, found in a record's fields before it becomes a document.

Two kinds reach ragkit from JSON and from Python although neither is text or JSON: an unpaired
(lone) surrogate — ``"\\udc80"``, from a ``\\udc80`` escape in JSON or bytes decoded with
``surrogateescape`` — which has no UTF-8 form, and a non-finite number (``NaN``,
``Infinity``, a float past ``1e308``), which Python's ``json`` reads but no JSON reader (SQLite's
included) accepts. A record holding either is skipped with the field and place named; the
other records of the file or call are indexed.

Example:
    >>> record_problem({"id": "a", "text": "bad \\udc80 byte", "metadata": {}})
    "'text' holds an unpaired surrogate U+DC80 at character 4 (not text; fix the source's encoding)"
    >>> record_problem({"id": "b", "text": "ok", "metadata": {"tags": [1, float("nan")]}})
    "'metadata.tags[1]' is NaN, not a JSON number (write null or leave the field out)"
    >>> record_problem({"id": "c", "text": "ok"}) is None
    True
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_problem(text: str, name: str) -> str | None:
    """Why ``text`` (the value called ``name``) has no UTF-8 form, or None.

    Example:
        >>> surrogate_problem("ab\\ud800", "'id'")
        "'id' holds an unpaired surrogate U+D800 at character 2 (not text; fix the source's encoding)"
    """
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"{name} holds an unpaired surrogate U+{ord(found.group()):04X} at character "
        f"{found.start()} (not text; fix the source's encoding)"
    )


def value_problem(value: Any, name: str) -> str | None:
    """The first unpaired surrogate (in a string, or a key of an object) or non-finite number
    in ``value`` (a JSON value called ``name``; nested places are named
    ``name.key[position]``), or None.

    Example:
        >>> value_problem({"score": float("inf")}, "metadata")
        "'metadata.score' is Infinity, not a JSON number (write null or leave the field out)"
    """
    if isinstance(value, str):
        return surrogate_problem(value, repr(name))
    if isinstance(value, float) and not math.isfinite(value):
        spelled = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return f"{name!r} is {spelled}, not a JSON number (write null or leave the field out)"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and (
                problem := surrogate_problem(key, f"{name!r} key {key!r}")
            ):
                return problem
            if problem := value_problem(item, f"{name}.{key}"):
                return problem
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            if problem := value_problem(item, f"{name}[{position}]"):
                return problem
    return None


def record_problem(fields: Mapping[str, Any]) -> str | None:
    """The first value of a record's ``fields`` (``id``, ``text``, ``title``, ``metadata``…)
    that an index cannot store (:func:`value_problem`), or None."""
    for name, value in fields.items():
        if problem := value_problem(value, str(name)):
            return problem
    return None
