"""The normalization contract: ``str → Normalized(text, offsets)`` and the steps that compose.

Every normalizer in ragkit returns a :class:`Normalized`: the normalized text plus, for each
normalized character, the index of the original character it came from. Deleted characters have
no entry; an expansion (one original character → several) repeats the index. Composing two steps
composes their offset maps, so a pipeline of any length still points into the original text.

Example:
    >>> step = CharMap({"ـ": "", "ﻻ": "لا"})
    >>> out = step("عـﻻ")
    >>> out.text, out.offsets.tolist()
    ('علا', [0, 2, 2])
    >>> out.original_span(1, 3)
    (2, 3)
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragkit.normalize.translation import OffsetArray, counting


def as_offsets(values: Iterable[int] | npt.ArrayLike) -> OffsetArray:
    """Offsets as the read-only int32 array :class:`Normalized` holds (no copy when it is one)."""
    if isinstance(values, np.ndarray) and values.dtype == np.int32 and values.ndim == 1:
        array = values.view()
    else:
        array = np.array(values, dtype=np.int32).reshape(-1)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Normalized:
    """Normalized text with a map back to the original: ``offsets[i]`` = original index of char i.

    ``offsets`` is a read-only int32 numpy array (any sequence of ints is accepted and converted);
    ``source_length`` is the length of the original text, so spans that end at the end of the
    normalized text map to the end of the original.
    """

    text: str
    offsets: OffsetArray
    source_length: int

    def __post_init__(self) -> None:
        if not isinstance(self.offsets, np.ndarray) or self.offsets.dtype != np.int32:
            object.__setattr__(self, "offsets", as_offsets(self.offsets))
        if len(self.offsets) != len(self.text):
            raise ValueError(f"{len(self.offsets)} offsets for {len(self.text)} characters")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Normalized)
            and self.text == other.text
            and self.source_length == other.source_length
            and np.array_equal(self.offsets, other.offsets)
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def _trusted(cls, text: str, offsets: OffsetArray, source_length: int) -> Normalized:
        """Built without checks: ``offsets`` is a read-only int32 array, one per character."""
        normalized = object.__new__(cls)
        fields = normalized.__dict__  # frozen: the fields go into the instance dict directly
        fields["text"], fields["offsets"], fields["source_length"] = text, offsets, source_length
        return normalized

    @classmethod
    def identity(cls, text: str) -> Normalized:
        """The unchanged text, each character pointing at itself.

        Example:
            >>> Normalized.identity("ab").offsets.tolist()
            [0, 1]
        """
        return cls(text, counting(len(text)), len(text))

    @classmethod
    def from_pieces(cls, pieces: Iterable[tuple[str, int]], source_length: int) -> Normalized:
        """Build from ``(output piece, original index)`` pairs, in order.

        Example:
            >>> Normalized.from_pieces([("a", 0), ("", 1), ("bc", 2)], 3).offsets.tolist()
            [0, 2, 2]
        """
        parts: list[str] = []
        offsets: list[int] = []
        for piece, origin in pieces:
            if piece:
                parts.append(piece)
                offsets.extend([origin] * len(piece))
        return cls("".join(parts), as_offsets(offsets), source_length)

    def then(self, step: Normalized) -> Normalized:
        """Compose: ``step`` was computed from ``self.text``; the result points into the original.

        Example:
            >>> first = Normalized("ab", (1, 3), 4)
            >>> first.then(Normalized("b", (1,), 2)).offsets.tolist()
            [3]
        """
        return Normalized(step.text, as_offsets(self.offsets[step.offsets]), self.source_length)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` span that normalized ``[start, end)`` came from.

        Characters deleted between two kept ones belong to the span on their left.

        Example:
            >>> Normalized("ac", (0, 2), 3).original_span(0, 1)
            (0, 2)
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) outside normalized text of {len(self.text)}")
        original_start = self.original_index(start)
        if start == end:
            return original_start, original_start
        return original_start, max(self.original_index(end), original_start + 1)

    def original_index(self, position: int) -> int:
        """Original index of normalized position ``position`` (the end maps to the source end)."""
        return int(self.offsets[position]) if position < len(self.offsets) else self.source_length


@dataclass(frozen=True)
class Change:
    """One edit a normalizer made: original ``[start, end)`` held ``before``, now ``after``."""

    start: int
    end: int
    before: str
    after: str


def changes(original: str, normalized: Normalized) -> list[Change]:
    """The edits that turned ``original`` into ``normalized``, adjacent edits merged.

    Example:
        >>> out = CharMap({"أ": "ا", "ـ": ""})("أحـمد")
        >>> [(c.start, c.before, c.after) for c in changes("أحـمد", out)]
        [(0, 'أ', 'ا'), (2, 'ـ', '')]
    """
    bounds = np.searchsorted(normalized.offsets, np.arange(len(original) + 1), side="left")
    found: list[Change] = []
    for index, char in enumerate(original):
        after = normalized.text[bounds[index] : bounds[index + 1]]
        if after == char:
            continue
        if found and found[-1].end == index:
            last = found[-1]
            found[-1] = Change(last.start, index + 1, last.before + char, last.after + after)
        else:
            found.append(Change(index, index + 1, char, after))
    return found


def word_changes(original: str, normalized: Normalized) -> list[Change]:
    """:func:`changes` widened to the whitespace-separated words they touch, so a word
    rewritten as a whole reads as one change (``gr8`` → ``great``, not ``8`` → ``eat``).

    Example:
        >>> out = CharMap({"8": "eat"})("gr8 m8")
        >>> [(c.start, c.before, c.after) for c in changes("gr8 m8", out)]
        [(2, '8', 'eat'), (5, '8', 'eat')]
        >>> [(c.start, c.before, c.after) for c in word_changes("gr8 m8", out)]
        [(0, 'gr8', 'great'), (4, 'm8', 'meat')]
    """
    bounds = np.searchsorted(normalized.offsets, np.arange(len(original) + 1), side="left")
    found: list[Change] = []
    for change in changes(original, normalized):
        start, end = change.start, change.end
        while start > 0 and not original[start - 1].isspace():
            start -= 1
        while end < len(original) and not original[end].isspace():
            end += 1
        if found and start <= found[-1].end:
            start = found.pop().start
        after = normalized.text[bounds[start] : bounds[end]]
        found.append(Change(start, end, original[start:end], after))
    return found


class Step(ABC):
    """One normalization step. ``apply`` works on plain text; ``__call__`` composes offsets."""

    name: str = "step"

    @abstractmethod
    def apply(self, text: str) -> Normalized:
        """Normalize ``text``; offsets point into ``text``."""

    def unchanged(self, text: str) -> bool:
        """A cheap test: True only when ``apply(text)`` would certainly return ``text`` as is.

        :class:`~ragkit.normalize.pipeline.Pipeline` skips such steps without building offsets; the default never knows.
        """
        return False

    def triggers(self) -> str | None:
        """Characters without which ``apply`` returns its input as is (None: no such set known).

        :class:`~ragkit.normalize.pipeline.Pipeline` compiles its leading steps that know theirs into one
        :class:`~ragkit.normalize.translation.TranslationTable` with its character maps.
        Characters outside the BMP need not be listed: text holding one never takes the table.
        """
        return None

    def __call__(self, value: str | Normalized) -> Normalized:
        if isinstance(value, str):
            return self.apply(value)
        result = self.apply(value.text)
        if result.text == value.text:  # unchanged: every step maps equal text one to one
            return value
        return value.then(result)


class CharMap(Step):
    """Replace single characters by strings (empty string deletes); everything else is kept.

    One-to-one replacements and deletions run as numpy lookups over the code points (C speed);
    only texts holding a character that expands to several fall back to a Python loop.

    Example:
        >>> CharMap({"أ": "ا"}, name="alif")("أحمد").text
        'احمد'
    """

    def __init__(self, table: Mapping[str, str], name: str = "char-map") -> None:
        if any(len(key) != 1 for key in table):
            raise ValueError("CharMap keys must be single characters")
        self.table = dict(table)
        self.name = name
        self._lookup = np.arange(BMP, dtype=np.uint32)
        self._deleted = np.zeros(BMP, dtype=bool)
        for key, value in self.table.items():
            if ord(key) < BMP and len(value) <= 1:
                self._lookup[ord(key)] = ord(value) if value else 0
                self._deleted[ord(key)] = not value
        slow_keys = "".join(
            re.escape(k) for k, v in self.table.items() if ord(k) >= BMP or len(v) > 1
        )
        self._any_slow_key = re.compile(f"[{slow_keys}]") if slow_keys else None
        keys = "".join(re.escape(key) for key in sorted(self.table))
        self._any_key = re.compile(f"[{keys}]") if keys else None

    def apply(self, text: str) -> Normalized:
        if self.unchanged(text):
            return Normalized.identity(text)
        if self.expands(text):
            table = self.table
            return Normalized.from_pieces(
                ((table.get(char, char), index) for index, char in enumerate(text)), len(text)
            )
        out, kept = self.mapped(text)
        offsets = counting(len(text)) if kept is None else counting(len(text))[kept]
        return Normalized(out, as_offsets(offsets), len(text))

    def unchanged(self, text: str) -> bool:
        return self._any_key is None or self._any_key.search(text) is None

    def expands(self, text: str) -> bool:
        """Whether ``text`` holds a key that maps to several characters (or an astral key)."""
        return self._any_slow_key is not None and self._any_slow_key.search(text) is not None

    def mapped(self, text: str) -> tuple[str, npt.NDArray[np.bool_] | None]:
        """``text`` through the one-to-one part of the map, and which characters were kept
        (None when none was deleted). Expanding keys (:meth:`expands`) are left as they are."""
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if codes.max() >= BMP:  # astral characters pass through unchanged
            in_bmp = codes < BMP
            clipped = np.where(in_bmp, codes, 0)
            mapped = np.where(in_bmp, self._lookup[clipped], codes)
            kept = ~(self._deleted[clipped] & in_bmp)
        else:
            mapped = self._lookup[codes]
            kept = ~self._deleted[codes]
        if kept.all():
            return mapped.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass"), None
        out = mapped[kept].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        return out, kept


BMP = 0x10000


class RegexSub(Step):
    """Replace regex matches; the replacement's characters point at the match's first character.

    ``replacement`` is a string (no group references) or a function of the match. ``triggers``:
    characters every match holds, when there are such (see :meth:`Step.triggers`).

    Example:
        >>> RegexSub(r"(.)\\1{2,}", lambda m: m.group(1) * 2, name="elongation")("soooo").text
        'soo'
    """

    def __init__(
        self,
        pattern: str | re.Pattern[str],
        replacement: str | Callable[[re.Match[str]], str],
        name: str = "regex",
        triggers: str | None = None,
    ) -> None:
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.replacement = replacement
        self.name = name
        self._triggers = triggers

    def triggers(self) -> str | None:
        return self._triggers

    def unchanged(self, text: str) -> bool:
        if self._triggers is not None and len(self._triggers) <= 2:  # `in` beats a search
            for char in self._triggers:
                if char in text:
                    return self.pattern.search(text) is None
            return True
        return self.pattern.search(text) is None

    def apply(self, text: str) -> Normalized:
        edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
        for match in self.pattern.finditer(text):
            replacement = (
                self.replacement(match) if callable(self.replacement) else self.replacement
            )
            if replacement != match.group():
                edits.append((match.start(), match.end(), replacement))
        if not edits:
            return Normalized.identity(text)
        parts: list[str] = []
        position = 0
        for start, end, replacement in edits:
            parts += [text[position:start], replacement]
            position = end
        parts.append(text[position:])
        return Normalized("".join(parts), _edited_offsets(len(text), edits), len(text))


class RunCollapse(RegexSub):
    """Runs of one character cut to their first (a run of spaces becomes one space).

    Example:
        >>> out = RunCollapse(" ")("a   b")
        >>> out.text, out.offsets.tolist()
        ('a b', [0, 1, 4])
    """

    def __init__(self, char: str, name: str = "runs") -> None:
        super().__init__(f"{re.escape(char)}{{2,}}", char, name=name, triggers=char)
        self.char = char


def _edited_offsets(length: int, edits: list[tuple[int, int, str]]) -> OffsetArray:
    """Offsets after replacing ``(start, end, replacement)`` spans of a text of ``length``.

    No replacement longer than its match (the common case): each keeps the first characters
    of its match, so the offsets are the positions of the characters kept.
    """
    if all(len(replacement) <= end - start for start, end, replacement in edits):
        kept = np.ones(length, dtype=bool)
        for start, end, replacement in edits:
            kept[start + len(replacement) : end] = False
        return as_offsets(counting(length)[kept])
    pieces: list[OffsetArray] = []
    position = 0
    for start, end, replacement in edits:
        pieces += [counting(start)[position:], spread_offsets(len(replacement), start, end)]
        position = end
    pieces.append(counting(length)[position:])
    return as_offsets(np.concatenate(pieces))


def spread_offsets(count: int, start: int, end: int) -> OffsetArray:
    """Offsets for a replacement of a match: one-to-one while both last, then the last one."""
    return np.minimum(np.arange(start, start + count, dtype=np.int32), max(start, end - 1))
