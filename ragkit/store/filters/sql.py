"""A filter as SQL over the folder store's ``documents d`` table, with exactly the answers of
:func:`ragkit.store.filters.evaluate.matches`.

A metadata condition looks the key up with ``json_each`` (no JSON path is ever built from a
key) and, for a list value, looks at its elements too. Every condition is a two-valued SQL
expression (``EXISTS``, or a ``COALESCE`` to 0), so ``NOT`` is the complement, as in Python.
Values are always parameters. The connection needs ragkit's SQL functions ``path_match``,
``number_of``, ``instant_of`` and ``lower_text`` (:func:`ragkit.store.folder.schema.connect`).

Example:
    >>> where_clause({"year": ["2020", 2021]})[1]  # "2020" as text and as the number it spells
    ['year', '2020', 2020, '2020', 2020, 'year', 2021, 2021]
    >>> where_clause({"language": {"$ne": "ar"}})
    ('NOT (d.language = ?)', ['ar'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any as AnyValue

from ragkit.store.filters.globs import path_glob
from ragkit.store.filters.tree import All, Bound, Condition, Filter, Not, parse_filter
from ragkit.store.filters.values import Scalar, spelled

__all__ = ["where_clause"]

COLUMNS = {
    "language": "d.language",
    "source": "d.source",
    "id": "(CASE WHEN d.external_id <> '' THEN d.external_id ELSE d.key END)",
    "content": "d.text",
}
OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
ENTRY = "EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ?{})"
ELEMENTS = "(m.type = 'array' AND EXISTS (SELECT 1 FROM json_each(m.value) e WHERE {}))"

Sql = tuple[str, list[AnyValue]]


def where_clause(filters: Mapping[str, AnyValue] | Filter) -> Sql:
    """The SQL condition on ``documents d`` that ``filters`` ask for, and its parameters.

    Raises:
        InvalidArgumentError: ``filters`` is malformed or over a limit
            (:func:`~ragkit.store.filters.parse_filter`).
    """
    return _sql(parse_filter(filters))


def _sql(tree: Filter) -> Sql:
    if isinstance(tree, Condition):
        return _condition(tree)
    if isinstance(tree, Not):
        inner, values = _sql(tree.part)
        return f"NOT ({inner})", values
    if not tree.parts:
        return ("1", []) if isinstance(tree, All) else ("0", [])
    joined = " AND " if isinstance(tree, All) else " OR "
    parts = [_sql(part) for part in tree.parts]
    text = joined.join(sql for sql, _ in parts)
    return (f"({text})" if len(parts) > 1 else text), [v for _, values in parts for v in values]


def _condition(condition: Condition) -> Sql:
    if condition.field.kind == "metadata":
        return _metadata(condition)
    column = COLUMNS[condition.field.kind]
    op, wanted = condition.op, condition.value
    if op == "exists":
        return "1", []
    if op == "empty":
        return f"{column} = ''", []
    if op in OPERATORS:
        return _range(column, op, wanted, "")
    if not isinstance(wanted, str):  # a column holds text: a number, bool or null equals none
        return "0", []
    if op == "eq":
        if condition.field.kind == "source":
            return path_glob(column, wanted)
        return f"{column} = ?", [wanted]
    if op == "contains":
        return f"instr({column}, ?) > 0", [wanted]
    return f"instr(lower_text({column}), ?) > 0", [wanted.lower()]


def _metadata(condition: Condition) -> Sql:
    """A condition on a metadata key: on the value ``m`` and, for a list, its elements ``e``."""
    key, op, wanted = condition.field.name, condition.op, condition.value
    if op == "exists":
        return ENTRY.format(""), [key]
    if op == "empty":
        empty = (
            "m.type = 'null' OR (m.type = 'text' AND m.value = '') "
            "OR (m.type = 'array' AND json_array_length(m.value) = 0)"
        )
        held, values = _entry(key, empty, [])
        return f"(NOT {ENTRY.format('')} OR {held})", [key, *values]
    if op in OPERATORS:
        scalar, values = _range("m.value", op, wanted, "m.type")
        listed, more = _range("e.value", op, wanted, "e.type")
        return _entry(key, f"{scalar} OR {ELEMENTS.format(listed)}", values + more)
    if op == "eq":
        scalar, values = _equal("m", wanted)
        listed, more = _equal("e", wanted)
        found = _entry(key, f"{scalar} OR {ELEMENTS.format(listed)}", values + more)
        if None in (wanted, *(spelled(wanted) if isinstance(wanted, str) else ())):
            missing = f"NOT {ENTRY.format('')}"  # null also matches a missing key
            return f"({missing} OR {found[0]})", [key, *found[1]]
        return found
    listed, more = _equal("e", wanted, ignore_case=op == "icontains")
    if not isinstance(wanted, str):
        return _entry(key, ELEMENTS.format(listed), more)
    text = "lower_text(m.value)" if op == "icontains" else "m.value"
    needle = wanted.lower() if op == "icontains" else wanted
    substring = f"(m.type = 'text' AND instr({text}, ?) > 0)"
    return _entry(key, f"{substring} OR {ELEMENTS.format(listed)}", [needle, *more])


def _entry(key: str, condition: str, values: list[AnyValue]) -> Sql:
    return ENTRY.format(f" AND ({condition})"), [key, *values]


def _equal(alias: str, wanted: Scalar, ignore_case: bool = False) -> Sql:
    """The condition that the JSON value ``alias`` (a ``json_each`` row) equals ``wanted`` by
    the typed rules (:func:`ragkit.store.filters.values.scalar_eq`)."""
    kind, value = f"{alias}.type", f"{alias}.value"
    if wanted is None:
        return f"{kind} = 'null'", []
    if isinstance(wanted, bool):
        return f"{kind} = '{str(wanted).lower()}'", []
    if isinstance(wanted, int | float):
        return f"({kind} IN ('integer', 'real') AND {value} = ?)", [wanted]
    if ignore_case:
        kinds = [f"({kind} = 'text' AND lower_text({value}) = ?)"]
        values: list[AnyValue] = [wanted.lower()]
    else:
        kinds, values = [f"({kind} = 'text' AND {value} = ?)"], [wanted]
    for other in spelled(wanted):
        sql, more = _equal(alias, other)
        kinds.append(sql)
        values.extend(more)
    return "(" + " OR ".join(kinds) + ")", values


def _range(value: str, op: str, bound: Bound, kind: str) -> Sql:
    """``value`` within ``bound`` (a number: numbers and text spelling one; an instant: ISO
    text), two-valued; ``kind``: the JSON type column ('' for a text column)."""
    if bound.number is not None:
        typed = f"{kind} IN ('integer', 'real', 'text') AND " if kind else ""
        return f"COALESCE({typed}number_of({value}) {OPERATORS[op]} ?, 0)", [bound.number]
    if bound.instant is not None:
        typed = f"{kind} = 'text' AND " if kind else ""
        return f"COALESCE({typed}instant_of({value}) {OPERATORS[op]} ?, 0)", [bound.instant]
    return "0", []
