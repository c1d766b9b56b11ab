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

import functools
import itertools
import re
import unicodedata
from typing import Literal
from unicodedata import normalize

import numpy as np

from ragkit.normalize.base import (
    CharMap,
    Normalized,
    OffsetArray,
    RegexSub,
    RunCollapse,
    Step,
    as_offsets,
    counting,
)
from ragkit.normalize.pipeline import Pipeline

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


class UnicodeForm(Step):
    r"""Apply NFC or NFKC with an exact offset map, built cluster by cluster.

    Only words (between spaces) that are not already in the form are looked at. Inside them the
    text is cut into the smallest pieces that normalize independently: base characters and runs of
    combining marks, each merged with the piece before it when the two interact (``e`` +
    U+0301, Hangul jamo). Every output character points at the start of
    its piece, so the original span behind any run of output normalizes to exactly that run:
    ``ﬁ`` → ``fi`` both point at ``ﬁ``; ``e`` + U+0301 → ``é`` points at the ``e``.

    Example:
        >>> out = UnicodeForm("NFKC")("ﬁnal cafe\u0301")
        >>> out.text, out.offsets.tolist()
        ('final café', [0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    """

    def __init__(self, form: UnicodeFormName = "NFC") -> None:
        if form not in ("NFC", "NFKC"):
            raise ValueError(f"unknown Unicode form {form!r}: use 'NFC' or 'NFKC'")
        self.form: UnicodeFormName = form
        self.name = form.lower()

    def unchanged(self, text: str) -> bool:
        return _is_normalized(self.form, text)

    def triggers(self) -> str:
        return unstable_characters(self.form)

    def apply(self, text: str) -> Normalized:
        form = self.form
        if _is_normalized(form, text):
            return Normalized.identity(text)
        words = text.split(" ")  # a space composes with nothing: a safe place to cut
        changed = [index for index, word in enumerate(words) if not _is_normalized(form, word)]
        starts = list(itertools.accumulate((len(word) + 1 for word in words), initial=0))
        parts: list[str] = []
        segments: list[OffsetArray] = []
        copied = 0  # text[:copied] is in parts
        for index in changed:
            start, word = starts[index], words[index]
            normalized, offsets = (_cached_word if len(word) <= 64 else _word)(form, word)
            parts += [text[copied:start], normalized]
            segments += [counting(start)[copied:], offsets + start]
            copied = start + len(word)
        parts.append(text[copied:])
        segments.append(counting(len(text))[copied:])
        return Normalized("".join(parts), as_offsets(np.concatenate(segments)), len(text))


def _word(form: UnicodeFormName, word: str) -> tuple[str, OffsetArray]:
    """``word`` normalized, with offsets into it built from its pieces (:func:`_pieces`).

    A piece equal to the original at its origin is a copy (one to one); any other piece
    points at its origin as a whole.

    Example:
        >>> normalized, offsets = _word("NFKC", "ﬁx")
        >>> normalized, offsets.tolist()
        ('fix', [0, 0, 1])
    """
    pieces = _pieces(form, word)
    origins = [origin for origin, _ in pieces]
    lengths = [len(piece) for _, piece in pieces]
    copies = [word.startswith(piece, origin) for origin, piece in pieces]
    starts = np.cumsum(lengths) - lengths
    within = np.arange(sum(lengths)) - np.repeat(starts, lengths)
    offsets = np.repeat(origins, lengths) + within * np.repeat(copies, lengths)
    return "".join(piece for _, piece in pieces), as_offsets(offsets)


_cached_word = functools.lru_cache(maxsize=1 << 16)(_word)  # words repeat


