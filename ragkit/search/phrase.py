"""Phrase evidence: a chunk holding the query's terms side by side, in the query's order, ranks
above the chunks that do not.

A query of several words that one chunk holds as written is most often a lookup (a sentence
copied from a document, a title, a name): its terms, adjacent and in order, are evidence
that neither BM25 (which ignores order) nor the dense list (which blurs words into a meaning)
gives. The terms compared are ragkit's analyzed terms as the index stores them (stems, Arabic
exact words next to their stems, without stopwords), so "the design of the wing" matches a
chunk saying "design of a wing". Only the sparse list's top :data:`CANDIDATES` chunks are
checked (a chunk holding the whole phrase is among them), and only queries of at least
:data:`MIN_TERMS` words (a two-word phrase is too common to say "this passage"; an Arabic word
counts once though it is two terms, its stem and its exact form).

Every matching chunk is lifted by the ranking's top score, so the matching chunks come first
in their own order and the rest follow in theirs; hits stay chunks with their offsets.

Example:
    >>> holds_phrase(["wing", "flutter", "speed"], ["low", "wing", "flutter", "speed", "test"])
    True
    >>> holds_phrase(["wing", "flutter", "speed"], ["speed", "flutter", "wing"])
    False
    >>> phrase_first([(1, 0.9), (2, 0.6), (3, 0.5)], {3})
    [(3, 1.4), (1, 0.9), (2, 0.6)]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from ragkit.search.fusion import Ranking
from ragkit.search.sparse import EXACT

__all__ = [
    "CANDIDATES",
    "MIN_TERMS",
    "PHRASE_CHOICES",
    "PhraseEvidence",
    "holds_phrase",
    "phrase_first",
    "phrase_words",
    "uses_phrase",
]

PhraseEvidence = Literal["auto", "off", "on"]
PHRASE_CHOICES: tuple[str, ...] = ("auto", "off", "on")
MIN_TERMS = 3
CANDIDATES = 20
# Languages where ``phrase_evidence = "auto"`` turns it on: none. On the tuning part of
# benchmarks/feedback.py it won every literal-span set (English and Arabic, +0.06 to +0.14
# nDCG@10) and lost the short topical heading queries of the Debian handbook (English -0.042,
# Arabic -0.033: tables of contents and cross-references quote headings word for word), at
# every minimum length and lift tried. Languages cut into SentencePiece pieces would stay out
# in any case: three pieces can be one word.
AUTO_PHRASE: frozenset[str] = frozenset()


def uses_phrase(setting: str, languages: Sequence[str]) -> bool:
    """Whether a search adds phrase evidence under ``setting`` for ``languages``.

    Example:
        >>> uses_phrase("auto", ["en"]), uses_phrase("on", []), uses_phrase("off", ["en"])
        (False, True, False)
    """
    if setting == "auto":
        return bool(languages) and all(language in AUTO_PHRASE for language in languages)
    return setting == "on"


def phrase_words(terms: Sequence[str]) -> int:
    """How many words ``terms`` stand for (an exact term shares its stem's word).

    Example:
        >>> phrase_words(["ايم", "=الايمان", "والنذور", "=والنذور"]), phrase_words(["wing"])
        (2, 1)
    """
    return sum(not term.startswith(EXACT) for term in terms)


def holds_phrase(query: Sequence[str], chunk: Sequence[str]) -> bool:
    """Whether ``chunk``'s terms hold ``query``'s side by side and in order.

    Example:
        >>> holds_phrase(["a", "b"], ["x", "a", "b"]), holds_phrase(["a", "b"], ["b", "a"])
        (True, False)
    """
    size = len(query)
    if not size or size > len(chunk):
        return False
    wanted = list(query)
    first = wanted[0]
    return any(
        chunk[start] == first and list(chunk[start : start + size]) == wanted
        for start in range(len(chunk) - size + 1)
    )


def phrase_first(ranking: Ranking, matching: Collection[int]) -> Ranking:
    """``ranking`` with each chunk of ``matching`` lifted by the ranking's top score (so above
    every other chunk, scores being ≥ 0), sorted again (best first, ties by chunk id)."""
    if not ranking or not matching:
        return ranking
    lift = max(score for _, score in ranking)
    rescored = [(chunk, score + lift if chunk in matching else score) for chunk, score in ranking]
    return sorted(rescored, key=lambda item: (-item[1], item[0]))
