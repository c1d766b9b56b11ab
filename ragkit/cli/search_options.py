"""The search options of :class:`ragkit.query.SearchOptions` as typer options, declared once.

:func:`with_search_options` gives a command one option per field — its help the field's
description, its choices the field's ``Literal`` (typer lists, completes and checks them) —
and calls the command with the checked :class:`~ragkit.query.SearchOptions` as ``options``.
``--filter`` (repeatable; :func:`parse_filter`, :func:`cli_filters`) is the one option spelled
apart from its field (``filters``).

Example:
    >>> [p.name for p in search_parameters()][:3]
    ['k', 'mode', 'filters']
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable
from typing import Any

import typer

from ragkit.cli.output import fail
from ragkit.errors import RagkitError
from ragkit.query import SearchOptions
from ragkit.store.filters import parse_filter as filter_tree

# How each option is spelled on the command line; its help and type come from the field.
FLAGS: dict[str, tuple[str, ...]] = {
    "k": ("-k", "--top-k"),
    "mode": ("--mode",),
    "filters": ("--filter",),
    "fusion": ("--fusion",),
    "rerank": ("--rerank",),
    "language": ("--lang",),
    "collapse": ("--collapse/--no-collapse",),
    "feedback": ("--feedback",),
    "document_evidence": ("--document-evidence",),
    "phrase_evidence": ("--phrase-evidence",),
}
FILTER_HELP = (
    "KEY=VALUE: language, source (glob; * stays in one folder, ** crosses them), id, content or "
    "a metadata key (2020 also matches the number; meta.source for a metadata field named "
    "source). KEY=A,B or a repeated key: any of them. KEY!=A,B: none of them. KEY>=N, KEY<N…: "
    "a range (a number or an ISO date). KEY~=TEXT: a list holding TEXT, or text containing it. "
    "exists:KEY, missing:KEY. A JSON filter ({...}) in the filter language. Different keys: all."
)
_KEY = r"([^<>=!~]+)"
_RANGE = re.compile(rf"^{_KEY}(>=|<=|>|<)(.+)$")
_NOT_EQUAL = re.compile(rf"^{_KEY}!=(.*)$")
_CONTAINS = re.compile(rf"^{_KEY}~=(.*)$")
_PRESENCE = re.compile(r"^(exists|missing):(.+)$")


def search_parameters(only: tuple[str, ...] | None = None) -> list[inspect.Parameter]:
    """One keyword parameter with its typer option per :class:`SearchOptions` field (those
    named in ``only``, when given)."""
    parameters = []
    for name, field in SearchOptions.model_fields.items():
        if only is not None and name not in only:
            continue
        annotation: Any = field.annotation
        default = field.default
        if name == "filters":
            annotation, default = list[str], []
        elif name == "k":
            annotation = int
        elif name == "rerank":
            annotation = bool
        elif name == "collapse":
            annotation = bool | None
        help_text = FILTER_HELP if name == "filters" else field.description
        bounds: dict[str, Any] = {"min": 1} if name == "k" else {}
        option = typer.Option(default, *FLAGS[name], help=help_text, **bounds)
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
            )
        )
    return parameters


def options_from(given: dict[str, Any]) -> SearchOptions:
    """The :class:`SearchOptions` of a command's option values (``filters``: the
    ``--filter`` items, parsed: :func:`cli_filters`)."""
    values = dict(given)
    filters = cli_filters(values.pop("filters", None) or [])
    return SearchOptions.of(**values, filters=filters or None)


def cli_filters(items: list[str]) -> dict[str, Any]:
    """The filter of ``--filter`` items: ``=``, range and ``~=`` items on one key are any of
    them (a repeated key), every other item and every key must all hold; refused, as the
    search would refuse it, before anything is loaded.

    Example:
        >>> cli_filters(["year=2019", "year>=2021", "language!=ar"])
        {'year': ['2019', {'>=': '2021'}], 'language': {'$ne': 'ar'}}
        >>> cli_filters(["tags~=x", "tags!=y"])
        {'$and': [{'tags': [{'$contains': 'x'}]}, {'tags': {'$ne': 'y'}}]}
    """
    any_of: dict[str, list[Any]] = {}
    every: list[dict[str, Any]] = []
    for item in items:
        key, found = parse_filter(item)
        if key is None:
            every.append(found)
        else:
            any_of.setdefault(key, []).extend(found)
    parts = [{key: conditions} for key, conditions in any_of.items()] + every
    keys = [key for part in parts for key in part]
    if len(keys) == len(set(keys)):
        filters = {key: value for part in parts for key, value in part.items()}
    else:
        filters = {"$and": parts}
    filter_tree(filters)
    return filters


def with_search_options(
    only: tuple[str, ...] | None = None,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator: the command gets the search options (those in ``only``, when given) as
    typer options and is called with ``options=SearchOptions(...)``; an option value the
    model refuses ends the command with its one-line error (exit 2)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.name != "options"]
        added = search_parameters(only)

        @functools.wraps(command)
        def run(**values: Any) -> None:
            given = {p.name: values.pop(p.name) for p in added}
            try:
                options = options_from(given)
            except RagkitError as error:
                fail(error)
            command(**values, options=options)

        run.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in [*own, *added]} | {"return": None}
        return run

    return decorate


def parse_filter(item: str) -> tuple[str | None, Any]:
    """One ``--filter``: ``(KEY, conditions any of which holds)`` for ``KEY=VALUE`` (``A,B``:
    any of them), a range ``KEY>=N`` and ``KEY~=TEXT``; ``(None, filter)`` for ``KEY!=A,B``,
    ``exists:KEY``, ``missing:KEY`` and a JSON filter (``{...}``).

    Example:
        >>> parse_filter("language=fa,ar"), parse_filter("year>=1990")
        (('language', ['fa', 'ar']), ('year', [{'>=': '1990'}]))
        >>> parse_filter("draft!=yes,maybe"), parse_filter("missing:year")
        ((None, {'draft': {'$nin': ['yes', 'maybe']}}), (None, {'year': {'$exists': False}}))
        >>> parse_filter("year=>2000")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: --filter 'year=>2000': no value starts with '>'; did you mean 'year>=2000'? (ranges are KEY>=N, KEY<N…; values KEY=VALUE)
    """
    if item.lstrip().startswith("{"):
        return None, _json_filter(item)
    if unequal := _NOT_EQUAL.match(item):
        key, value = unequal.groups()
        values = value.split(",")
        condition = {"$ne": values[0]} if len(values) == 1 else {"$nin": values}
        return None, {key.strip(): condition}
    if contained := _CONTAINS.match(item):
        key, value = contained.groups()
        return key.strip(), [{"$contains": value}]
    if ranged := _RANGE.match(item):
        key, operator, bound = ranged.groups()
        return key.strip(), [{operator: bound.strip()}]
    key, separator, value = item.partition("=")
    if not separator and (presence := _PRESENCE.match(item)):
        word, key = presence.groups()
        return None, {key: {"$exists": word == "exists"}}
    if not separator or not key:
        raise RagkitError(
            f"--filter {item!r}: write KEY=VALUE (e.g. language=ar), KEY!=VALUE, a range "
            "(year>=1990), KEY~=TEXT, exists:KEY, missing:KEY or a JSON filter"
        )
    if value[:1] in ("<", ">", "="):  # year=>2000, year==2000: a range or a value mistyped
        fixed = f"{key}{value[0]}={value[1:]}" if value[:1] in "<>" else f"{key}={value[1:]}"
        raise RagkitError(
            f"--filter {item!r}: no value starts with {value[0]!r}; did you mean {fixed!r}? "
            "(ranges are KEY>=N, KEY<N…; values KEY=VALUE)"
        )
    return key, value.split(",")


def _json_filter(item: str) -> dict[str, Any]:
    try:
        found = json.loads(item)
    except json.JSONDecodeError as error:
        raise RagkitError(f"--filter {item[:60]!r}: not JSON ({error})") from None
    if not isinstance(found, dict):
        raise RagkitError(f"--filter {item[:60]!r}: a JSON filter is an object ({{...}})")
    return found
