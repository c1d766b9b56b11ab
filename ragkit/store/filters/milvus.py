"""A filter as a Milvus expression over the ``C_documents`` collection: server-side, at least
as wide as the filter, values bound as template parameters.

Milvus selects candidate document rows with :func:`milvus_expression`; the store checks each
returned row with :func:`ragkit.store.filters.evaluate.matches`, so both backends select the same
documents. The expression must therefore never drop a document the filter matches; where Milvus
cannot say a condition exactly it says something wider, and under NOT something narrower (NOT
of a narrower condition is wider). What stays wider than the filter, checked on the client:

- **text that spells a number** under a numeric range (Milvus compares JSON numbers only: any
  text value is a candidate), **ISO 8601 instants** (compared as text from a day before the
  bound, or to a day after it: offsets move a date by less than a day), and **ranges over
  list-valued keys** (Milvus cannot compare list elements: every document is a candidate);
- **source globs** (``LIKE`` knows no path segments: ``*``, ``?`` and classes become ``%``);
- **``$icontains``** (``LIKE`` is case-sensitive: any text value is a candidate);
- **``$eq null``** where a key ever held null or a list (Milvus Lite's ``exists`` reads a JSON
  null as absent, Milvus's ``IS NULL`` looks at the whole JSON field: every document is a
  candidate), and typed equality where Milvus Lite reads ``1 == true`` (the check drops them);
- **content** (the text lives in ``C_texts`` in parts: every document is a candidate, and its
  text is read for the check — a content condition is slow on a large index);
- **a metadata key holding ``"``, ``'``, ``\\``, ``{``, ``}``, ``/``, ``~`` or a control character**
  (never written into an expression: every document is a candidate).

Under NOT, only conditions with a narrower form that is certain on both Milvus and Milvus Lite
(``exists``-guarded equality with text, numbers other than 0 and 1, ranges over keys only ever
holding numbers, ``LIKE`` without wildcards, columns) narrow the candidates; any other negated
condition makes every document a candidate. ``types`` — each metadata key and the JSON kinds its
values ever had, recorded by the store at each commit — lets a condition skip what no document
holds (a key never holding lists needs no element test, a key no document has matches nothing).

Values are tokens of their own (:mod:`ragkit.store.filters.expression`): bound as template
parameters for pymilvus's ``filter_params`` (Milvus ≥ 2.5), or — Milvus Lite 3 evaluates no
templates — written as literals escaped so that no value can end its string. Metadata keys are
always literals (Milvus takes no template there), and only keys without the characters above
are written at all.

Example:
    >>> expression = milvus_expression({"tags": "x", "year": {"$ne": 2020}}, {"tags": {"list"}, "year": {"number"}})
    >>> expression.template()
    ('(json_contains(metadata["tags"], {p0}) and not ((exists metadata["year"] and (metadata["year"] == {p1} or metadata["year"] == {p2}))))', {'p0': 'x', 'p1': 2020, 'p2': 2020.0})
    >>> milvus_expression({"language": 'x" or 1==1 or "'}).inline()
    'language == "x\\\\" or 1==1 or \\\\""'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any as AnyValue
from typing import TypeAlias

from ragkit.store.filters.expression import (
    Expr,
    Expression,
    Tokens,
    Value,
    all_of,
    any_of,
    none_of,
)
from ragkit.store.filters.globs import SPECIAL, like_pattern
from ragkit.store.filters.tree import (
    All,
    Bound,
    Condition,
    Filter,
    Not,
    conditions,
    parse_filter,
)
from ragkit.store.filters.values import KINDS, Scalar, spelled

__all__ = ["Types", "milvus_expression"]

Types: TypeAlias = Mapping[str, Collection[str]] | None
"""Each metadata key and the kinds (:func:`~ragkit.store.filters.values.json_kind`) of every
value it held; None: not recorded."""

SAFE_KEY = re.compile(r"[^\x00-\x1f\x7f\"'\\{}/~]+")
COLUMN = {"language": "language", "source": "source"}
OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
INT64 = 2**63
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def milvus_expression(filters: Mapping[str, AnyValue] | Filter, types: Types = None) -> Expression:
    """The Milvus expression selecting at least the documents ``filters`` match (``types``: the
    recorded kinds of each metadata key, None when the index records none).

    Raises:
        InvalidArgumentError: ``filters`` is malformed or over a limit.
    """
    tree = parse_filter(filters)
    content = any(c.field.kind == "content" for c, _ in conditions(tree))
    return Expression(_Compiler(types).wider(tree, negated=False), content)


class _Compiler:
    def __init__(self, types: Types) -> None:
        self.types = types

    def kinds(self, key: str) -> frozenset[str]:
        """The kinds a key's values ever had (all, when nothing is recorded)."""
        if self.types is None:
            return KINDS
        return frozenset(self.types.get(key, ()))

    def wider(self, tree: Filter, negated: bool) -> Expr:
        """At least the documents ``tree`` (or NOT ``tree``, when ``negated``) matches."""
        if isinstance(tree, Condition):
            return none_of(self.narrower(tree)) if negated else self.upper(tree)
        if isinstance(tree, Not):
            return self.wider(tree.part, not negated)
        parts = [self.wider(part, negated) for part in tree.parts]
        return all_of(parts) if isinstance(tree, All) != negated else any_of(parts)

    # -- at least the documents a condition matches -------------------------------------------
    def upper(self, condition: Condition) -> Expr:
        op, wanted = condition.op, condition.value
        if isinstance(wanted, Bound) and wanted.number is None and wanted.instant is None:
            return False  # a null bound: matches nothing
        if condition.field.kind != "metadata":
            return _column_upper(condition)
        ref = _ref(condition.field.name)
        if ref is None:
            return True
        kinds = self.kinds(condition.field.name)
        if op == "exists":
            if not kinds:
                return False
            return any_of([("exists ", ref), (ref, " is null") if "null" in kinds else False])
        if op == "empty":
            if kinds & {"null", "list"}:
                return True
            return any_of(
                [("not exists ", ref), (ref, " == ", Value("")) if "text" in kinds else False]
            )
        if op == "eq":
            if None in _values(wanted):
                if kinds & {"null", "list"}:
                    return True
                return any_of([("not exists ", ref), *_equal(ref, wanted, kinds)])
            return any_of(_equal(ref, wanted, kinds))
        if op in OPERATORS:
            return _range_upper(ref, op, wanted, kinds)
        if "list" in kinds and (None in _values(wanted) or op == "icontains"):
            return True  # an element null (Milvus has no null literal), or equal but for case
        alternatives = _contained(ref, wanted) if "list" in kinds else []
        if isinstance(wanted, str) and "text" in kinds:
            pattern = "%" if op == "icontains" else _infix(wanted)
            alternatives.append((ref, " like ", Value(pattern)))
        return any_of(alternatives)

    # -- at most the documents a condition matches, certain on Milvus and Milvus Lite ---------
    def narrower(self, condition: Condition) -> Expr:
        op, wanted = condition.op, condition.value
        if condition.field.kind != "metadata":
            return _column_lower(condition)
        ref = _ref(condition.field.name)
        if ref is None or op == "icontains":
            return False
        if isinstance(wanted, Bound) and wanted.number is None and wanted.instant is None:
            return False
        kinds = self.kinds(condition.field.name)
        if op == "exists":
            return ("exists ", ref)
        if op == "empty":
            return any_of(
                [("not exists ", ref), all_of([("exists ", ref), (ref, " == ", Value(""))])]
            )
        alternatives: list[Expr] = []
        if op in OPERATORS:
            if wanted.number is None or not kinds or not kinds <= {"number", "null"}:
                return False
            sign = OPERATORS[op]
            alternatives = [(ref, f" {sign} ", Value(n)) for n in _numbers(wanted.number)]
        for value in _values(wanted) if op in ("eq", "contains") else ():
            if value is None:
                continue
            if op == "eq" and _certain(value, kinds):
                alternatives += [(ref, " == ", Value(n)) for n in _forms(value)]
            if "list" in kinds and not _conflated(value):
                alternatives += [_contains(ref, n) for n in _forms(value)]
        if op == "contains" and isinstance(wanted, str) and not set(wanted) & set("%_\\"):
            alternatives.append((ref, " like ", Value(f"%{wanted}%")))
        found = all_of([("exists ", ref), any_of(alternatives)])
        if op == "eq" and None in _values(wanted):
            return any_of([found, ("not exists ", ref)])
        return found


