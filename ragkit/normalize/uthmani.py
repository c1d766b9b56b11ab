"""Quranic (Uthmani) orthography to standard (imla'i) spelling, with offsets.

The Uthmani script of printed Qurans spells many words differently from standard Arabic, and
a text in it matches nothing a reader types: العٰلمين for العالمين, ءامنوا for آمنوا, شيـًٔا
for شيئا. :class:`UthmaniSpelling` rewrites those spellings before diacritics are removed:

=========================  ==========================  ======================================
Uthmani                    standard                    rule
=========================  ==========================  ======================================
dagger alef ``ٰ``          ``ا``                       العٰلمين → العالمين, except in the
                                                       words standard spelling writes without
                                                       it too (هٰذا ذٰلك لٰكن إلٰه الرحمٰن
                                                       أولٰئك السمٰوٰت)
``وٰ`` ``ىٰ`` (medial)      ``ا``                       الصلوٰة → الصلاة, فسوّىٰهن → فسواهن
``ءا`` ``ـَٔا``              ``آ``                       ءامنوا → آمنوا, بـَٔايٰت → بآيات
hamza on the line or       seated by its vowels        شيـًٔا → شيئا, تسـَٔلوا → تسألوا,
seatless (``ـٔ``)          (kasra ئ, damma ؤ, fatha    يستهزءون → يستهزئون; a word-initial
                           أ)                          hamza sits on alef
small waw / yeh            ``و`` / ``ي``, dropped      ءايٰتهۦ → آياته, داوۥد → داود
``ۥ ۦ ۧ``                  after a pronoun heh or waw
``ٱلّيل`` ``ٱلّٰتي``         ``الليل`` ``اللاتي``         the second lam written out
=========================  ==========================  ======================================

Other Quranic marks (stop signs, the silent-letter zeros U+06DF/U+06E0, small high letters)
are annotation: the diacritics step removes them. The rules are sure only on Uthmani text —
Modern Standard Arabic writes a dagger alef in هٰذا but never in العالمين — so the step runs on
a line only when asked (``"uthmani"``) or, with ``"auto"``, when the line carries the marks
that only Quranic text uses (alef wasla, small letters and signs, open tanwin:
:func:`is_uthmani`); ``"standard"`` turns it off.

Measured on the Hafs mushaf of ``quran-text`` against its own standard spelling:
``benchmarks/orthography.py``.

Example:
    >>> step = UthmaniSpelling("uthmani")
    >>> step("ٱلۡعَٰلَمِينَ ٱلصَّلَوٰةَ ءَامَنُواْ شَيۡـًٔا هَٰذَا").text
    'ٱلۡعَالَمِينَ ٱلصَّلَاةَ آَمَنُواْ شَيۡئًا هَذَا'
    >>> UthmaniSpelling("auto")("هٰذا كتاب").text  # no Quranic mark: MSA, left alone
    'هٰذا كتاب'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

import numpy as np

from ragkit.normalize.base import Normalized, RegexSub, Step
from ragkit.normalize.pipeline import Pipeline

Orthography = Literal["auto", "uthmani", "standard"]
ORTHOGRAPHIES: tuple[Orthography, ...] = ("auto", "uthmani", "standard")

FATHA = "\u064e\u064b\u08f0"  # fatha, fathatan, open fathatan
DAMMA = "\u064f\u064c\u08f1"
KASRA = "\u0650\u064d\u08f2"
VOWELS = FATHA + DAMMA + KASRA
ALEF, WAW, YEH, ALEF_MAKSURA = "\u0627", "\u0648", "\u064a", "\u0649"
HAMZA, HAMZA_ABOVE, TATWEEL, DAGGER = "\u0621", "\u0654", "\u0640", "\u0670"
_MARK_RANGES = "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u08d3-\u08ff"
_M = f"[{_MARK_RANGES}]*"  # any marks
_MT = f"[{_MARK_RANGES}{TATWEEL}]*"  # marks, tatweel (a dagger alef often sits on one)
_LETTER = "[\u0621-\u063f\u0641-\u064a\u0671]"
_NOT_IN_WORD = f"(?<![\u0621-\u064a\u0671{_MARK_RANGES}])"
# Marks only Quranic text uses: small high/low signs and letters, open tanwin, alef wasla.
_QURANIC_MARK = re.compile("[\u0671\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed\u08f0-\u08f2]")
QURANIC_ONLY_MARKS = "".join(filter(_QURANIC_MARK.match, map(chr, range(0x0600, 0x0900))))
_ARABIC_WORD = re.compile("\\S*[\u0621-\u064a\u0671]\\S*")
# A line is Uthmani when it has at least one Quranic mark per this many Arabic words.
WORDS_PER_MARK = 8
# The hamza: on the line, or seatless (a tatweel carrying hamza above).
_HAMZA = f"(?:{HAMZA}|{TATWEEL}{HAMZA_ABOVE})"
_CONNECTS_LEFT = frozenset("بتثجحخسشصضطظعغفقكلمنهيئ")

# Words standard spelling also writes without the alef of their dagger alef: the dagger is
# dropped (a group keeps what precedes it).
_DAGGER_UNWRITTEN = "|".join(
    [
        f"(ذ{_MT})ٰ(?={_MT}ل{_M}ك)",  # ذلك كذلك ذلكم
        f"(ه{_MT})ٰ(?={_MT}[ذؤ])",  # هذا هذه هذان هؤلاء
        f"(و{_M}ل{_MT})ٰ(?={_MT}ئ)",  # أولئك
        f"({_NOT_IN_WORD}(?:[وف]{_M})?ل{_MT})ٰ(?={_MT}ك{_M}ن)",  # لكن ولكن
        f"(إ{_M}ل{_MT})ٰ(?={_MT}ه)",  # إله
        f"(ح{_M}م{_MT})ٰ(?={_MT}ن)",  # الرحمن
        f"(س{_M}م{_MT})ٰ(?={_MT}و{_MT}ٰ)",  # السموات
    ]
)


def is_uthmani(text: str) -> bool:
    """Whether ``text`` carries the marks of Quranic orthography (one per eight words or more).

    Example:
        >>> is_uthmani("ٱلۡحَمۡدُ لِلَّهِ رَبِّ ٱلۡعَٰلَمِينَ"), is_uthmani("هٰذا الكتاب")
        (True, False)
    """
    marks = len(_QURANIC_MARK.findall(text))
    return marks > 0 and marks * WORDS_PER_MARK >= len(_ARABIC_WORD.findall(text))


def _first_group(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group is not None)


def _hamza_alef(match: re.Match[str]) -> str:
    """``ءا`` → ``آ``, unless the hamza follows a kasra inside the word (سيّـَٔات → سيئات)."""
    letter, marks, vowels = match.group(1), match.group(2), match.group(3)
    if letter == ALEF:  # جاءا: a hamza after a long ā keeps its own alef
        return match.group()
    inside = match.start() > 0 and re.match(
        f"[\u0621-\u064a\u0671{_MARK_RANGES}]", match.string[match.start() - 1]
    )
    if letter and inside and set(marks) & set(KASRA):
        return match.group()
    return letter + marks + "\u0622" + vowels


def _seat(match: re.Match[str]) -> str:
    """A hamza on the line or seatless, seated as standard spelling seats it."""
    letter, before, hamza, own, following = match.groups()
    return letter + before + (_seat_for(letter, before, hamza, own, following) or hamza) + own


def _seat_for(letter: str, before: str, hamza: str, own: str, following: str) -> str | None:
    """The seat (ئ ؤ أ, or ء) for a hamza after ``letter`` + ``before`` with vowel ``own``."""
    previous, vowel = set(before) & set(VOWELS), set(own) & set(VOWELS)
    # Final: nothing follows but the alef that carries a tanwin (جزءًا).
    tanwin_alef = following == ALEF and set(own) & set("\u064b\u08f0")
    final = hamza == HAMZA and (tanwin_alef or not re.match(_LETTER, following))
    if final:  # standard spelling seats a final hamza by the vowel before it, if short
        for vowels, seat in ((KASRA, "\u0626"), (DAMMA, "\u0624"), (FATHA, "\u0623")):
            if previous & set(vowels) and letter not in (ALEF, WAW, YEH):
                return seat
        return None
    if letter == ALEF:  # after a long ā: on the line unless the hamza has kasra (إسرائيل)
        return "\u0626" if vowel & set(KASRA) else HAMZA
    if letter == WAW and not previous:  # after a long ū
        return HAMZA
    if (previous | vowel) & set(KASRA) or (letter == YEH and before and not previous):
        return "\u0626"
    if vowel & set(DAMMA) and following == WAW:  # رءوف, مسئول (before a long ū)
        return "\u0626" if letter in _CONNECTS_LEFT else HAMZA
    if (previous | vowel) & set(DAMMA):
        return "\u0624"
    return "\u0623" if (previous | vowel) & set(FATHA) else HAMZA


def _final_waw_hamza(match: re.Match[str]) -> str:
    """يبدؤا → يبدأ, جزٰؤا → جزاء: a final hamza on waw with a silent alef."""
    return (match.group(1) + HAMZA) if match.group(1) else "\u0623"


# The conversion, in the order the rules must run: (pattern, replacement, name).
_RULES: list[tuple[str, str | Callable[[re.Match[str]], str], str]] = [
    # NFC (and Tanzil's encoding) put marks between tatweel and hamza above; the rules expect
    # the hamza first.
    (
        f"{TATWEEL}([\u064b-\u0653\u0655-\u065f\u06d6-\u06ed\u08f0-\u08f2]+){HAMZA_ABOVE}",
        lambda m: TATWEEL + HAMZA_ABOVE + m.group(1),
        "seatless-order",
    ),
    (
        f"{_NOT_IN_WORD}((?:[وفب]{_M})?ٱ{_M})ل(?={_M}\u0651{_M}(?:ٰ|ي{_M}ل))",
        lambda m: m.group(1) + "لل",
        "double-lam",
    ),
    (_DAGGER_UNWRITTEN, _first_group, "dagger-unwritten"),
    ("([\u0647\u0648][\u064b-\u0652]*)[\u06e5\u06e6]", lambda m: m.group(1), "lengthening"),
    ("[\u06e5\u06e6\u06e7]", lambda m: WAW if m.group() == "\u06e5" else YEH, "small-letters"),
    (
        f"((?:{_LETTER}(?={_M}{_HAMZA}))?)({_M}){_HAMZA}([\u064e\u0653]+)(?:{ALEF}|(?={DAGGER})){DAGGER}?",
        _hamza_alef,
        "hamza-alef",
    ),
    (
        f"{_NOT_IN_WORD}({_MT}){HAMZA}(?={_MT}(?:{_LETTER}|{DAGGER}))",
        lambda m: m.group(1) + "\u0623",
        "initial-hamza",
    ),
    (f"({_LETTER})({_M})({_HAMZA})({_M})(?=(.?))", _seat, "hamza-seat"),
    (
        f"([{ALEF}{DAGGER}]{_M})?\u0624{_M}{ALEF}[\u0652\u06df](?![\u0621-\u064a])",
        _final_waw_hamza,
        "final-waw-hamza",
    ),
    (f"{WAW}{DAGGER}{_M}{ALEF}", ALEF, "waw-alef"),  # الربوٰا → الربا
    (f"{WAW}(?={DAGGER})", "", "waw-seat"),  # الصلوٰة → الصلاة
    (f"{ALEF_MAKSURA}{DAGGER}(?={_M}{_LETTER})", ALEF, "medial-alef-maksura"),
    (f"(?<={ALEF_MAKSURA}){DAGGER}", "", "final-alef-maksura"),
    (DAGGER, ALEF, "dagger-alef"),
]


class UthmaniSpelling(Step):
    """Uthmani spellings rewritten to standard ones, on the lines ``orthography`` selects.

    ``"auto"``: lines :func:`is_uthmani` recognises; ``"uthmani"``: every line;
    ``"standard"``: none (the step is the identity).

    Example:
        >>> out = UthmaniSpelling("uthmani")("ٱلصَّلَوٰةَ")
        >>> out.text, out.offsets.tolist()
        ('ٱلصَّلَاةَ', [0, 1, 2, 3, 4, 5, 6, 8, 9, 10])
    """

    def __init__(self, orthography: Orthography = "auto") -> None:
        if orthography not in ORTHOGRAPHIES:
            raise ValueError(
                f"unknown orthography {orthography!r}: use one of {', '.join(ORTHOGRAPHIES)}"
            )
        self.orthography = orthography
        self.name = f"uthmani-{orthography}"
        steps = [RegexSub(pattern, change, f"uthmani-{name}") for pattern, change, name in _RULES]
        self._rules = Pipeline(steps, name="uthmani")

    def unchanged(self, text: str) -> bool:
        return self.orthography == "standard" or (
            self.orthography == "auto" and not _QURANIC_MARK.search(text)
        )

    def triggers(self) -> str | None:
        if self.orthography == "uthmani":
            return None
        return "" if self.orthography == "standard" else QURANIC_ONLY_MARKS

    def apply(self, text: str) -> Normalized:
        if self.unchanged(text):
            return Normalized.identity(text)
        if self.orthography == "uthmani":
            return self._rules.apply(text)
        parts: list[str] = []
        offsets: list[np.ndarray] = []
        start = 0
        for line in text.splitlines(keepends=True):
            out = self._rules.apply(line) if is_uthmani(line) else Normalized.identity(line)
            parts.append(out.text)
            offsets.append(out.offsets + start)
            start += len(line)
        return Normalized("".join(parts), np.concatenate(offsets), len(text))
