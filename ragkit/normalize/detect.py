"""Script and language detection, per document and per span.

Script comes from Unicode blocks; language from the bundled py3langid model (its naive Bayes
model ships inside the wheel as an npz file, no pickle, no download), restricted to the
languages that write the detected script. Two decisions py3langid cannot make are rules:

* Ge'ez script: py3langid knows Amharic only. Tigrinya writes ኣ (U+12A3) where Amharic writes
  አ (U+12A0) and uses the ቐ row (U+1250–U+125D) that Amharic lacks; either marker → ``ti``.
* Arabic script: py3langid's Kurdish labels (``ku``, ``sdh``) become ``ckb`` (Sorani, the
  Kurdish written in Arabic script), and Sorani-only letters (ڕ ڵ ێ ۆ ە) decide it outright.

Example:
    >>> detect_script("ሰላም ነው")
    'Ethi'
    >>> detect_language("کتاب خوب است و پدر من آمد")
    'fa'
    >>> [(s.script, s.language) for s in detect_spans("Hello world. مرحبا بكم في البيت")]
    [('Latn', 'en'), ('Arab', 'ar')]
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

_BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latn"),
    (0x0370, 0x03FF, "Grek"),
    (0x0400, 0x04FF, "Cyrl"),
    (0x0590, 0x05FF, "Hebr"),
    (0x0600, 0x06FF, "Arab"),
    (0x0750, 0x077F, "Arab"),
    (0x08A0, 0x08FF, "Arab"),
    (0xFB50, 0xFDFF, "Arab"),
    (0xFE70, 0xFEFF, "Arab"),
    (0x0900, 0x097F, "Deva"),
    (0x1200, 0x139F, "Ethi"),
    (0x2D80, 0x2DDF, "Ethi"),
    (0xAB00, 0xAB2F, "Ethi"),
    (0x4E00, 0x9FFF, "Hani"),
)

# Languages py3langid may answer for each script; the first is the default for short text.
SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "Arab": ("ar", "fa", "ur", "ku", "sdh", "ps", "ug", "arz", "ary"),
    "Latn": ("en", "fr", "de", "es", "it", "pt", "nl", "id", "tr", "sw", "so", "ha", "om"),
    "Ethi": ("am",),
    "Cyrl": ("ru", "uk", "bg", "sr", "kk", "mk", "be"),
    "Grek": ("el",),
    "Hebr": ("he",),
    "Deva": ("hi", "mr", "ne"),
    "Hani": ("zh",),
}
_LANGUAGE_ALIASES = {"ku": "ckb", "sdh": "ckb", "arz": "ar", "ary": "ar"}
_SORANI_LETTERS = frozenset("ڕڵێۆە")
_TIGRINYA_A = "\u12a3"
_AMHARIC_A = "\u12a0"
_SHORT_TEXT = 12  # letters; below this the identifier is a coin toss, the default answers


@dataclass(frozen=True)
class Span:
    """A run of text in one script: ``text[start:end]``, with its guessed language."""

    start: int
    end: int
    script: str
    language: str


def script_of(char: str) -> str | None:
    """The script of one character, or ``None`` for digits, punctuation and spaces.

    Example:
        >>> script_of("ب"), script_of("7")
        ('Arab', None)
    """
    code = ord(char)
    for low, high, name in _BLOCKS:
        if low <= code <= high:
            return name if char.isalpha() or name != "Latn" else None
    return None


def detect_script(text: str, sample_chars: int = 20_000) -> str:
    """The ISO 15924 code of the script most letters of ``text`` use, or ``"Zyyy"`` if none."""
    counts = Counter(s for s in map(script_of, text[:sample_chars]) if s)
    return counts.most_common(1)[0][0] if counts else "Zyyy"


@functools.cache
def _identifier(script: str) -> LanguageIdentifier:
    base = _base_identifier()
    restricted = copy.copy(base)
    restricted.set_languages([code for code in SCRIPT_LANGUAGES[script] if code in base.labels])
    return restricted


@functools.cache
def _base_identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


def detect_language(text: str, script: str | None = None, sample_chars: int = 4_000) -> str:
    """ISO 639 code of the language of ``text`` (``"und"`` when there are no letters).

    Example:
        >>> detect_language("ئەمە کتێبێکی باشە")
        'ckb'
        >>> detect_language("ኣብ ትግራይ ዝርከብ")
        'ti'
    """
    script = script or detect_script(text)
    sample = text[:sample_chars]
    if script == "Ethi":
        tigrinya = sample.count(_TIGRINYA_A) > sample.count(_AMHARIC_A) or any(
            "\u1250" <= char <= "\u125d" for char in sample
        )
        return "ti" if tigrinya else "am"
    if script == "Arab" and not _SORANI_LETTERS.isdisjoint(sample):
        return "ckb"
    candidates = SCRIPT_LANGUAGES.get(script)
    if not candidates:
        return "und"
    if len(candidates) == 1 or sum(char.isalpha() for char in sample) < _SHORT_TEXT:
        return _LANGUAGE_ALIASES.get(candidates[0], candidates[0])
    language, _ = _identifier(script).classify(sample)
    return _LANGUAGE_ALIASES.get(language, language)


def detect_spans(text: str, min_letters: int = 3) -> list[Span]:
    """Split ``text`` into runs of one script (neutral characters join the run before them).

    Runs with fewer than ``min_letters`` letters merge into their left neighbour, so a stray
    foreign word does not split a sentence.
    """
    runs: list[list[int | str]] = []  # [start, end, script, letters]
    for index, char in enumerate(text):
        script = script_of(char)
        if script is None or (runs and runs[-1][2] == script):
            if runs:
                runs[-1][1] = index + 1
                runs[-1][3] = int(runs[-1][3]) + (script is not None)
            continue
        runs.append([index, index + 1, script, 1])
    merged: list[list[int | str]] = []
    for run in runs:
        if merged and (int(run[3]) < min_letters or merged[-1][2] == run[2]):
            merged[-1][1] = run[1]
        else:
            merged.append(run)
    if not merged:
        return [Span(0, len(text), "Zyyy", "und")] if text else []
    merged[0][0] = 0
    return [
        Span(int(s), int(e), str(script), detect_language(text[int(s) : int(e)], str(script)))
        for s, e, script, _ in merged
    ]
