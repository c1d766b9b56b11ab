"""The normalization contract: ``str → Normalized(text, offsets)`` and the steps that compose.

Every normalizer in ragkit returns a :class:`Normalized`: the normalized text plus, for each
normalized character, the index of the original character it came from. Deleted characters have
no entry; an expansion (one original character → several) repeats the index. Composing two steps
composes their offset maps, so a pipeline of any length still points into the original text.

Example:
    >>> step = CharMap({"ـ": "", "ﻻ": "لا"})
    >>> out = step("عـﻻ")
    >>> out.text, out.offsets
    ('علا', (0, 2, 2))
    >>> out.original_span(1, 3)
    (1, 3)
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Normalized:
    """Normalized text with a map back to the original: ``offsets[i]`` = original index of char i.

    ``source_length`` is the length of the original text, so spans that end at the end of the
    normalized text map to the end of the original.
    """

    text: str
    offsets: tuple[int, ...]
    source_length: int

    @classmethod
    def identity(cls, text: str) -> Normalized:
        """The unchanged text, each character pointing at itself.

        Example:
            >>> Normalized.identity("ab").offsets
            (0, 1)
        """
        return cls(text, tuple(range(len(text))), len(text))

    @classmethod
    def from_pieces(cls, pieces: Iterable[tuple[str, int]], source_length: int) -> Normalized:
        """Build from ``(output piece, original index)`` pairs, in order.

        Example:
            >>> Normalized.from_pieces([("a", 0), ("", 1), ("bc", 2)], 3).offsets
            (0, 2, 2)
        """
        parts: list[str] = []
        offsets: list[int] = []
        for piece, origin in pieces:
            if piece:
                parts.append(piece)
                offsets.extend([origin] * len(piece))
        return cls("".join(parts), tuple(offsets), source_length)

    def then(self, step: Normalized) -> Normalized:
        """Compose: ``step`` was computed from ``self.text``; the result points into the original.

        Example:
            >>> first = Normalized("ab", (1, 3), 4)
            >>> first.then(Normalized("b", (1,), 2)).offsets
            (3,)
        """
        mapped = tuple(self.offsets[i] for i in step.offsets)
        return Normalized(step.text, mapped, self.source_length)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` span that normalized ``[start, end)`` came from.

        Characters deleted between two kept ones belong to the span on their left.

        Example:
            >>> Normalized("ac", (0, 2), 3).original_span(0, 1)
            (0, 2)
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) outside normalized text of {len(self.text)}")
        if start == len(self.text):
            return self.source_length, self.source_length
        original_start = self.offsets[start] if start < len(self.text) else self.source_length
        original_end = self.offsets[end] if end < len(self.text) else self.source_length
        if start == end:
            return original_start, original_start
        return original_start, max(original_end, original_start + 1)

    def original_index(self, position: int) -> int:
        """Original index of normalized position ``position`` (the end maps to the source end)."""
        return self.offsets[position] if position < len(self.offsets) else self.source_length


class Step(ABC):
    """One normalization step. ``apply`` works on plain text; ``__call__`` composes offsets."""

    name: str = "step"

    @abstractmethod
    def apply(self, text: str) -> Normalized:
        """Normalize ``text``; offsets point into ``text``."""

    def __call__(self, value: str | Normalized) -> Normalized:
        if isinstance(value, str):
            return self.apply(value)
        return value.then(self.apply(value.text))


class CharMap(Step):
    """Replace single characters by strings (empty string deletes); everything else is kept.

    Example:
        >>> CharMap({"أ": "ا"}, name="alif")("أحمد").text
        'احمد'
    """

    def __init__(self, table: Mapping[str, str], name: str = "char-map") -> None:
        if any(len(key) != 1 for key in table):
            raise ValueError("CharMap keys must be single characters")
        self.table = dict(table)
        self.name = name

    def apply(self, text: str) -> Normalized:
        table = self.table
        if not any(char in table for char in text):
            return Normalized.identity(text)
        return Normalized.from_pieces(
            ((table.get(char, char), index) for index, char in enumerate(text)), len(text)
        )


class RegexSub(Step):
    """Replace regex matches; the replacement's characters point at the match's first character.

    ``replacement`` is a string (no group references) or a function of the match.

    Example:
        >>> RegexSub(r"(.)\\1{2,}", lambda m: m.group(1) * 2, name="elongation")("soooo").text
        'soo'
    """

    def __init__(
        self,
        pattern: str | re.Pattern[str],
        replacement: str | Callable[[re.Match[str]], str],
        name: str = "regex",
    ) -> None:
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.replacement = replacement
        self.name = name

    def apply(self, text: str) -> Normalized:
        pieces: list[tuple[str, int]] = []
        position = 0
        for match in self.pattern.finditer(text):
            pieces.extend((char, i) for i, char in enumerate(text[position : match.start()], position))
            replacement = (
                self.replacement(match) if callable(self.replacement) else self.replacement
            )
            pieces.extend(_spread(replacement, match.start(), match.end()))
            position = match.end()
        if not pieces and position == 0:
            return Normalized.identity(text)
        pieces.extend((char, i) for i, char in enumerate(text[position:], position))
        return Normalized.from_pieces(pieces, len(text))


def _spread(replacement: str, start: int, end: int) -> Iterable[tuple[str, int]]:
    """Point replacement characters at the match: one-to-one while both last, then the last one."""
    last = max(start, end - 1)
    for i, char in enumerate(replacement):
        yield char, min(start + i, last)


class Pipeline(Step):
    """Steps applied in order, offsets composed. Idempotent when each step is.

    Example:
        >>> p = Pipeline([CharMap({"ـ": ""}), CharMap({"أ": "ا"})], name="demo")
        >>> p("أـحمد").text
        'احمد'
    """

    def __init__(self, steps: Sequence[Step], name: str = "pipeline") -> None:
        self.steps = tuple(steps)
        self.name = name

    def apply(self, text: str) -> Normalized:
        result = Normalized.identity(text)
        for step in self.steps:
            result = step(result)
        return result

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, steps={[step.name for step in self.steps]})"
