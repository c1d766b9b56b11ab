r"""Unicode hygiene: normalization form, invisible controls, whitespace — all with offsets.

Policy (why each form):

* **NFKC** for Arabic-script and Latin-script text: PDFs and legacy encodings emit Arabic
  presentation forms (U+FB50–U+FDFF, U+FE70–U+FEFF: ``ﻻ`` → ``لا``) and Latin ligatures
  (``ﬁ`` → ``fi``), full-width letters and NBSPs, which only the compatibility forms fold.
* **NFC** for everything else (Ge'ez included): compatibility folding has nothing to gain there
  and can lose distinctions (e.g. superscripts, circled numbers in CJK text).

Invisible characters: zero-width space/joiner, word joiner, BOM, soft hyphen, bidi embedding,
override, isolate and mark characters (U+200E/F, U+202A–E, U+2066–9, U+061C) and C0/C1
controls other than tab and newline are deleted. ZWNJ (U+200C) is orthographic in Persian,
Sorani and Urdu (``می‌خواهم``) and kept there; elsewhere it is deleted.

Example:
    >>> text = InvisibleCharacters(keep_zwnj=True)("می\u200cخواهم\u200f  ﻻ")
    >>> Whitespace()(UnicodeForm("NFKC")(text)).text
    'می\u200cخواهم لا'
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal
from unicodedata import normalize

import numpy as np

from ragkit.normalize.base import (
    CharMap,
    Normalized,
    Pipeline,
    RegexSub,
    Step,
    as_offsets,
    spread_offsets,
)

UnicodeFormName = Literal["NFC", "NFKC"]

ZWNJ = "\u200c"
TATWEEL = "\u0640"
ZWNJ_LANGUAGES = frozenset({"fa", "ckb", "ur", "ps", "ku"})
NFKC_SCRIPTS = frozenset({"Arab", "Latn"})

_INVISIBLE = (
    [chr(c) for c in range(0x20) if chr(c) not in "\t\n"]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + ["\u00ad", "\u061c", "\u180e", "\u200b", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)
_SPACES = "\t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_WORD = re.compile(r"\S+")


class UnicodeForm(Step):
    """Apply NFC or NFKC, word by word, keeping offsets.

    Only words that are not already in the form are touched; inside them the mapping is exact
    per cluster (a base character and its combining marks) and spread over the word otherwise.

    Example:
        >>> out = UnicodeForm("NFKC")("a ﬁne")
        >>> out.text, out.offsets.tolist()
        ('a fine', [0, 1, 2, 2, 3, 4])
    """

    def __init__(self, form: UnicodeFormName = "NFC") -> None:
        if form not in ("NFC", "NFKC"):
            raise ValueError(f"unknown Unicode form {form!r}: use 'NFC' or 'NFKC'")
        self.form: UnicodeFormName = form
        self.name = form.lower()

    def apply(self, text: str) -> Normalized:
        if _is_normalized(self.form, text):
            return Normalized.identity(text)
        parts: list[str] = []
        segments: list[np.ndarray] = []
        run_start = start = 0  # lines in [run_start, start) kept their length: identity offsets
        for line in text.splitlines(keepends=True):
            normalized = line if _is_normalized(self.form, line) else normalize(self.form, line)
            parts.append(normalized)
            if len(normalized) != len(line):
                segments += [
                    np.arange(run_start, start, dtype=np.int32),
                    np.array(self._line(line, start), dtype=np.int32),
                ]
                run_start = start + len(line)
            start += len(line)
        segments.append(np.arange(run_start, start, dtype=np.int32))
        out = "".join(parts)
        offsets = np.concatenate(segments)
        if len(out) != len(offsets):  # a line break itself changed (e.g. U+2028 folded)
            return self._spread(text)
        return Normalized(out, as_offsets(offsets), len(text))

    def _line(self, line: str, start: int) -> list[int]:
        """Offsets for a line whose length changed, word by word."""
        offsets: list[int] = []
        position = 0
        for match in _WORD.finditer(line):
            offsets += self._gap(line[position : match.start()], start + position)
            offsets += self._word(match.group(), start + match.start())[1]
            position = match.end()
        return offsets + self._gap(line[position:], start + position)

    def _gap(self, spaces: str, start: int) -> list[int]:
        normalized = normalize(self.form, spaces)
        return spread_offsets(len(normalized), start, start + len(spaces)).tolist()

    def _word(self, word: str, start: int) -> tuple[str, list[int]]:
        normalized = normalize(self.form, word)
        if len(normalized) == len(word):  # marks reordered or letters mapped one to one
            return normalized, list(range(start, start + len(word)))
        clusters: list[tuple[str, int]] = []
        for index, char in enumerate(word):
            if clusters and unicodedata.combining(char):
                clusters[-1] = (clusters[-1][0] + char, clusters[-1][1])
            else:
                clusters.append((char, index))
        pieces = [(normalize(self.form, c), i) for c, i in clusters]
        if "".join(piece for piece, _ in pieces) != normalized:
            return normalized, spread_offsets(len(normalized), start, start + len(word)).tolist()
        offsets = [start + origin for piece, origin in pieces for _ in piece]
        return normalized, offsets

    def _spread(self, text: str) -> Normalized:
        """Whole-text fallback: normalize and spread offsets word by word of the output."""
        out = normalize(self.form, text)
        return Normalized(out, spread_offsets(len(out), 0, len(text)), len(text))


def _is_normalized(form: UnicodeFormName, text: str) -> bool:
    try:
        return unicodedata.is_normalized(form, text)
    except UnicodeError:
        return False


class InvisibleCharacters(CharMap):
    r"""Delete zero-width, bidi control and control characters (ZWNJ kept when asked).

    Example:
        >>> InvisibleCharacters(keep_zwnj=False)("a\u200bb\u200cc").text
        'abc'
    """

    def __init__(self, keep_zwnj: bool) -> None:
        table = dict.fromkeys(_INVISIBLE, "")
        if not keep_zwnj:
            table[ZWNJ] = ""
        super().__init__(table, name="invisible")


class SpaceCharacters(CharMap):
    r"""Tabs and Unicode space separators (NBSP, thin, ideographic…) become ``' '``.

    Example:
        >>> SpaceCharacters()("a\u00a0b\u3000c").text
        'a b c'
    """

    def __init__(self) -> None:
        super().__init__(dict.fromkeys(_SPACES, " "), name="spaces")


class Whitespace(Pipeline):
    r"""Unicode spaces become ``' '``, runs collapse, spaces at line ends go, 3+ newlines become 2.

    Example:
        >>> Whitespace()("a\u00a0\u00a0 b\n\n\n\nc").text
        'a b\n\nc'
    """

    def __init__(self) -> None:
        super().__init__(
            [
                SpaceCharacters(),
                RegexSub(r"  +", " ", name="space-runs"),
                RegexSub(r" ?\n[ \n]*", _line_break, name="line-breaks"),
            ],
            name="whitespace",
        )


def _line_break(match: re.Match[str]) -> str:
    """Spaces around a line break go; two or more breaks (a paragraph) become exactly two."""
    return "\n\n" if match.group().count("\n") > 1 else "\n"


def unicode_form_for(script: str) -> UnicodeFormName:
    """The normalization form ragkit applies to a script (ISO 15924 code).

    Example:
        >>> unicode_form_for("Arab"), unicode_form_for("Ethi")
        ('NFKC', 'NFC')
    """
    return "NFKC" if script in NFKC_SCRIPTS else "NFC"


# Lone surrogates (a query holding undecodable command-line bytes) reach no tokenizer.
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_only(text: str) -> str:
    """``text`` with lone surrogates (which no tokenizer accepts) replaced by U+FFFD.

    Example:
        >>> text_only("a\\udcff b")
        'a\\ufffd b'
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