def _pieces(form: UnicodeFormName, word: str) -> list[tuple[int, str]]:
    """``(origin, normalized piece)`` for the independently normalizing pieces of ``word``.

    Clusters (:func:`_clusters`) are normalized one by one; when their concatenation is not the
    word's normalization, a cluster that interacts with the one before it (``e`` + U+0301,
    Hangul jamo) is merged into it. The whole word is one piece when even that fails.

    Example:
        >>> _pieces("NFC", "fe\u0301") == [(0, "f"), (1, "\u00e9")]
        True
    """
    whole = normalize(form, word)
    clusters = _clusters(word)
    pieces = [(origin, _normalized(form, cluster)) for origin, cluster in clusters]
    if "".join(piece for _, piece in pieces) == whole:
        return pieces
    groups: list[tuple[int, str]] = []  # (origin, original text)
    for origin, cluster in clusters:
        if groups:
            previous_origin, previous = groups[-1]
            joined = normalize(form, previous + cluster)
            if joined != _normalized(form, previous) + _normalized(form, cluster):
                groups[-1] = (previous_origin, previous + cluster)
                continue
        groups.append((origin, cluster))
    pieces = [(origin, _normalized(form, group)) for origin, group in groups]
    return pieces if "".join(piece for _, piece in pieces) == whole else [(0, whole)]


@functools.lru_cache(maxsize=1 << 14)
def _normalized(form: UnicodeFormName, cluster: str) -> str:
    return normalize(form, cluster)


def _clusters(word: str) -> list[tuple[int, str]]:
    r"""Each base character alone, then the run of combining marks after it, with origins.

    Marks stay together (normalization reorders them among themselves); a base and its marks
    are merged again by :func:`_pieces` only when they compose, so a base that normalization
    leaves alone keeps its own offset (Arabic shadda + fatha are reordered, the letter under
    them is not).

    Example:
        >>> [(origin, len(cluster)) for origin, cluster in _clusters("ab\u0651\u064e")]
        [(0, 1), (1, 1), (2, 2)]
    """
    clusters: list[tuple[int, str]] = []
    for index, char in enumerate(word):
        if index and unicodedata.combining(char) and unicodedata.combining(word[index - 1]):
            clusters[-1] = (clusters[-1][0], clusters[-1][1] + char)
        else:
            clusters.append((index, char))
    return clusters


@functools.cache
def unstable_characters(form: UnicodeFormName) -> str:
    """The BMP characters ``form`` may change in some text; a text without any is in ``form``.

    Those that ``form`` changes on their own, combining marks (reordered among themselves) and
    those that may compose with the character before them (the second of a canonical pair,
    Hangul jamo): the characters whose quick-check value is not "yes", or whose combining class
    is not 0. Characters outside the BMP are not listed: text holding one never takes
    a :class:`~ragkit.normalize.translation.TranslationTable`.

    Example:
        >>> [char in unstable_characters("NFKC") for char in ("\ufefb", "\u0301", "a", "ب")]
        [True, True, False, False]
    """
    found: set[str] = {chr(code) for code in range(0x1100, 0x1200)}  # Hangul jamo
    for code in itertools.chain(range(0xD800), range(0xE000, 0x10000)):
        char = chr(code)
        if unicodedata.combining(char) or normalize(form, char) != char:
            found.add(char)
        decomposition = unicodedata.decomposition(char).split()
        if len(decomposition) == 2 and not decomposition[0].startswith("<"):
            found.add(chr(int(decomposition[1], 16)))
    return "".join(sorted(found))


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
                RunCollapse(" ", name="space-runs"),
                LineBreaks(),
            ],
            name="whitespace",
        )


class LineBreaks(RegexSub):
    r"""Spaces around a line break go; two or more breaks (a paragraph) become exactly two.

    Example:
        >>> LineBreaks()("a \n b\n\n\n\nc").text
        'a\nb\n\nc'
    """

    def __init__(self) -> None:
        super().__init__(r" ?\n[ \n]*", _line_break, name="line-breaks", triggers="\n")

    def unchanged(self, text: str) -> bool:
        # A break changes only with a space beside it or two more breaks after it.
        return "\n" not in text or (
            " \n" not in text and "\n " not in text and "\n\n\n" not in text
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
