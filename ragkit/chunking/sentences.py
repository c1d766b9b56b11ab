"""Multilingual sentence boundaries with per-language abbreviation lists.

A sentence ends at a terminator — ``. ! ? …`` (Latin), ``؟ ۔`` (Arabic, Urdu), ``። ፧ ፨``
(Ethiopic), ``।`` (Devanagari), ``。！？`` (CJK) — optionally followed by closing quotes or
brackets, then whitespace or the end of the text. It never ends inside a number (``3.14``,
``1,000.5``: no whitespace follows the point), after a listed abbreviation (``Dr.``, ``e.g.``,
``د.``, ``ዓ.ም.``), after a single initial (``J. Smith``) or after a line-leading list number
(``1. Scope``). Newline rules: a blank line always ends a sentence; a single newline ends one
unless the line before ends mid-clause (a letter, digit or comma) and the next line starts in
lower case (hard-wrapped prose); a line that starts with a list marker or heading mark starts a
new sentence.

Example:
    >>> text = "Dr. Smith paid 3.50 dollars. Then he left! ما هذا؟ ሰላም ነው። Fin"
    >>> [text[s:e] for s, e in sentence_spans(text)]
    ['Dr. Smith paid 3.50 dollars.', 'Then he left!', 'ما هذا؟', 'ሰላም ነው።', 'Fin']
"""

from __future__ import annotations

import re

from ragkit.chunking.types import Span

TERMINATORS = ".!?…؟۔።፧፨।。！？"
_NO_SPACE_NEEDED = "。！？።፧፨"  # these end a sentence even when text follows directly
_CLOSERS = "\"'”’»)]}›"
_END = re.compile(
    rf"[{re.escape(TERMINATORS)}]+[{re.escape(_CLOSERS)}]*(?=\s|$)"
    rf"|[{re.escape(_NO_SPACE_NEEDED)}]+[{re.escape(_CLOSERS)}]*"
)
_NEWLINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)*")
_LIST_START = re.compile(r"\s*(?:[-*+•]|\d+[.)]|#{1,6})\s")
_WORD_BEFORE = re.compile(r"(\S+)$")
_LEADING_NUMBER = re.compile(r"(?:^|\n)[ \t]*\d{1,3}$")


def _words(listing: str) -> frozenset[str]:
    return frozenset(listing.split())


# Abbreviations that end with a period but not a sentence (compared case-insensitively, without
# the final period). Maintained per language; every list is checked, since documents mix.
ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": _words(
        "mr mrs ms dr prof sr jr st mt vs etc e.g i.e cf al approx fig figs eq eqs no "
        "nos vol vols pp p ch sec secs ref refs ed eds inc ltd co corp dept univ jan "
        "feb mar apr jun jul aug sep sept oct nov dec est min max gen col lt capt sgt "
        "rev hon ave blvd u.s u.k a.m p.m ph.d b.sc m.sc viz resp approx. ca op ibid "
        "art para tab"
    ),
    "fr": _words("m mme mlle mm dr pr p.ex cf etc chap env av apr art vol"),
    "de": _words("z.b bzw usw dr nr ca vgl s abs art bd hrsg d.h u.a evtl ggf"),
    "es": _words("sr sra srta dr dra ud uds etc pág art núm vol"),
    # Arabic: د. (doctor), أ. (professor), ص. (page), ج. (volume), هـ. (hijri year),
    # م. (year AD), ت. (died), ط. (edition).
    "ar": _words("د أ أد ص ج هـ م ت ط ق"),
    # Persian/Urdu abbreviations are rarely dotted; the Latin forms cover transliterations.
    "fa": _words("ص ج ه.ش ه.ق"),
    # Amharic: ዓ.ም (Ethiopian calendar year), ዓ.ዓ (before the era), ት.ቤት (school).
    "am": _words("ዓ.ም ዓ.ዓ ት.ቤት ዶ.ር ም.ም"),
}
_ALL_ABBREVIATIONS = frozenset().union(*ABBREVIATIONS.values())


def _is_abbreviation(text: str, stop: int, language: str) -> bool:
    """Whether the period at ``text[stop]`` closes an abbreviation or an initial."""
    match = _WORD_BEFORE.search(text, max(0, stop - 48), stop)
    if not match:
        return False
    word = match.group(1).lstrip("(\"'«“").lower()
    table = ABBREVIATIONS.get(language.split("-")[0], frozenset()) | _ALL_ABBREVIATIONS
    if word in table or word.rstrip(".") in table:
        return True
    bare = word.replace(".", "")
    if len(bare) == 1 and bare.isalpha() and match.group(1)[-1:].isupper():
        return True  # an initial such as "J." in "J. Smith"
    return bool(_LEADING_NUMBER.search(text, max(0, stop - 8), stop))  # "1." opening a list item


def _soft_newline(text: str, newline: int, after: int) -> bool:
    """A single newline inside hard-wrapped prose (no sentence boundary)."""
    before = text[newline - 1] if newline else ""
    nxt = text[after] if after < len(text) else ""
    if _LIST_START.match(text, after):
        return False
    return (before.isalnum() or before in ",،;") and nxt.islower()


def sentence_spans(
    text: str, start: int = 0, end: int | None = None, language: str = ""
) -> list[Span]:
    """Sentence spans of ``text[start:end]``, trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    cuts: list[tuple[int, int]] = []  # (sentence end, next sentence search start)
    for match in _END.finditer(text, start, end):
        single_period = match.group().rstrip(_CLOSERS) == "."
        if single_period and _is_abbreviation(text, match.start(), language):
            continue
        cuts.append((match.end(), match.end()))
    for match in _NEWLINES.finditer(text, start, end):
        if "\n" in match.group()[1:] or not _soft_newline(text, match.start(), match.end()):
            cuts.append((match.start(), match.end()))
    cuts.sort()
    spans: list[Span] = []
    position = start
    for stop, resume in cuts:
        if stop > position:
            _append_trimmed(text, position, stop, spans)
        position = max(position, resume)
    _append_trimmed(text, position, end, spans)
    return spans


def _append_trimmed(text: str, start: int, end: int, spans: list[Span]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))
