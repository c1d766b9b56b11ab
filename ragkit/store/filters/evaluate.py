"""The filter language's reference semantics: whether one document row matches a filter.

The folder store's SQL (:mod:`ragkit.store.filters.sql`) gives the same answers, and Milvus
checks the rows its expression returns with :func:`matches` (:mod:`ragkit.store.filters.milvus`).
A row is a document as both backends store it: ``language``, ``source``, ``key``,
``external_id``, ``metadata`` (a dict) and, for a ``content`` condition, ``text``.

Example:
    >>> row = {"language": "en", "source": "/d/a.md", "key": "/d/a.md", "external_id": "",
    ...        "metadata": {"tags": ["x", "y"], "year": "2019"}}
    >>> matches({"tags": "y", "year": {"$gte": 2000}}, row), matches({"year": {"$ne": "2019"}}, row)
    (True, False)
    >>> matches({"$or": [{"id": "b"}, {"draft": {"$exists": True}}]}, row)
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any as AnyValue

from ragkit.store.filters.globs import path_match
from ragkit.store.filters.tree import All, Bound, Condition, Filter, Not, parse_filter
from ragkit.store.filters.values import instant_of, number_of, scalar_eq, scalar_ieq

__all__ = ["matches"]

MISSING = object()  # a metadata key the document lacks
COMPARE = {
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
}


def matches(filters: Mapping[str, AnyValue] | Filter, row: Mapping[str, AnyValue]) -> bool:
    """Whether the document ``row`` matches ``filters`` (native or parsed).

    Raises:
        InvalidArgumentError: ``filters`` is malformed (:func:`~ragkit.store.filters.parse_filter`).
    """
    return _holds(parse_filter(filters), row)


def _holds(tree: Filter, row: Mapping[str, AnyValue]) -> bool:
    if isinstance(tree, Condition):
        return _condition(tree, row)
    if isinstance(tree, Not):
        return not _holds(tree.part, row)
    if isinstance(tree, All):
        return all(_holds(part, row) for part in tree.parts)
    return any(_holds(part, row) for part in tree.parts)


def field_value(condition: Condition, row: Mapping[str, AnyValue]) -> AnyValue:
    """The value ``condition`` looks at in ``row`` (:data:`MISSING` for an absent key)."""
    kind = condition.field.kind
    if kind == "metadata":
        metadata = row.get("metadata")
        held = metadata if isinstance(metadata, Mapping) else {}
        return held.get(condition.field.name, MISSING)
    if kind == "id":
        return row["external_id"] or row["key"]
    if kind == "content":
        return row["text"]
    return row[kind]


def _condition(condition: Condition, row: Mapping[str, AnyValue]) -> bool:
    value = field_value(condition, row)
    op, wanted = condition.op, condition.value
    if op == "exists":
        return value is not MISSING
    if op == "empty":
        return value is MISSING or value is None or value == "" or value == []
    if value is MISSING:
        return op == "eq" and scalar_eq(None, wanted)
    if condition.field.kind == "source" and op == "eq":
        return isinstance(wanted, str) and path_match(wanted, value)
    if op == "eq":
        return _any(value, lambda each: scalar_eq(each, wanted))
    if op == "contains":
        if isinstance(value, str):
            return isinstance(wanted, str) and wanted in value
        return isinstance(value, list) and any(scalar_eq(each, wanted) for each in value)
    if op == "icontains":
        if isinstance(value, str):
            return isinstance(wanted, str) and wanted.lower() in value.lower()
        return isinstance(value, list) and any(scalar_ieq(each, wanted) for each in value)
    return _any(value, lambda each: _in_range(each, op, wanted))


def _any(value: AnyValue, test: AnyValue) -> bool:
    """``test`` of a scalar value, or of any element of a list value."""
    if isinstance(value, list):
        return any(test(each) for each in value)
    return bool(test(value))


def _in_range(value: AnyValue, op: str, bound: Bound) -> bool:
    if bound.number is not None:
        number = number_of(value)
        return number is not None and COMPARE[op](number, bound.number)
    if bound.instant is not None:
        instant = instant_of(value)
        return instant is not None and COMPARE[op](instant, bound.instant)
    return False  # a null bound: nothing is greater or less than null
