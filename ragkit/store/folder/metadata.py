"""Document metadata that SQLite's JSON functions cannot read, found and made JSON again.

Metadata is stored as JSON text and filtered with SQLite's ``json_each``, which refuses the
whole query on one row that is not JSON. Python's ``json`` writes ``NaN`` and ``Infinity`` for
non-finite floats, and earlier releases stored them as given (readers refuse them now:
:mod:`ragkit.documents.checks`); ``ragkit doctor`` lists such rows (:func:`unreadable_rows`) and
``--repair`` drops the non-finite values (:func:`finite`), saying which.

Example:
    >>> finite('{"year": 2021, "score": NaN, "tags": ["a", Infinity]}')
    ({'year': 2021, 'tags': ['a']}, ['score', 'tags[1]'])
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any

from ragkit.store.folder.schema import DB_NAME


@dataclass(frozen=True)
class UnreadableRow:
    """A document whose metadata SQLite cannot read as JSON: its row id, key and metadata."""

    id: int
    key: str
    metadata: str


def unreadable_rows(db: sqlite3.Connection) -> list[UnreadableRow]:
    """The documents whose metadata is not JSON to SQLite (``NaN``, ``Infinity`` or worse)."""
    rows = db.execute("SELECT id, key, metadata FROM documents WHERE NOT json_valid(metadata)")
    return [UnreadableRow(*row) for row in rows]


def problem(rows: list[UnreadableRow]) -> str:
    """What doctor says of ``rows`` (not empty)."""
    keys = ", ".join(repr(row.key) for row in rows[:3]) + ("…" if len(rows) > 3 else "")
    return (
        f"{DB_NAME}: metadata of {len(rows)} document(s) is not JSON (NaN or Infinity written "
        f"by an earlier release): {keys}; every metadata filter fails on it"
    )


def finite(metadata: str) -> tuple[dict[str, Any], list[str]]:
    """``metadata`` (JSON text, ``NaN`` and ``Infinity`` allowed) without its non-finite
    numbers, and the places they were dropped from; text Python cannot read either, or that
    is not an object, gives ``{}`` (place ``*``)."""
    try:
        value = json.loads(metadata)
    except (ValueError, RecursionError):
        return {}, ["*"]
    if not isinstance(value, dict):
        return {}, ["*"]
    dropped: list[str] = []
    kept = _without_non_finite(value, "", dropped)
    return kept, dropped


def _without_non_finite(value: Any, place: str, dropped: list[str]) -> Any:
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            inner = f"{place}.{key}" if place else key
            if _non_finite(item):
                dropped.append(inner)
            else:
                kept[key] = _without_non_finite(item, inner, dropped)
        return kept
    if isinstance(value, list):
        items = []
        for position, item in enumerate(value):
            if _non_finite(item):
                dropped.append(f"{place}[{position}]")
            else:
                items.append(_without_non_finite(item, f"{place}[{position}]", dropped))
        return items
    return value


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def repair(db: sqlite3.Connection) -> list[str]:
    """Rewrite every unreadable metadata row as JSON (in one transaction of ``db``, a writer's
    connection); one line per row saying what was dropped."""
    done: list[str] = []
    with db:
        for row in unreadable_rows(db):
            kept, dropped = finite(row.metadata)
            text = json.dumps(kept, ensure_ascii=False, allow_nan=False)
            db.execute("UPDATE documents SET metadata = ? WHERE id = ?", (text, row.id))
            what = (
                "unreadable metadata replaced by {}"
                if dropped == ["*"]
                else (f"dropped non-finite metadata {', '.join(dropped)}")
            )
            done.append(f"{row.key!r}: {what}")
    return done
