"""Search filters as SQL over the ``documents`` table: typed values, OR within a key, globs
that respect path segments.

A filter maps a key to a value or a list of values (any of them matches; keys must all
match). ``language`` and ``source`` are columns, any other key a top-level metadata field.
``source`` takes a glob in which ``*`` and ``?`` stay inside one path segment, ``**`` crosses
segments and ``[...]`` is a character class (``docs/*.txt`` does not match ``docs/sub/a.txt``;
``docs/**/*.txt`` matches both); a relative glob matches the end of a path, whole segments
(``*.md`` any Markdown file, ``docs/*.txt`` also ``/home/me/docs/a.txt``), an absolute one
the whole path. A value given as text — the command line gives nothing else —
matches text equal to it, and also the number, ``true``/``false`` or ``null`` it spells
(``year=2020`` finds ``{"year": 2020}``); a number, bool or None matches only its own type.

A metadata field named like a column (``source``, ``language``) is reached as ``meta.source``.
A range is a mapping of comparisons to numbers (``{"year": {">=": 1990, "<": 2000}}``; the
command line writes ``year>=1990``) and matches numeric fields and text that spells a number
(CSV and TSV cells are text: ``"2019"``).

Filters are a user's input, refused as such (a :class:`RagkitError`: exit 2, HTTP 422) where
SQLite could not evaluate them: more than :data:`MAX_VALUES` values in all, or a glob over
:data:`MAX_GLOB_CHARS` characters (longer than any path).

Example:
    >>> path_match("docs/*.txt", "docs/sub/a.txt"), path_match("docs/**/*.txt", "docs/sub/a.txt")
    (False, True)
    >>> where_clause({"year": ["2020", 2021]})[1]  # the parameters: "2020" as text and number
    ['year', '2020', 2020, 'year', 2021]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from ragkit.errors import InvalidArgumentError
from ragkit.normalize.unicode import text_only

Scalar = str | int | float | bool | None
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
MAX_VALUES = 200  # values (and ranges) of all keys together: SQLite nests each in its OR/AND
MAX_GLOB_CHARS = 4096  # a path's longest; SQLite refuses GLOB patterns over 50,000 bytes


def where_clause(filters: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """The SQL condition on ``documents d`` that ``filters`` ask for, and its parameters.

    A value that is neither a scalar nor a list of scalars, or more than :data:`MAX_VALUES`
    values in all, is a :class:`RagkitError`.
    """
    given = sum(len(w) if isinstance(w, list | tuple) else 1 for w in filters.values())
    if given > MAX_VALUES:
        raise InvalidArgumentError(
            f"filters with {given:,} values: at most {MAX_VALUES} in all; narrow them (a source "
            "glob such as 'docs/**/*.md' stands for many sources)"
        )
    clauses: list[str] = []
    values: list[Any] = []
    for key, wanted in filters.items():
        choices = list(wanted) if isinstance(wanted, list | tuple) else [wanted]
        key = text_only(str(key))  # lone surrogates (undecodable argv bytes) match nothing
        alternatives = []
        for value in choices:
            if isinstance(value, Mapping):
                sql, parameters = _range(key, value)
                alternatives.append(sql)
                values.extend(parameters)
                continue
            if value is not None and not isinstance(value, str | int | float):
                raise InvalidArgumentError(
                    f"filter {key!r}: match a string or a number, not {type(value).__name__}"
                )
            value = text_only(value) if isinstance(value, str) else value
            sql, parameters = _match(key, value)
            alternatives.append(sql)
            values.extend(parameters)
        clauses.append("(" + " OR ".join(alternatives or ["0"]) + ")")
    return " AND ".join(clauses) or "1", values


COMPARISONS = {">": ">", ">=": ">=", "<": "<", "<=": "<="}
METADATA_PREFIX = "meta."


def metadata_key(key: str) -> str | None:
    """The metadata field a filter key names, or None for a column (``language``, ``source``).

    Example:
        >>> metadata_key("year"), metadata_key("source"), metadata_key("meta.source")
        ('year', None, 'source')
    """
    if key in ("language", "source"):
        return None
    return key.removeprefix(METADATA_PREFIX)


def _range(key: str, bounds: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """A numeric metadata field within ``bounds`` (comparison → number)."""
    field = metadata_key(key)
    conditions, parameters = [], []
    for operator, bound in bounds.items():
        if operator not in COMPARISONS or isinstance(bound, bool):
            raise InvalidArgumentError(
                f"filter {key!r}: a range compares with {', '.join(COMPARISONS)}, not {operator!r}"
            )
        if not isinstance(bound, int | float):
            if not isinstance(bound, str) or not _NUMBER.fullmatch(bound):
                raise InvalidArgumentError(
                    f"filter {key}{operator}{bound}: a range bound is a number"
                )
            bound = float(bound)
        conditions.append(f"number_of(m.value) {COMPARISONS[operator]} ?")
        parameters.append(bound)
    if field is None or not conditions:
        raise InvalidArgumentError(f"filter {key!r}: ranges apply to numeric metadata fields")
    sql = (
        "EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? AND "
        f"m.type IN ('integer', 'real', 'text') AND {' AND '.join(conditions)})"
    )
    return sql, [field, *parameters]


def _match(key: str, value: Scalar) -> tuple[str, list[Any]]:
    """One ``key = value`` condition and its parameters."""
    if key == "language":
        return "d.language = ?", [value]
    if key == "source":
        return path_glob("d.source", str(value))
    key = key.removeprefix(METADATA_PREFIX)
    kinds, parameters = _value_kinds(value)
    condition = " OR ".join(kinds)
    return (
        f"EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? AND ({condition}))",
        [key, *parameters],
    )


def _value_kinds(value: Scalar) -> tuple[list[str], list[Any]]:
    """Conditions on a metadata entry ``m`` (``json_each`` row) that ``value`` matches."""
    if value is None:
        return ["m.type = 'null'"], []
    if isinstance(value, bool):
        return [f"m.type = '{str(value).lower()}'"], []
    if isinstance(value, int | float):
        return ["(m.type IN ('integer', 'real') AND m.value = ?)"], [value]
    kinds: list[str] = ["(m.type = 'text' AND m.value = ?)"]
    parameters: list[Any] = [value]
    if _NUMBER.fullmatch(value):
        kinds.append("(m.type IN ('integer', 'real') AND m.value = ?)")
        parameters.append(float(value) if any(c in value for c in ".eE") else int(value))
    elif value in ("true", "false", "null"):
        kinds.append(f"m.type = '{value}'")
    return kinds, parameters


def path_glob(column: str, pattern: str) -> tuple[str, list[Any]]:
    """The SQL condition that ``column`` matches the glob ``pattern`` (:func:`path_match`),
    with a SQLite GLOB as a cheap first pass, and its parameters.

    A pattern over :data:`MAX_GLOB_CHARS` characters is a :class:`RagkitError`.

    Example:
        >>> path_glob("d.key", "docs/*.md")
        ('(d.key GLOB ? AND path_match(?, d.key))', ['*docs/*.md', 'docs/*.md'])
    """
    if len(pattern) > MAX_GLOB_CHARS:
        raise InvalidArgumentError(
            f"glob {pattern[:40]!r}… of {len(pattern):,} characters: at most {MAX_GLOB_CHARS:,} "
            "(longer than any path)"
        )
    return f"({column} GLOB ? AND path_match(?, {column}))", [_sql_glob(pattern), pattern]


def _sql_glob(pattern: Scalar) -> str:
    """A SQLite GLOB at least as wide as ``pattern`` (a cheap first pass before
    :func:`path_match`; SQLite negates a class with ``^``, not ``!``)."""
    glob = str(pattern).replace("**/", "*").replace("**", "*").replace("[!", "[^")
    return glob if glob.startswith("/") else "*" + glob


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    while position < len(pattern):
        if pattern.startswith("**/", position):
            parts.append("(?:.*/)?")
            position += 3
        elif pattern.startswith("**", position):
            parts.append(".*")
            position += 2
        elif pattern[position] in "*?":
            parts.append("[^/]*" if pattern[position] == "*" else "[^/]")
            position += 1
        elif pattern[position] == "[" and (end := pattern.find("]", position + 2)) != -1:
            body = pattern[position + 1 : end]
            negate = body[0] in "!^"
            escaped = body[negate:].replace("\\", "\\\\")
            parts.append(f"[{'^' if negate else ''}{escaped}]")
            position = end + 1
        else:
            parts.append(re.escape(pattern[position]))
            position += 1
    anywhere = "" if pattern.startswith("/") else "(?:.*/)?"  # relative: the path's end
    return re.compile(anywhere + "".join(parts), re.DOTALL)


def path_match(pattern: str, path: str) -> bool:
    """Whether ``path`` matches the glob ``pattern`` (``*`` and ``?`` within one path segment,
    ``**`` across segments; a relative pattern matches the path's last segments, an absolute
    one all of it); registered in SQLite as ``path_match``."""
    return _glob_regex(pattern).fullmatch(path) is not None


def number_of(value: Any) -> float | None:
    """``value`` as a number when it is one or text that spells one (a CSV cell), else None;
    registered in SQLite as ``number_of`` for range filters.

    Example:
        >>> number_of(2019), number_of(" 2019 "), number_of("1e3"), number_of("n/a")
        (2019.0, 2019.0, 1000.0, None)
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value.strip())
    return None


def unknown_keys(filters: Mapping[str, Any], known: set[str]) -> list[str]:
    """Filter keys naming a metadata field that no document has (``known``: the fields
    documents have).

    Example:
        >>> unknown_keys({"language": "ar", "yaer": 2020, "meta.year": 1}, {"year"})
        ['yaer']
    """
    return [key for key in filters if (field := metadata_key(key)) and field not in known]


def check_known(filters: Mapping[str, Any], known: set[str]) -> None:
    """Refuse filters naming a metadata field no document has (``known``): called when a
    filter matched nothing, so that a mistyped key says so instead of returning nothing.

    Example:
        >>> check_known({"yaer": 2020}, {"year"})
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: filter 'yaer': no document has that metadata field; filter on language, source or year
    """
    if unknown := unknown_keys(filters, known):
        raise InvalidArgumentError(
            f"filter {', '.join(map(repr, unknown))}: no document has that metadata field; "
            f"filter on language, source or {', '.join(sorted(known)) or '(none)'}"
        )
