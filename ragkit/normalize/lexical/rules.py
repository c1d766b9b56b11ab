"""Rule-made candidates: dropped-g endings (``cussin`` → ``cussing``) and abbreviations.

An abbreviation keeps a word's first letter and some of its other letters in order (``frnd`` →
``friend``, ``prob`` → ``probably``, ``govt`` → ``government``); :class:`AbbreviationIndex`
finds the most frequent vocabulary words a token could abbreviate.

Example:
    >>> g_dropping_forms("cussin"), g_dropping_forms("fuckn"), g_dropping_forms("in")
    (['cussing'], ['fucking'], [])
    >>> AbbreviationIndex({"friend": 5.5, "fried": 4.0, "find": 5.8, "friendly": 4.9}).expansions("frnd")
    ['friend', 'friendly']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

MAX_ABBREVIATIONS = 3
MIN_ABBREVIATION = 3
_VOWELS = set("aeiou")


def g_dropping_forms(token: str) -> list[str]:
    """The ``-ing`` form of a token that drops the g (``-in``, ``-in'``) or the ``i`` and g (``-n``).

    Example:
        >>> g_dropping_forms("nothin'"), g_dropping_forms("chilln"), g_dropping_forms("rain")
        (['nothing'], ['chilling'], ['raing'])
    """
    if len(token) < 4 or not token.isascii():
        return []
    if token.endswith("in'"):
        return [token[:-1] + "g"]
    if token.endswith("in"):
        return [token + "g"]
    if token.endswith("n") and token[-2].isalpha() and token[-2] not in _VOWELS:
        return [token[:-1] + "ing"]
    return []


def is_abbreviation(short: str, word: str) -> bool:
    """Whether ``short`` keeps ``word``'s first letter and some of its others, in order.

    Example:
        >>> is_abbreviation("govt", "government"), is_abbreviation("vgot", "government")
        (True, False)
    """
    if not short or not word or short[0] != word[0]:
        return False
    letters = iter(word[1:])
    return all(char in letters for char in short[1:])


class AbbreviationIndex:
    """The words of a vocabulary a token could abbreviate, most frequent first.

    Only tokens of :data:`MIN_ABBREVIATION` letters or more are expanded, to words at least two
    letters longer; at most :data:`MAX_ABBREVIATIONS` per token.
    """

    def __init__(self, vocabulary: Mapping[str, float]) -> None:
        by_letter: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for word, zipf in vocabulary.items():
            if word.isascii() and word.isalpha():
                by_letter[word[0]].append((-zipf, word))
        self._by_letter = {
            letter: [w for _, w in sorted(words)] for letter, words in by_letter.items()
        }
        self._cache: dict[str, list[str]] = {}

    def expansions(self, token: str) -> list[str]:
        """Up to :data:`MAX_ABBREVIATIONS` words ``token`` abbreviates, most frequent first."""
        if len(token) < MIN_ABBREVIATION or not token.isascii() or not token.isalpha():
            return []
        if token not in self._cache:
            found: list[str] = []
            for word in self._by_letter.get(token[0], []):
                if len(word) >= len(token) + 2 and is_abbreviation(token, word):
                    found.append(word)
                    if len(found) == MAX_ABBREVIATIONS:
                        break
            self._cache[token] = found
        return self._cache[token]
