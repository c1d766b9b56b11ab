"""Script detection from Unicode blocks (per document; language follows from script).

Example:
    >>> detect_script("السلام عليكم")
    'Arab'
    >>> detect_script("ሰላም ነው")
    'Ethi'
"""

from __future__ import annotations

from collections import Counter

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

# The language a script most likely stands for, until per-span language identification lands.
SCRIPT_LANGUAGE: dict[str, str] = {
    "Latn": "en",
    "Arab": "ar",
    "Ethi": "am",
    "Cyrl": "ru",
    "Grek": "el",
    "Hebr": "he",
    "Deva": "hi",
    "Hani": "zh",
}

# Persian-only letters (peh, tcheh, jeh, gaf, Farsi yeh, keheh) tell Persian apart from Arabic.
_PERSIAN_MARKERS = frozenset("پچژگیک")


def _script_of(char: str) -> str | None:
    code = ord(char)
    for low, high, name in _BLOCKS:
        if low <= code <= high:
            return name if char.isalpha() or name != "Latn" else None
    return None


def detect_script(text: str, sample_chars: int = 20_000) -> str:
    """The ISO 15924 code of the script most letters of ``text`` use, or ``"Zyyy"`` if none."""
    counts = Counter(s for s in map(_script_of, text[:sample_chars]) if s)
    return counts.most_common(1)[0][0] if counts else "Zyyy"


def detect_language(text: str, script: str | None = None) -> str:
    """A best-guess ISO 639-1 language from the script (Persian told apart by its letters).

    Example:
        >>> detect_language("کتاب خوب است و پدر")
        'fa'
    """
    script = script or detect_script(text)
    if script == "Arab":
        sample = text[:20_000]
        persian = sum(1 for c in sample if c in _PERSIAN_MARKERS)
        arabic_letters = sum(1 for c in sample if "\u0600" <= c <= "\u06ff")
        return "fa" if arabic_letters and persian / arabic_letters > 0.02 else "ar"
    return SCRIPT_LANGUAGE.get(script, "und")
