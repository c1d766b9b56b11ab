"""Haystack ``DocumentSplitter``'s units as offsets: a text cut into words, sentences,
passages, pages or lines that tile it, grouped ``length`` at a time with ``overlap`` units
shared; and the overlap of token-budget chunks.

Words, passages, pages and lines end at the delimiter Haystack splits on (``" "``,
``"\\n\\n"``, ``"\\f"``, ``"\\n"``), which stays with the unit before it; sentences come from
ragkit's multilingual boundaries (:func:`ragkit.chunking.sentences.sentence_spans`: numbers,
abbreviations and the terminators of Arabic, Ethiopic, CJK… kept right), each with the
whitespace after it.

Example:
    >>> text = "Dr. Smith left. He came back! Then? Fin."
    >>> [text[s:e] for s, e in windows(unit_spans(text, "sentence", "en"), 2, 1)]
    ['Dr. Smith left. He came back! ', 'He came back! Then? ', 'Then? Fin.']
    >>> [text[s:e] for s, e in windows(unit_spans(text, "word", "en"), 4, 0)]
    ['Dr. Smith left. He ', 'came back! Then? Fin.']
"""

import re
from collections.abc import Sequence
from itertools import pairwise

from ragkit.chunking import Chunk, TokenCounter
from ragkit.chunking.sentences import sentence_spans
from ragkit.chunking.types import Span

DELIMITERS = {"word": " ", "passage": "\n\n", "page": "\f", "line": "\n"}
UNITS = ("word", "sentence", "passage", "page", "line")
_WORD = re.compile(r"\S+")


def unit_spans(text: str, unit: str, language: str) -> list[Span]:
    """``text`` cut into ``unit`` s (one of :data:`UNITS`) that tile it, in order (the last
    one empty when the text ends with a delimiter, as Haystack's are)."""
    if unit == "sentence":
        cuts = [0, *(start for start, _ in sentence_spans(text, language=language)[1:])]
    else:
        delimiter, cuts = DELIMITERS[unit], [0]
        found = text.find(delimiter)
        while found >= 0:
            cuts.append(found + len(delimiter))
            found = text.find(delimiter, found + len(delimiter))
    cuts.append(len(text))
    return list(pairwise(cuts))


def windows(units: Sequence[Span], length: int, overlap: int) -> list[Span]:
    """Spans of ``length`` consecutive units, each starting ``length - overlap`` units after
    the one before, until one reaches the last unit; a window that would add only empty
    units past those already covered is left out (Haystack's ``_concatenate_units``)."""
    spans: list[Span] = []
    covered = 0
    for first in range(0, len(units), length - overlap):
        window = units[first : first + length]
        fresh = units[max(first, covered) : first + length]
        if not (overlap and spans and all(start == end for start, end in fresh)):
            spans.append((window[0][0], window[-1][1]))
        covered = max(covered, first + len(window))
        if first + length >= len(units):
            break
    return spans


def overlapped(text: str, chunks: Sequence[Chunk], overlap: int, count: TokenCounter) -> list[Span]:
    """Each chunk's span, a chunk after the first reaching back over the last whole words
    of the chunk before it that hold at most ``overlap`` tokens together (never its first
    word), as ragkit's ``fixed`` chunker overlaps its windows."""
    spans = [(chunk.start, chunk.end) for chunk in chunks]
    for position in range(1, len(chunks) if overlap else 0):
        before = chunks[position - 1]
        words = [m.start() for m in _WORD.finditer(text, before.start, before.end)][1:]
        start, shared = before.end, 0
        for word in reversed(words):
            shared += max(1, count(text[word:start].strip()))
            if shared > overlap:
                break
            start = word
        spans[position] = (min(start, chunks[position].start), chunks[position].end)
    return spans


def page_number(text: str, start: int, end: int) -> int:
    """The page ``text[start:end]`` is on: one plus the form feeds before it, and those it
    opens with, unless it is nothing but form feeds (an empty page stays on its page)."""
    first = start
    while first < end and text[first] == "\f":
        first += 1
    return text.count("\f", 0, start if first == end else first) + 1
