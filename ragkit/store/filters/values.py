"""How a filter value compares with a stored one: the typed equality, numbers spelled as text,
ISO 8601 instants.

A stored metadata value is JSON: null, a bool, a number, text, a list or an object. Equality is
typed: a number equals numbers only, a bool bools only, null null only; a value given as text
(the command line gives nothing else) equals that text and also the number, ``true``/``false``
or ``null`` it spells (:func:`spelled`). A range compares numbers — numeric values and text that
spells a number (:func:`number_of`, a CSV cell is text) — or instants: ISO 8601 dates and
date-times given as text, a naive one taken as UTC (:func:`instant_of`).

Example:
    >>> scalar_eq(2020, "2020"), scalar_eq("2020", 2020), scalar_eq(True, 1)
    (True, False, False)
    >>> number_of(" 2019 "), instant_of("1969-07-21T20:17:40") == instant_of("1969-07-21T21:17:40+01:00")
    (2019.0, True)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "KINDS",
    "Scalar",
    "instant_of",
    "is_scalar",
    "json_kind",
    "lower_text",
    "number_of",
    "scalar_eq",
    "scalar_ieq",
    "spelled",
]

Scalar = str | int | float | bool | None
KINDS = frozenset({"null", "bool", "number", "text", "list", "object"})
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# A date, optionally a time (hours and minutes, seconds, a fraction) and a UTC offset.
ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
)
SPELLED: dict[str, list[Scalar]] = {"true": [True], "false": [False], "null": [None]}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def is_scalar(value: Any) -> bool:
    """Whether ``value`` is text, a number, a bool or None (what a condition compares with)."""
    return value is None or isinstance(value, str | int | float)


def spelled(text: str) -> list[Scalar]:
    """The other values the text ``text`` also matches: the number, bool or null it spells.

    Example:
        >>> spelled("2020"), spelled("1e3"), spelled("true"), spelled("null"), spelled("x")
        ([2020], [1000.0], [True], [None], [])
    """
    if NUMBER.fullmatch(text):
        return [float(text) if any(c in text for c in ".eE") else int(text)]
    return SPELLED.get(text, [])


def scalar_eq(stored: Any, wanted: Scalar) -> bool:
    """Whether one stored JSON value equals ``wanted`` by the typed rules (a list or an object
    equals nothing: a list is matched by its elements, see
    :func:`ragkit.store.filters.evaluate.matches`)."""
    if isinstance(wanted, str):
        if isinstance(stored, str):
            return stored == wanted
        return any(scalar_eq(stored, other) for other in spelled(wanted))
    if wanted is None or isinstance(wanted, bool):
        return stored is wanted
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return False
    return stored == wanted


def scalar_ieq(stored: Any, wanted: Scalar) -> bool:
    """:func:`scalar_eq`, with text compared case-insensitively (``str.lower``)."""
    if isinstance(stored, str) and isinstance(wanted, str):
        return stored.lower() == wanted.lower()
    return scalar_eq(stored, wanted)


def number_of(value: Any) -> float | None:
    """``value`` as a number when it is one or text that spells one (a CSV cell), else None;
    registered in SQLite as ``number_of`` for range filters.

    Example:
        >>> number_of(2019), number_of(" 2019 "), number_of("1e3"), number_of("n/a"), number_of(True)
        (2019.0, 2019.0, 1000.0, None, None)
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        return float(value.strip())
    return None


def instant_of(value: Any) -> int | None:
    """The instant ISO 8601 text names, in microseconds since 1970 UTC (a naive date-time is
    UTC, a date its midnight), else None; registered in SQLite as ``instant_of``.

    Example:
        >>> instant_of("1970-01-02"), instant_of("1970-01-01T00:00:01Z"), instant_of("1970")
        (86400000000, 1000000, None)
    """
    if not isinstance(value, str) or not ISO.fullmatch(value):
        return None
    try:
        moment = datetime.fromisoformat(value.replace(",", "."))
    except ValueError:  # 2020-13-45: the shape of a date, not a date
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND


def lower_text(value: Any) -> Any:
    """Text in lower case (``str.lower``), anything else as it is; registered in SQLite as
    ``lower_text`` (SQLite's own ``lower`` folds ASCII only)."""
    return value.lower() if isinstance(value, str) else value


def json_kind(value: Any) -> str:
    """The kind of a JSON value (:data:`KINDS`), as the Milvus store records each metadata key's.

    Example:
        >>> json_kind(2020), json_kind("2020"), json_kind([1]), json_kind(None)
        ('number', 'text', 'list', 'null')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "list" if isinstance(value, list) else "object"
