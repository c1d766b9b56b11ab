"""A filter parsed: a typed tree of conditions joined by AND, OR and NOT, its limits checked.

:func:`parse_filter` reads the native form (:mod:`ragkit.store.filters` states the language)
into :data:`Filter`: a :class:`Condition` on one :class:`Field`, or :class:`All`, :class:`Any`,
:class:`Not` of filters. Negative operators become NOT of a positive one (``$ne`` is NOT
``$eq``, ``$nin`` NOT ``$in``, ``$exists false`` NOT ``$exists true``) and ``$in`` an
:class:`Any` of ``$eq``, so each backend compiles six conditions and three joins. A filter
that breaks a limit or the grammar is an :class:`~ragkit.errors.InvalidArgumentError` naming
the key and the operator (exit 2, HTTP 422).

Example:
    >>> parse_filter({"year": {"$ne": 2020}})
    Not(part=Condition(field=Field(kind='metadata', name='year'), op='eq', value=2020))
    >>> parse_filter({"tags": ["x", "y"]}).parts[1]
    Condition(field=Field(kind='metadata', name='tags'), op='eq', value='y')
    >>> parse_filter({"year": {"$gt": "1"}}).value, parse_filter({"date": {"<": "1970-01-02"}}).value
    (Bound(number=1.0, instant=None), Bound(number=None, instant=86400000000))
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any as AnyValue
from typing import Literal, TypeAlias, cast

from ragkit.errors import InvalidArgumentError
from ragkit.normalize.unicode import text_only
from ragkit.store.filters.globs import check_glob
from ragkit.store.filters.values import NUMBER, Scalar, instant_of, is_scalar

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "All",
    "Any",
    "Bound",
    "Condition",
    "Field",
    "Filter",
    "Not",
    "check_known",
    "conditions",
    "parse_filter",
    "positive_keys",
    "unknown_keys",
]

MAX_VALUES = 200  # values (and bounds) of all conditions together
MAX_DEPTH = 32  # filters within filters
COLUMNS = ("language", "source", "id", "content")
METADATA_PREFIX = "meta."
OPERATORS = {
    "$eq": "eq", "==": "eq", "$ne": "ne", "!=": "ne", "$in": "in", "$nin": "nin",
    "$gt": "gt", ">": "gt", "$gte": "gte", ">=": "gte", "$lt": "lt", "<": "lt",
    "$lte": "lte", "<=": "lte", "$exists": "exists", "$empty": "empty",
    "$contains": "contains", "$icontains": "icontains",
}  # fmt: skip
OPERATOR_NAMES = "$eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists, $empty, $contains, $icontains"
LOGIC = ("$and", "$or", "$not")
RANGES = ("gt", "gte", "lt", "lte")
CONTENT_OPERATORS = ("eq", "ne", "in", "nin", "contains", "icontains")
EXAMPLE = '{"language": "ar", "year": {"$gte": 2000}}'

Op = Literal["eq", "gt", "gte", "lt", "lte", "exists", "empty", "contains", "icontains"]
Kind = Literal["language", "source", "id", "content", "metadata"]


@dataclass(frozen=True)
class Field:
    """What a condition looks at: a column (``language``, ``source``, ``id``: the record's id,
    else the key; ``content``: the document's text) or a top-level ``metadata`` key."""

    kind: Kind
    name: str


@dataclass(frozen=True)
class Bound:
    """A range's bound: a number, or an instant (microseconds since 1970 UTC), or neither
    (null: the range matches nothing)."""

    number: float | None = None
    instant: int | None = None


@dataclass(frozen=True)
class Condition:
    """One condition: ``eq`` (a scalar), ``gt``/``gte``/``lt``/``lte`` (a :class:`Bound`),
    ``exists`` and ``empty`` (True), ``contains``/``icontains`` (a scalar)."""

    field: Field
    op: Op
    value: AnyValue


@dataclass(frozen=True)
class All:
    """Every part holds (none: always)."""

    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Any:
    """Some part holds (none: never)."""

    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Not:
    """The part does not hold."""

    part: Filter


Filter: TypeAlias = Condition | All | Any | Not


def parse_filter(filters: Mapping[str, AnyValue] | Filter) -> Filter:
    """The typed tree of a native filter (a parsed one is returned as it is).

    Raises:
        InvalidArgumentError: a malformed filter, an unknown operator, a value of the wrong
            type, or a limit broken (:data:`MAX_VALUES`, :data:`MAX_DEPTH`, a glob's length).

    Example:
        >>> parse_filter({"$or": [{"language": "ar"}, {"tags": {"$contains": "x"}}]})
        Any(parts=(Condition(field=Field(kind='language', name='language'), op='eq', value='ar'), Condition(field=Field(kind='metadata', name='tags'), op='contains', value='x')))
    """
    if isinstance(filters, Condition | All | Any | Not):
        return filters
    if not isinstance(filters, Mapping):
        raise InvalidArgumentError(
            f"filters={filters!r:.60}: give a dict of field → condition, e.g. {EXAMPLE}"
        )
    given = _count(filters, 0)
    if given > MAX_VALUES:
        raise InvalidArgumentError(
            f"filters with {given:,} values: at most {MAX_VALUES} in all; narrow them (a source "
            "glob such as 'docs/**/*.md' stands for many sources)"
        )
    return _filter(filters)


def _count(value: AnyValue, depth: int) -> int:
    """The values in ``value`` (scalars anywhere), refusing nesting over :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        raise InvalidArgumentError(
            f"filters nested over {MAX_DEPTH} deep: give a flatter filter (an $and or $or "
            "takes any number of filters)"
        )
    if isinstance(value, Mapping):
        return sum(_count(part, depth + 1) for part in value.values())
    if isinstance(value, list):
        return sum(_count(part, depth + 1) for part in value)
    return 1


def _filter(filters: Mapping[str, AnyValue]) -> Filter:
    parts = [_entry(key, value) for key, value in filters.items()]
    return parts[0] if len(parts) == 1 else All(tuple(parts))


def _entry(key: AnyValue, value: AnyValue) -> Filter:
    if not isinstance(key, str):
        raise InvalidArgumentError(f"filter key {key!r}: name a field (text)")
    if key in LOGIC:
        return _logic(key, value)
    if key.startswith("$"):
        raise InvalidArgumentError(
            f"filter {key!r}: no such operator; join filters with $and, $or, $not, or compare "
            f"a field with {OPERATOR_NAMES}"
        )
    field = _field(key)
    return _conditions(field, key, value)


def _logic(key: str, value: AnyValue) -> Filter:
    if key == "$not":
        if not isinstance(value, Mapping):
            raise InvalidArgumentError(
                f"filter $not {value!r:.60}: give one filter (a dict), e.g. "
                '{"$not": {"year": 2020}}'
            )
        return Not(_filter(value))
    if not isinstance(value, list) or not all(isinstance(part, Mapping) for part in value):
        raise InvalidArgumentError(
            f"filter {key} {value!r:.60}: give a list of filters (dicts), e.g. "
            f'{{"{key}": [{{"year": 2020}}, {{"language": "ar"}}]}}'
        )
    parts = tuple(_filter(part) for part in value)
    return All(parts) if key == "$and" else Any(parts)


def _field(key: str) -> Field:
    key = text_only(key)  # lone surrogates (undecodable argv bytes) match nothing
    if key in COLUMNS:
        return Field(cast(Kind, key), key)
    return Field("metadata", key.removeprefix(METADATA_PREFIX))


def _conditions(field: Field, key: str, value: AnyValue) -> Filter:
    """A field's condition: a value, a list (any of its items), or a dict of operators (all)."""
    if isinstance(value, list):
        return Any(tuple(_conditions(field, key, item) for item in value))
    if not isinstance(value, Mapping):
        return _eq(field, key, "$eq", value)
    if not value:
        raise InvalidArgumentError(
            f"filter {key!r}: an empty operator dict; give a value, or e.g. "
            f'{{"{key}": {{"$gte": 2000}}}}'
        )
    parts = [_operator(field, key, operator, operand) for operator, operand in value.items()]
    return parts[0] if len(parts) == 1 else All(tuple(parts))


def _operator(field: Field, key: str, operator: AnyValue, operand: AnyValue) -> Filter:
    op = OPERATORS.get(operator) if isinstance(operator, str) else None
    if op is None:
        raise InvalidArgumentError(
            f"filter {key!r}: no operator {operator!r}; use {OPERATOR_NAMES} (ranges also as "
            ">, >=, <, <=)"
        )
    if field.kind == "content" and op not in CONTENT_OPERATORS:
        raise InvalidArgumentError(
            f"filter content {operator}: the content field takes $eq, $ne, $in, $nin, $contains "
            "and $icontains"
        )
    if field.kind == "source" and op in RANGES:
        raise InvalidArgumentError(
            f"filter source {operator}: source is matched by globs ($eq, $ne, $in, $nin) or "
            "$contains, not compared"
        )
    if op in ("eq", "ne"):
        matched = _eq(field, key, operator, operand)
        return Not(matched) if op == "ne" else matched
    if op in ("in", "nin"):
        if not isinstance(operand, list):
            raise InvalidArgumentError(
                f"filter {key!r} {operator}: give a list of values, not {type(operand).__name__}"
            )
        found = Any(tuple(_eq(field, key, operator, item) for item in operand))
        return Not(found) if op == "nin" else found
    if op in ("exists", "empty"):
        if not isinstance(operand, bool):
            raise InvalidArgumentError(f"filter {key!r} {operator}: give true or false")
        holds = Condition(field, cast(Op, op), True)
        return holds if operand else Not(holds)
    if op in RANGES:
        return Condition(field, cast(Op, op), _bound(key, operator, operand))
    if not is_scalar(operand):
        raise InvalidArgumentError(
            f"filter {key!r} {operator} {operand!r:.60}: give text, a number, a bool or null"
        )
    return Condition(field, cast(Op, op), _scalar(operand))


def _eq(field: Field, key: str, operator: str, value: AnyValue) -> Condition:
    if isinstance(value, list):
        raise InvalidArgumentError(
            f"filter {key!r} {operator} {value!r:.60}: compare with text, a number, a bool or "
            "null ($in takes a list of them)"
        )
    if not is_scalar(value):
        raise InvalidArgumentError(
            f"filter {key!r}: match a string or a number, not {type(value).__name__}"
        )
    value = _scalar(value)
    if field.kind == "source" and isinstance(value, str):
        check_glob(value)
    return Condition(field, "eq", value)


def _scalar(value: Scalar) -> Scalar:
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgumentError(
            "filters: NaN and Infinity are no JSON numbers; give finite numbers"
        )
    return text_only(value) if isinstance(value, str) else value


def _bound(key: str, operator: str, bound: AnyValue) -> Bound:
    """A range's bound: a finite number, text spelling one, ISO 8601 text, or null."""
    if bound is None:
        return Bound()
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        _scalar(bound)  # refuses NaN and Infinity
        return Bound(number=float(bound))
    if isinstance(bound, str):
        if NUMBER.fullmatch(bound.strip()):
            return Bound(number=float(bound.strip()))
        if (instant := instant_of(bound)) is not None:
            return Bound(instant=instant)
    raise InvalidArgumentError(
        f"filter {key}{operator}{bound!r:.60}: compare with a number or an ISO 8601 date "
        "(e.g. 2020-01-31 or 2020-01-31T12:00:00Z)"
    )


def conditions(tree: Filter, positive: bool = True) -> Iterator[tuple[Condition, bool]]:
    """Every condition of ``tree`` with whether it is positive (under an even number of
    NOTs)."""
    if isinstance(tree, Condition):
        yield tree, positive
    elif isinstance(tree, Not):
        yield from conditions(tree.part, not positive)
    else:
        for part in tree.parts:
            yield from conditions(part, positive)


def positive_keys(filters: Mapping[str, AnyValue] | Filter) -> list[str]:
    """The metadata keys a positive condition names (one a document lacking the key cannot
    meet: ``$eq null`` and negations do not count), in order.

    Example:
        >>> positive_keys({"year": 2020, "draft": {"$ne": True}, "x": None, "language": "ar"})
        ['year']
    """
    keys = [
        condition.field.name
        for condition, positive in conditions(parse_filter(filters))
        if positive
        and condition.field.kind == "metadata"
        and condition.op != "empty"
        and not (condition.op == "eq" and condition.value in (None, "null"))
    ]
    return list(dict.fromkeys(keys))


def unknown_keys(filters: Mapping[str, AnyValue] | Filter, known: set[str]) -> list[str]:
    """The metadata keys a positive condition names that no document has (``known``: the keys
    documents have).

    Example:
        >>> unknown_keys({"language": "ar", "yaer": 2020, "meta.year": 1}, {"year"})
        ['yaer']
    """
    return [key for key in positive_keys(filters) if key not in known]


def check_known(filters: Mapping[str, AnyValue] | Filter, known: set[str]) -> None:
    """Refuse filters naming a metadata field no document has (``known``): called when a
    filter matched nothing, so that a mistyped key says so instead of returning nothing.

    Example:
        >>> check_known({"yaer": 2020}, {"year"})
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: filter 'yaer': no document has that metadata field; filter on language, source, id, content or year
    """
    if unknown := unknown_keys(filters, known):
        raise InvalidArgumentError(
            f"filter {', '.join(map(repr, unknown))}: no document has that metadata field; "
            f"filter on language, source, id, content or {', '.join(sorted(known)) or '(none)'}"
        )