def _ref(key: str) -> str | None:
    """``metadata["key"]``, or None for a key never written into an expression."""
    return f'metadata["{key}"]' if SAFE_KEY.fullmatch(key) else None


def _values(wanted: Scalar) -> list[Scalar]:
    """``wanted`` and what it spells (text ``"2020"`` also means the number 2020)."""
    return [wanted, *spelled(wanted)] if isinstance(wanted, str) else [wanted]


def _forms(value: Scalar) -> list[str | int | float | bool]:
    """How Milvus may hold a value: a whole number as an integer and as a float."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return list(_numbers(float(value)))
    return [value]  # type: ignore[list-item]


def _numbers(number: float) -> tuple[int | float, ...]:
    if number.is_integer() and abs(number) < INT64:
        return int(number), number
    return (number,)


def _conflated(value: Scalar) -> bool:
    """Whether Milvus Lite may read ``value`` as equal to a bool, or a bool as a number
    (Python's ``1 == True``)."""
    return isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1))


def _certain(value: Scalar, kinds: frozenset[str]) -> bool:
    """Whether ``metadata[k] == value`` holds only where the typed equality does."""
    if isinstance(value, bool):
        return "number" not in kinds
    if isinstance(value, int | float):
        return value not in (0, 1) or "bool" not in kinds
    return True


