"""A pipeline's leading steps compiled into one table: one pass per text, no Python loop.

The first steps of a normalization pipeline either map characters one to one or delete them
(:class:`~ragkit.normalize.base.CharMap`), or leave the text alone unless it holds certain
characters (a combining hamza for hamza composition, a Quranic mark for the Uthmani step, a
character NFC/NFKC could touch for the Unicode form: their *triggers*). A
:class:`TranslationTable` folds all of them into one entry per BMP code point: the character
that every map together turns it into, and three flags — *deleted*, *changed* and *stop* (a
trigger of a step after the maps before it, a character that a map expands to several, or a
UTF-16 surrogate, i.e. astral text, which the table does not cover). Runs of one character
cut to their first (the space runs of :class:`~ragkit.normalize.unicode.Whitespace`) can close
the table.

A text written in ASCII and the table's *alphabet* (at most 256 characters, each given a byte
of an 8-bit charmap codec) is encoded once and goes through ``bytes.translate``; any other text
is encoded to UTF-16 and looked up in numpy, the OR of its entries saying what happened (after
one regex scan for a character the table touches at all). Without *stop*, the result is the
mapped characters that are not deleted, and the offsets are the positions of those characters
(none to build when nothing was deleted, no text to build when nothing changed). With *stop*,
the caller runs the steps one by one.

Example:
    >>> table = TranslationTable()
    >>> table.add_map({"\u0640": "", "\u0623": "\u0627"})  # tatweel deleted, alif folded
    >>> table.add_triggers("\u0654")  # a step that acts only on a combining hamza
    >>> out, offsets = table("\u0623\u0640\u062d\u0645\u062f")
    >>> out == "\u0627\u062d\u0645\u062f", offsets.tolist()
    (True, [0, 2, 3, 4])
    >>> table("\u064a\u0654") is None  # a trigger: run the steps one by one
    True
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

OffsetArray = npt.NDArray[np.int32]

BMP = 0x10000
DELETED = 1 << 31
CHANGED = 1 << 30
STOP = 1 << 29
_SURROGATES = slice(0xD800, 0xE000)


_COUNTING = np.arange(0, dtype=np.int32)
_COUNTING.flags.writeable = False


def counting(length: int) -> OffsetArray:
    """A read-only ``arange(length)`` view of one shared buffer (identity offsets, no copy)."""
    global _COUNTING
    if len(_COUNTING) < length:
        _COUNTING = np.arange(max(length, 2 * len(_COUNTING), 1 << 16), dtype=np.int32)
        _COUNTING.flags.writeable = False
    return _COUNTING[:length]


class TranslationTable:
    """Character maps and trigger sets composed in order, over the BMP (see the module doc).

    Build it with :meth:`add_map` and :meth:`add_triggers` in the order of the steps, then call
    it on texts: ``None`` when a step might act (*stop*), else ``(text, offsets)``, where
    ``offsets`` are the positions of the original characters kept (``None``: all of them).
    """

    def __init__(self, alphabet: str = "") -> None:
        self._alphabet = alphabet
        self._bytes: _ByteCode | None = None
        self._image = np.arange(BMP, dtype=np.uint32)  # what the maps so far make of each
        self._deleted = np.zeros(BMP, dtype=bool)
        self._stop = np.zeros(BMP, dtype=bool)
        self._stop[_SURROGATES] = True
        self._table: npt.NDArray[np.uint32] | None = None
        self._touched = re.compile("")  # see _touched
        self._collapse: str | None = None

    def add_map(self, table: Mapping[str, str]) -> None:
        """A character map applied after everything added so far (empty value: delete).

        A key that expands (several characters, or one outside the BMP) stops the table.
        """
        lookup = np.arange(BMP, dtype=np.uint32)
        deletes = np.zeros(BMP, dtype=bool)
        expands = np.zeros(BMP, dtype=bool)
        for key, value in table.items():
            code = ord(key)
            if code >= BMP:
                continue  # reached only through a surrogate, which stops anyway
            if len(value) > 1 or (value and ord(value) >= BMP):
                expands[code] = True
            elif value:
                lookup[code] = ord(value)
            else:
                deletes[code] = True
        self._check_open()
        alive = self._alive()
        self._stop |= alive & expands[self._image]
        alive &= ~self._stop
        self._deleted |= alive & deletes[self._image]
        self._image = np.where(alive, lookup[self._image], 0).astype(np.uint32)
        self._table = None

    def add_triggers(self, characters: str) -> None:
        """A step that changes nothing in a text without any of ``characters`` (after the maps
        added so far): a text holding one stops the table."""
        self._check_open()
        triggers = np.zeros(BMP, dtype=bool)
        triggers[[ord(char) for char in characters if ord(char) < BMP]] = True
        self._stop |= self._alive() & triggers[self._image]
        self._table = None

    def add_collapse(self, char: str) -> None:
        """Runs of ``char`` (after everything added so far) collapse to their first; the last
        step a table can hold."""
        self._check_open()
        if len(char) != 1 or ord(char) >= BMP:
            raise ValueError(f"only one BMP character collapses, not {char!r}")
        self._collapse = char

    def _check_open(self) -> None:
        if self._collapse is not None:
            raise ValueError("nothing can follow a collapse in a translation table")

    def _alive(self) -> npt.NDArray[np.bool_]:
        return ~(self._deleted | self._stop)

    @property
    def table(self) -> npt.NDArray[np.uint32]:
        """Per BMP code point: the mapped character (low 16 bits) OR the flag bits."""
        if self._table is None:
            changed = self._image != np.arange(BMP, dtype=np.uint32)
            table = np.where(self._alive(), self._image, 0).astype(np.uint32)
            table |= np.where(changed | self._deleted, CHANGED, 0).astype(np.uint32)
            table |= np.where(self._deleted, DELETED, 0).astype(np.uint32)
            table |= np.where(self._stop, STOP, 0).astype(np.uint32)
            self._table = table
            self._bytes = _ByteCode.build(table, self._alphabet, self._collapse)
            self._touched = _touched(table)
        return self._table

    def __call__(self, text: str) -> tuple[str, OffsetArray | None] | None:
        """``(text, offsets)`` through the table, offsets read-only (``None``: identity), or
        ``None`` when the steps must run one by one."""
        table = self.table if self._table is None else self._table
        if self._bytes is not None and (translated := self._bytes(text)) is not None:
            return translated
        run = self._collapse
        if self._touched.search(text) is None and (run is None or run + run not in text):
            return text, None  # no character any step touches: one regex scan, no lookup
        looked = table[np.frombuffer(text.encode("utf-16-le", "surrogatepass"), "<u2")]
        flags = int(np.bitwise_or.reduce(looked)) if len(looked) else 0
        if flags & STOP:
            return None
        offsets, codes = None, None
        if flags & CHANGED:
            if flags & DELETED:
                kept = looked < DELETED
                looked = looked[kept]
                offsets = _frozen(counting(len(text))[kept])
            codes = looked.astype("<u2")
            text = codes.tobytes().decode("utf-16-le")
        if run is None or run + run not in text:
            return text, offsets
        if codes is None:
            codes = np.frombuffer(text.encode("utf-16-le"), "<u2")
        same = codes == ord(run)
        kept = np.empty(len(codes), dtype=bool)
        kept[0] = True
        np.logical_not(same[1:] & same[:-1], out=kept[1:])
        offsets = _frozen(counting(len(codes))[kept] if offsets is None else offsets[kept])
        return codes[kept].tobytes().decode("utf-16-le"), offsets


@dataclass(frozen=True)
class _ByteCode:
    """The table restricted to at most 256 characters, one byte each (an 8-bit charmap codec),
    so that a text written only in them goes through ``bytes.translate``."""

    encoding: Any  # codecs.charmap_build's EncodingMap
    decoding: str
    translation: bytes
    deletions: bytes
    kept: bytes  # translation to 1 for each character that stays, 0 for each deleted
    pair: bytes  # the collapse character's byte, twice (b"": no collapse)

    @classmethod
    def build(
        cls, table: npt.NDArray[np.uint32], alphabet: str, collapse: str | None
    ) -> _ByteCode | None:
        """The byte code of ``table`` for ASCII and ``alphabet`` (None without an alphabet)."""
        if not alphabet:
            return None
        chars = [
            char
            for char in dict.fromkeys(_ASCII + alphabet + (collapse or ""))
            if ord(char) < BMP and not table[ord(char)] & STOP
        ][:256]
        while True:  # each character's image needs a byte too
            held = set(chars)
            chars = [
                char
                for char in chars
                if table[ord(char)] & DELETED or chr(table[ord(char)] & 0xFFFF) in held
            ]
            if len(chars) == len(held):
                break
        if collapse is not None and collapse not in held:
            return None
        byte = {char: index for index, char in enumerate(chars)}
        translation, deletions = bytearray(range(256)), bytearray()
        kept = bytearray(256)
        for char, index in byte.items():
            entry = int(table[ord(char)])
            if entry & DELETED:
                deletions.append(index)
            else:
                translation[index] = byte[chr(entry & 0xFFFF)]
                kept[index] = 1
        decoding = "".join(chars).ljust(256, "\ufffe")  # U+FFFE: no character
        run = b"" if collapse is None else bytes([byte[collapse]])
        return cls(
            codecs.charmap_build(decoding),
            decoding,
            bytes(translation),
            bytes(deletions),
            bytes(kept),
            run + run,
        )

    def __call__(self, text: str) -> tuple[str, OffsetArray | None] | None:
        """``(text, offsets)`` as :class:`TranslationTable` gives them; ``None`` when ``text``
        holds a character without a byte."""
        try:
            encoded = codecs.charmap_encode(text, "strict", self.encoding)[0]
        except UnicodeEncodeError:
            return None
        out = encoded.translate(self.translation, self.deletions)
        pair = self.pair
        at = out.find(pair) if pair else -1  # the first run to collapse
        if at < 0 and len(out) == len(encoded):
            if out == encoded:
                return text, None
            return codecs.charmap_decode(out, "strict", self.decoding)[0], None
        offsets = counting(len(text))
        if len(out) < len(encoded):
            offsets = offsets.compress(np.frombuffer(encoded.translate(self.kept), bool))
        if at >= 0:
            out, kept = _collapsed(out, pair, at)
            offsets = offsets.compress(np.frombuffer(kept, bool))
        offsets.setflags(write=False)
        return codecs.charmap_decode(out, "strict", self.decoding)[0], offsets


def _collapsed(data: bytes, pair: bytes, at: int) -> tuple[bytes, bytearray]:
    """``data`` with each run of ``pair[0]`` cut to its first byte (the first run at ``at``),
    and which bytes of ``data`` stay (1) or go (0)."""
    run = pair[0]
    kept = bytearray(b"\x01") * len(data)
    parts: list[bytes] = []
    start = 0
    while at >= 0:
        end = at + 2
        while end < len(data) and data[end] == run:
            end += 1
        kept[at + 1 : end] = bytes(end - at - 1)
        parts.append(data[start : at + 1])
        start = end
        at = data.find(pair, end)
    parts.append(data[start:])
    return b"".join(parts), kept


def _touched(table: npt.NDArray[np.uint32]) -> re.Pattern[str]:
    """A character class of the characters ``table`` changes, deletes or stops on."""
    codes = np.flatnonzero(table & (STOP | CHANGED | DELETED))
    if not len(codes):
        return re.compile("[\U00010000-\U0010ffff]")
    cuts = np.flatnonzero(np.diff(codes) != 1)
    firsts, lasts = codes[np.r_[0, cuts + 1]], codes[np.r_[cuts, len(codes) - 1]]
    ranges = "".join(
        re.escape(chr(first)) + ("" if first == last else "-" + re.escape(chr(last)))
        for first, last in zip(firsts.tolist(), lasts.tolist(), strict=True)
    )
    return re.compile(f"[{ranges}\U00010000-\U0010ffff]")


def _frozen(offsets: OffsetArray) -> OffsetArray:
    offsets.setflags(write=False)
    return offsets


# U+0000 first: only then is charmap_build's result its fast EncodingMap, not a dict.
_ASCII = "\x00\t\n\r" + "".join(map(chr, range(0x20, 0x7F)))
