"""The search options of :class:`ragkit.query.SearchOptions` as typer options, declared once.

:func:`with_search_options` gives a command one option per field — its help the field's
description, its choices the field's ``Literal`` (typer lists, completes and checks them) —
and calls the command with the checked :class:`~ragkit.query.SearchOptions` as ``options``.
``--filter KEY=VALUE`` (repeatable; :func:`parse_filter`) is the one option spelled apart from
its field (``filters``).

Example:
    >>> [p.name for p in search_parameters()][:3]
    ['k', 'mode', 'filters']
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import typer

from ragkit.cli.output import fail
from ragkit.errors import RagkitError
from ragkit.query import SearchOptions

# How each option is spelled on the command line; its help and type come from the field.
FLAGS: dict[str, tuple[str, ...]] = {
    "k": ("-k", "--top-k"),
    "mode": ("--mode",),
    "filters": ("--filter",),
    "fusion": ("--fusion",),
    "dense_weight": ("--dense-weight",),
    "rerank": ("--rerank",),
    "language": ("--lang",),
    "collapse": ("--collapse/--no-collapse",),
    "feedback": ("--feedback",),
    "document_evidence": ("--document-evidence",),
    "phrase_evidence": ("--phrase-evidence",),
    "mmr_lambda": ("--mmr",),
    "mmr_candidates": ("--mmr-candidates",),
}
# Bounds typer checks and shows; the model checks them again.
BOUNDS: dict[str, dict[str, Any]] = {
    "k": {"min": 1},
    "mmr_lambda": {"min": 0.0, "max": 1.0},
    "mmr_candidates": {"min": 1},
}
FILTER_HELP = (
    "KEY=VALUE: language, source (glob; * stays in one folder, ** crosses them) or a metadata "
    "key (2020 also matches the number; meta.source for a metadata field named source). "
    "KEY=A,B or a repeated key: any of the values. KEY>=N, KEY<N…: a numeric range."
)
_RANGE = re.compile(r"^([^<>=]+)(>=|<=|>|<)(.+)$")


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
        elif name == "mmr_lambda":
            annotation = float | None
        elif name == "mmr_candidates":
            annotation = int | None
        help_text = FILTER_HELP if name == "filters" else field.description
        option = typer.Option(default, *FLAGS[name], help=help_text, **BOUNDS.get(name, {}))
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
            )
        )
    return parameters


def options_from(given: dict[str, Any]) -> SearchOptions:
    """The :class:`SearchOptions` of a command's option values (``filters``: the
    ``--filter`` items, parsed)."""
    values = dict(given)
    filters: dict[str, list[Any]] = {}
    for item in values.pop("filters", None) or []:
        key, found = parse_filter(item)
        filters.setdefault(key, []).extend(found)  # a repeated key: any of its values
    return SearchOptions.of(**values, filters=filters or None)


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


def parse_filter(item: str) -> tuple[str, list[Any]]:
    """One ``--filter``: ``KEY=VALUE`` (``KEY=A,B``: any of them) or a range ``KEY>=N``.

    Example:
        >>> parse_filter("language=fa,ar"), parse_filter("year>=1990")
        (('language', ['fa', 'ar']), ('year', [{'>=': '1990'}]))
        >>> parse_filter("year=>2000")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: --filter 'year=>2000': no value starts with '>'; did you mean 'year>=2000'? (ranges are KEY>=N, KEY<N…; values KEY=VALUE)
    """
    if ranged := _RANGE.match(item):
        key, operator, bound = ranged.groups()
        return key.strip(), [{operator: bound.strip()}]
    key, separator, value = item.partition("=")
    if not separator or not key:
        raise RagkitError(
            f"--filter {item!r}: write KEY=VALUE (e.g. language=ar) or a range (year>=1990)"
        )
    if value[:1] in ("<", ">", "="):  # year=>2000, year==2000: a range or a value mistyped
        fixed = f"{key}{value[0]}={value[1:]}" if value[:1] in "<>" else f"{key}={value[1:]}"
        raise RagkitError(
            f"--filter {item!r}: no value starts with {value[0]!r}; did you mean {fixed!r}? "
            "(ranges are KEY>=N, KEY<N…; values KEY=VALUE)"
        )
    return key, value.split(",")
