"""Haystack filters as ragkit filters: the dialect translation every Haystack component of
ragkit (retriever, document store) applies.

Example:
    >>> haystack_filters({"field": "meta.year", "operator": ">=", "value": 2000})
    {'year': {'>=': 2000}}
"""

from collections.abc import Iterator, Mapping
from typing import Any

from ragkit.errors import RagkitError
from ragkit.integrations.common import build_filters

FIELDS = {"meta.file_path": "source", "meta.language": "language", "meta.source": "meta.source"}


def _key(field: str) -> str:
    """The ragkit filter key of a Haystack ``meta.*`` field."""
    return FIELDS.get(field, field.removeprefix("meta."))


def haystack_filters(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Haystack filters as a ragkit filter (:mod:`ragkit.store.filters`).

    Comparisons (``{"field": "meta.year", "operator": ">=", "value": 2000}``) with ``==``,
    ``in``, ``>``, ``>=``, ``<``, ``<=``, joined by ``AND`` (or an ``OR`` of ``==`` / ``in`` on
    one field), translate. ``meta.file_path`` is the document's path (a glob),
    ``meta.language`` its language, any other ``meta.*`` field its metadata. A dict without
    ``operator`` (nor ``field`` or ``conditions``) is taken as a ragkit filter as it is. A
    malformed filter (no ``value``, no ``operator``, ``conditions`` that are not a list of
    conditions, a value of the wrong type, an operator ragkit does not offer) is a
    :class:`RagkitError`, never an empty result.

    Example:
        >>> haystack_filters({"operator": "AND", "conditions": [
        ...     {"field": "meta.year", "operator": ">=", "value": 2000},
        ...     {"field": "meta.language", "operator": "==", "value": "ar"},
        ... ]})
        {'year': {'>=': 2000}, 'language': 'ar'}
    """
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise RagkitError(f"filters={filters!r:.60}: give Haystack filters (a dict)")
    if "operator" not in filters:
        if {"field", "conditions"} & set(filters):
            raise RagkitError(
                f"Haystack filters {dict(filters)!r:.60}: no 'operator' (a comparison has field, "
                "operator and value; a logic filter operator and conditions)"
            )
        return dict(filters)
    return build_filters(_conditions(filters), "Haystack")


def _conditions(filters: Any) -> Iterator[tuple[str, str, Any]]:
    if not isinstance(filters, Mapping) or "operator" not in filters:
        raise RagkitError(
            f"Haystack filter {filters!r:.60}: a condition is a dict with field, operator and "
            "value, or with operator and conditions"
        )
    operator = filters["operator"]
    if "conditions" not in filters:
        field = filters.get("field")
        if not isinstance(field, str) or not field.startswith("meta."):
            raise RagkitError(
                f"Haystack filter on {field!r}: ragkit filters on meta.* fields (content and "
                "id are not filtered)"
            )
        if "value" not in filters:
            raise RagkitError(
                f"Haystack filter on {field!r}: no 'value' (a comparison has field, operator "
                "and value)"
            )
        yield _key(field), str(operator), filters["value"]
        return
    conditions = filters["conditions"]
    if not isinstance(conditions, list | tuple):
        raise RagkitError(
            f"Haystack filter {operator!r}: 'conditions' is a list of conditions, not "
            f"{type(conditions).__name__}"
        )
    if operator == "AND":
        for condition in conditions:
            yield from _conditions(condition)
        return
    if operator == "OR" and all(
        isinstance(c, Mapping) and c.get("operator") in ("==", "in") for c in conditions
    ):
        pairs = [next(_conditions(c)) for c in conditions]  # each field checked
        if len({key for key, _, _ in pairs}) == 1:
            values: list[Any] = []
            for _, kind, value in pairs:
                values.extend(value if kind == "in" else [value])
            yield pairs[0][0], "in", values
            return
    raise RagkitError(
        f"Haystack filters: ragkit joins conditions with AND ({operator!r} given; OR only "
        "among == / in conditions on one field)"
    )
