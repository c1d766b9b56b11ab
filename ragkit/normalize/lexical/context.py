"""Corpus context of a candidate: word-pair log counts with its neighbours (``2 go`` → ``to go``).

The counts come from a large edited corpus (:attr:`Resources.corpus_bigrams`), which spells
contractions out and never saw social-media spellings, so neighbours are read as their usual
normalization and contractions are expanded before the lookup.

Example:
    >>> res = Resources.build([("u", "you")], {}, corpus_bigrams={"you are": 8.0, "are going": 7.5})
    >>> corpus_context("u", "r", ["are"], "going", res)  # u read as you
    [8.0, 7.5, 8.0, 7.5, -1.0]
"""

from __future__ import annotations

from collections.abc import Sequence

from ragkit.normalize.lexical.candidates import Resources

_CONTRACTIONS = (
    ("can't", "can not"),
    ("won't", "will not"),
    ("n't", " not"),
    ("'re", " are"),
    ("'s", " is"),
    ("'m", " am"),
    ("'ll", " will"),
    ("'ve", " have"),
    ("'d", " would"),
)


def corpus_words(text: str) -> list[str]:
    """The words of ``text`` as the corpus bigram list writes them: contractions spelled out.

    Example:
        >>> corpus_words("you're going"), corpus_words("don't"), corpus_words("")
        (['you', 'are', 'going'], ['do', 'not'], [''])
    """
    for short, long in _CONTRACTIONS:
        text = text.replace(short, long)
    return text.split() or [""]


def _usual(token: str, resources: Resources) -> str:
    """``token``'s most frequent normalization in the lexicon (itself when none)."""
    counts = resources.lexicon.get(token)
    return max(counts, key=counts.__getitem__) if counts else token


def corpus_context(
    left: str, replaced: str, words: Sequence[str], right: str, resources: Resources
) -> list[float]:
    """Corpus bigram log counts: left word + candidate, candidate + right word, their gains over
    the replaced text, and of a split's first two words (−1 for a single word).

    The neighbours are read as their usual normalization (``u`` as ``you``) and contractions
    are spelled out, as the corpus list writes them.
    """
    before = corpus_words(_usual(left, resources))[-1]
    after = corpus_words(_usual(right, resources))[0]
    inner = corpus_words(" ".join(words))
    old = corpus_words(replaced)
    left_log = resources.corpus_bigram(before, inner[0])
    right_log = resources.corpus_bigram(inner[-1], after)
    return [
        left_log,
        right_log,
        left_log - resources.corpus_bigram(before, old[0]),
        right_log - resources.corpus_bigram(old[-1], after),
        resources.corpus_bigram(inner[0], inner[1]) if len(inner) > 1 else -1.0,
    ]
