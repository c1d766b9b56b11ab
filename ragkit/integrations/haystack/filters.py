"""Haystack filters as ragkit filters: the dialect translation every Haystack component of
ragkit (retriever, document store) applies, and the error a filter ragkit cannot apply raises.

Example:
    >>> haystack_filters({"field": "meta.year", "operator": ">=", "value": 2000})
    {'year': {'$gte': 2000}}
"""

from collections.abc import Mapping
from typing import Any

from haystack.errors import FilterError

from ragkit.errors import InvalidArgumentError
from ragkit.integrations.common import checked_filter
from ragkit.store.filters import instant_of

FIELDS = {"meta.file_path": "source", "meta.language": "language", "meta.source": "meta.source"}
COMPARISONS = {"==": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte",
               "in": "$in", "not in": "$nin"}  # fmt: skip
RANGES = (">", ">=", "<", "<=")


class HaystackFilterError(InvalidArgumentError, FilterError):
    """A Haystack filter ragkit cannot apply: a ragkit error (exit 2, HTTP 422) that is also
    Haystack's ``FilterError``, as Haystack's document stores raise it."""


def _key(field: Any) -> str:
    """The ragkit filter key of a Haystack field: ``content``, ``id`` or ``meta.*``."""
    if field in ("content", "id"):
        return field
    if not isinstance(field, str) or not field.startswith("meta."):
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: ragkit filters on content, id and meta.* fields"
        )
    return FIELDS.get(field, field.removeprefix("meta."))


def haystack_filters(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Haystack filters as a ragkit filter (:mod:`ragkit.store.filters`).

    Comparisons (``{"field": "meta.year", "operator": ">=", "value": 2000}``) with ``==``,
    ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in``, ``not in``, joined by ``AND``, ``OR`` and
    ``NOT`` (none… of its conditions all hold) to any depth, translate with Haystack's
    semantics: ``== None`` matches a missing field too, ``!=`` and ``not in`` match documents
    lacking the field, a comparison takes a number or an ISO 8601 date (text that is neither,
    or a list, is refused), ``in`` and ``not in`` take a list. ``content`` is the document's
    text, ``id`` its id, ``meta.file_path`` its path (a glob), ``meta.language`` its language,
    any other ``meta.*`` field its metadata. A dict without ``operator`` (nor ``field`` or
    ``conditions``) is taken as a ragkit filter as it is. A filter ragkit cannot apply is a
    :class:`HaystackFilterError` — a :class:`RagkitError` and Haystack's ``FilterError`` —
    never an empty result.

    Example:
        >>> haystack_filters({"operator": "NOT", "conditions": [
        ...     {"field": "meta.year", "operator": ">=", "value": 2000},
        ...     {"field": "meta.language", "operator": "in", "value": ["ar", "fa"]},
        ... ]})
        {'$not': {'$and': [{'year': {'$gte': 2000}}, {'language': {'$in': ['ar', 'fa']}}]}}
    """
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise HaystackFilterError(f"filters={filters!r:.60}: give Haystack filters (a dict)")
    if "operator" not in filters:
        if {"field", "conditions"} & set(filters):
            raise HaystackFilterError(
                f"Haystack filters {dict(filters)!r:.60}: no 'operator' (a comparison has field, "
                "operator and value; a logic filter operator and conditions)"
            )
        translated = dict(filters)  # a ragkit filter
    else:
        translated = _translated(filters)
    try:
        return checked_filter(translated, "Haystack")
    except InvalidArgumentError as error:
        raise HaystackFilterError(str(error)) from None


def _translated(filters: Any) -> dict[str, Any]:
    if not isinstance(filters, Mapping) or "operator" not in filters:
        raise HaystackFilterError(
            f"Haystack filter {filters!r:.60}: a condition is a dict with field, operator and "
            "value, or with operator and conditions"
        )
    operator = filters["operator"]
    if "conditions" not in filters:
        return _comparison(filters, operator)
    conditions = filters["conditions"]
    if not isinstance(conditions, list):
        raise HaystackFilterError(
            f"Haystack filter {operator!r}: 'conditions' is a list of conditions, not "
            f"{type(conditions).__name__}"
        )
    if operator not in ("AND", "OR", "NOT"):
        raise HaystackFilterError(
            f"Haystack filter {operator!r}: join conditions with AND, OR or NOT"
        )
    parts = [_translated(condition) for condition in conditions]
    if operator == "NOT":  # Haystack: NOT of all the conditions together
        return {"$not": {"$and": parts}}
    return {"$and" if operator == "AND" else "$or": parts}


def _comparison(filters: Mapping[str, Any], operator: Any) -> dict[str, Any]:
    if "field" not in filters:
        raise HaystackFilterError(
            f"Haystack filter {dict(filters)!r:.60}: a condition has field, operator and value"
        )
    field = filters["field"]
    key = _key(field)
    if "value" not in filters:
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: no 'value' (a comparison has field, operator and value)"
        )
    value = filters["value"]
    if operator not in COMPARISONS:
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: operator {operator!r}; use {', '.join(COMPARISONS)}"
        )
    if operator in RANGES and not _comparable(value):
        raise HaystackFilterError(
            f"Haystack filter {field} {operator} {value!r:.60}: compare with a number or an "
            "ISO 8601 date"
        )
    if operator in ("in", "not in") and not isinstance(value, list):
        raise HaystackFilterError(
            f"Haystack filter {field} {operator} {value!r:.60}: give a list of values"
        )
    return {key: {COMPARISONS[operator]: value}}


def _comparable(value: Any) -> bool:
    """What Haystack compares with ``>``…: a number, ISO 8601 text, or None (nothing)."""
    if value is None or isinstance(value, str) and instant_of(value) is not None:
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)
