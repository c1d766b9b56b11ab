"""Milvus filter expressions as tokens: text, and values that are bound as template
parameters (:meth:`Expression.template`) or written as escaped literals
(:meth:`Expression.inline`, for Milvus Lite 3, which evaluates no templates); ``True`` and
``False`` for every document and none, folded away by :func:`all_of`, :func:`any_of` and
:func:`none_of`.

A literal escapes exactly what both Milvus's and Milvus Lite's string grammars read back
(``\\\\``, ``\\"``, ``\\n``, ``\\r``, ``\\t``; any other character stands as itself), so
no value can end its string; a negative number is parenthesized (Milvus Lite takes no ``-2``
as a function's argument).

Example:
    >>> expression = Expression(any_of([("language == ", Value('a" or "')), ("id < ", Value(-2))]))
    >>> expression.template()
    ('(language == {p0} or id < {p1})', {'p0': 'a" or "', 'p1': -2})
    >>> expression.inline()
    '(language == "a\\\\" or \\\\"" or id < (-2))'
    >>> all_of([True, ("id < ", Value(3))]), any_of([False]), none_of(True)
    (('id < ', Value(value=3)), False, False)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

__all__ = ["Expr", "Expression", "Tokens", "Value", "all_of", "any_of", "literal", "none_of"]

ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


class Value(NamedTuple):
    """A value in an expression (a template parameter, or an escaped literal)."""

    value: str | int | float | bool


Tokens: TypeAlias = tuple[str | Value, ...]
Expr: TypeAlias = bool | Tokens  # True: every document, False: none


@dataclass(frozen=True)
class Expression:
    """A Milvus filter expression: every document (``True``), none (``False``), or tokens;
    ``content`` says whether the check needs each document's text."""

    tokens: Expr
    content: bool = False

    def template(self) -> tuple[str, dict[str, Any]]:
        """The expression with ``{pN}`` placeholders, and their values (``filter_params``)."""
        params: dict[str, Any] = {}

        def placeholder(value: Value) -> str:
            name = f"p{len(params)}"
            params[name] = value.value
            return "{" + name + "}"

        return self._text(placeholder), params

    def inline(self) -> str:
        """The expression with each value written as an escaped literal."""
        return self._text(literal)

    def _text(self, write: Callable[[Value], str]) -> str:
        if isinstance(self.tokens, bool):
            return "id >= 0" if self.tokens else "id < 0"
        return "".join(t if isinstance(t, str) else write(t) for t in self.tokens)


def literal(value: Value) -> str:
    """A value as a Milvus literal: text quoted and escaped, numbers and bools as written.

    Example:
        >>> literal(Value('a"b\\\\')), literal(Value(-2.5)), literal(Value(True))
        ('"a\\\\"b\\\\\\\\"', '(-2.5)', 'true')
    """
    held = value.value
    if isinstance(held, bool):
        return "true" if held else "false"
    if isinstance(held, int | float):
        return repr(held) if held >= 0 else f"({held!r})"  # Lite takes no -2 as an argument
    return '"' + held.translate(ESCAPES) + '"'


def all_of(parts: list[Expr]) -> Expr:
    if any(part is False for part in parts):
        return False
    kept: list[Expr] = [part for part in parts if part is not True]
    return _join(kept, " and ", True)


def any_of(parts: list[Expr]) -> Expr:
    if any(part is True for part in parts):
        return True
    kept: list[Expr] = [part for part in parts if part is not False]
    return _join(kept, " or ", False)


def _join(parts: list[Expr], joiner: str, empty: bool) -> Expr:
    if not parts:
        return empty
    if len(parts) == 1:
        return parts[0]
    tokens: list[str | Value] = ["("]
    for position, part in enumerate(parts):
        tokens += [joiner] if position else []
        tokens += list(part)  # type: ignore[arg-type]
    return (*tokens, ")")


def none_of(part: Expr) -> Expr:
    return (not part) if isinstance(part, bool) else ("not (", *part, ")")
