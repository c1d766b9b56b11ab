"""Word lists read when training the lexical normalizer: word frequencies and word-pair counts.

Both come from packages installed for training only (``wordfreq``, ``symspellpy``); the model
saves what it keeps of them, so running it needs neither.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ragkit.errors import RagkitError

BIGRAM_FILE = "frequency_bigramdictionary_en_243_342.txt"


def english_vocabulary(size: int, language: str = "en") -> dict[str, float]:
    """The ``size`` most frequent words of ``language`` with Zipf frequencies, from wordfreq."""
    try:
        import wordfreq
    except ImportError as error:
        raise RagkitError(
            "training the lexical normalizer needs word frequencies: pip install wordfreq"
        ) from error
    words = wordfreq.top_n_list(language, size)
    return {word: round(wordfreq.zipf_frequency(word, language), 2) for word in words}


def corpus_bigrams(vocabulary: Mapping[str, float]) -> dict[str, float]:
    """log10 counts of English word pairs (both in ``vocabulary``) from symspellpy's bigram list.

    The list (243,342 pairs, Google Books Ngram counts) ships inside the ``symspellpy`` package;
    only its data file is read.
    """
    try:
        from importlib.resources import files

        source = files("symspellpy") / BIGRAM_FILE
        text = source.read_text(encoding="utf-8")
    except (ImportError, OSError) as error:
        raise RagkitError(
            f"training the lexical normalizer needs {BIGRAM_FILE} from symspellpy: "
            "pip install 'symspellpy>=6.7,<7'"
        ) from error
    pairs: dict[str, float] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] in vocabulary and fields[1] in vocabulary:
            pairs[f"{fields[0]} {fields[1]}"] = round(math.log10(int(fields[2])), 1)
    return pairs
