"""ragkit's filter language: one native form for ``Index.search(filters=…)``,
``SearchOptions.filters``, ``POST /search``, ``--filter`` and the frameworks' dialects, with the
same answers on the folder store (SQL) and on Milvus (an expression, then an exact check).

A filter is a dict whose entries all hold (``{}``: every document)::

    filter    := { entry, ... }
    entry     := field: condition | "$and": [filter, ...] | "$or": [filter, ...] | "$not": filter
    field     := "language" | "source" (a glob) | "id" (the record's id, else the key)
               | "content" (the text: $eq $ne $in $nin $contains $icontains; may be slow)
               | any other name: a top-level metadata key ("meta.<name>": a key named like a field)
    condition := scalar | [condition, ...] (any of them) | {op: operand, ...} (all of them)
    op        := $eq $ne $in $nin $gt $gte $lt $lte $exists $contains $icontains
                 (also == != > >= < <=)

- ``$eq v`` is typed: text ``"2020"`` also matches the number 2020 (and ``"true"`` the bool,
  ``"null"`` null), a number only numbers; a list value matches when any element does;
  ``$eq null`` matches null or a missing key. ``$ne`` is NOT ``$eq`` (a document lacking the key
  matches), ``$in [..]`` any ``$eq`` (``[]``: none), ``$nin`` NOT ``$in``.
- ``$gt $gte $lt $lte b``: a number (or text spelling one) compares numeric values and text
  spelling a number; ISO 8601 date or date-time text compares ISO values as instants (naive =
  UTC); a null bound matches nothing; any other bound is refused. A list: any element.
- ``$exists true|false``: the key is present (even null) / absent.
- ``$contains v``: a list with an element equal to ``v``, or text holding ``v``;
  ``$icontains``: the same ignoring case.
- Limits: :data:`MAX_VALUES` values in all, :data:`MAX_DEPTH` levels, globs of
  :data:`MAX_GLOB_CHARS` characters. A filter breaking one, or the grammar, is an
  :class:`~ragkit.errors.InvalidArgumentError` (exit 2, HTTP 422) naming the key and operator.
- When nothing matched, a positive condition on a metadata key no document has is an error
  naming the known keys (:func:`check_known`): a mistyped key says so.

Modules: :mod:`~.tree` (:func:`parse_filter`, the typed tree), :mod:`~.values` (typed
equality, numbers, instants), :mod:`~.globs`, :mod:`~.evaluate` (:func:`matches`, the
reference), :mod:`~.sql` (:func:`where_clause`, the folder store), :mod:`~.milvus`
(:func:`milvus_expression`; what stays on the client and why) over :mod:`~.expression`
(tokens, template parameters, escaped literals).

Example:
    >>> row = {"language": "en", "source": "/d/a.md", "key": "/d/a.md", "external_id": "",
    ...        "metadata": {"tags": ["x", "y"], "year": 2019}}
    >>> matches({"$or": [{"tags": {"$contains": "y"}}, {"year": {"$gte": 2020}}]}, row)
    True
    >>> where_clause({"$not": {"language": "ar"}})
    ('NOT (d.language = ?)', ['ar'])
"""

from ragkit.store.filters.evaluate import matches
from ragkit.store.filters.expression import Expression
from ragkit.store.filters.globs import MAX_GLOB_CHARS, like_pattern, path_glob, path_match
from ragkit.store.filters.milvus import milvus_expression
from ragkit.store.filters.sql import where_clause
from ragkit.store.filters.tree import (
    MAX_DEPTH,
    MAX_VALUES,
    Filter,
    check_known,
    parse_filter,
    positive_keys,
    unknown_keys,
)
from ragkit.store.filters.values import instant_of, json_kind, lower_text, number_of

__all__ = [
    "MAX_DEPTH",
    "MAX_GLOB_CHARS",
    "MAX_VALUES",
    "Expression",
    "Filter",
    "check_known",
    "instant_of",
    "json_kind",
    "like_pattern",
    "lower_text",
    "matches",
    "milvus_expression",
    "number_of",
    "parse_filter",
    "path_glob",
    "path_match",
    "positive_keys",
    "unknown_keys",
    "where_clause",
]