def _equal(ref: str, wanted: Scalar, kinds: frozenset[str]) -> list[Expr]:
    """Expressions, one of which holds where the key's value, or an element, equals
    ``wanted`` (or what it spells)."""
    found: list[Expr] = []
    for value in _values(wanted):
        if value is None:
            continue
        kind = "bool" if isinstance(value, bool) else "text" if isinstance(value, str) else "number"
        if kind in kinds:
            found += [(ref, " == ", Value(form)) for form in _forms(value)]
        if "list" in kinds:
            found += [_contains(ref, form) for form in _forms(value)]
    return found


def _contained(ref: str, wanted: Scalar) -> list[Expr]:
    """Expressions, one of which holds where a list value holds ``wanted`` (or what it
    spells, but null)."""
    return [_contains(ref, form) for value in _values(wanted) if value is not None
            for form in _forms(value)]  # fmt: skip


def _contains(ref: str, value: str | float | bool) -> Tokens:
    return ("json_contains(", ref, ", ", Value(value), ")")


def _infix(text: str) -> str:
    """A ``LIKE`` pattern matching text that contains ``text`` (a backslash, Milvus's escape,
    becomes ``%``; ``%`` and ``_`` stay wildcards: wider still)."""
    return "%" + text.replace("\\", "%") + "%"


def _range_upper(ref: str, op: str, bound: Bound, kinds: frozenset[str]) -> Expr:
    if "list" in kinds:
        return True
    if bound.number is not None:
        sign = OPERATORS[op]
        alternatives: list[Expr] = []
        if "number" in kinds:
            alternatives += [(ref, f" {sign} ", Value(n)) for n in _numbers(bound.number)]
        if "text" in kinds:
            alternatives.append((ref, " like ", Value("%")))  # text spelling a number
        return any_of(alternatives)
    if "text" not in kinds or bound.instant is None:
        return False
    day = (_EPOCH + timedelta(microseconds=bound.instant)).date()
    try:
        if op in ("gt", "gte"):
            return (ref, " >= ", Value((day - timedelta(days=1)).isoformat()))
        return (ref, " < ", Value((day + timedelta(days=2)).isoformat()))
    except OverflowError:  # a bound within a day of year 1 or 9999
        return True


def _column(kind: str, test: Callable[[str], Tokens]) -> Tokens:
    """``test`` of a column: ``id`` is ``external_id``, else ``key``."""
    if kind != "id":
        return test(COLUMN[kind])
    given = all_of([("external_id != ", Value("")), test("external_id")])
    return any_of([given, all_of([("external_id == ", Value("")), test("key")])])  # type: ignore[return-value]


def _column_upper(condition: Condition) -> Expr:
    kind, op, wanted = condition.field.kind, condition.op, condition.value
    if op == "exists" or op in OPERATORS:
        return True  # a column is always there; ranges over text are checked on the client
    if op == "empty":
        return _column(kind, lambda column: (column, " == ", Value("")))
    if not isinstance(wanted, str):
        return False  # a column holds text
    if kind == "content" or op == "icontains":
        return True
    if op == "contains":
        return _column(kind, lambda column: (column, " like ", Value(_infix(wanted))))
    if kind == "source":
        return ("source like ", Value(like_pattern(wanted)))
    return _column(kind, lambda column: (column, " == ", Value(wanted)))


def _column_lower(condition: Condition) -> Expr:
    kind, op, wanted = condition.field.kind, condition.op, condition.value
    if op == "exists":
        return True
    if op == "empty":
        return _column(kind, lambda column: (column, " == ", Value("")))
    if kind == "content" or op not in ("eq", "contains") or not isinstance(wanted, str):
        return False
    if op == "contains":
        if set(wanted) & set("%_\\"):
            return False
        return _column(kind, lambda column: (column, " like ", Value(f"%{wanted}%")))
    if kind == "source" and set(wanted) & set(SPECIAL):
        return False  # a glob: equality is only part of it
    return _column(kind, lambda column: (column, " == ", Value(wanted)))
