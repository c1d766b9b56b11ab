"""ragkit's sparse terms spelled for Milvus's BM25 analyzer.

ragkit analyzes text itself (normalization, language routing, stopwords, Snowball stems or
SentencePiece pieces, Arabic exact terms: :mod:`ragkit.search.sparse`), so Milvus must score
exactly those terms, not re-tokenize the text. Milvus's ``standard`` analyzer splits on
non-word characters and lowercases, which would cut pieces such as ``▁wat`` or ``=wings`` and
fold case. Each term is therefore spelled as one ASCII word the analyzer keeps whole: ``t``
and the base-32 digits of a 64-bit BLAKE2b hash of the term (Milvus hashes tokens to 32 bits
anyway, so the longer hash adds no collisions of its own). Milvus then counts term
frequencies, document frequencies and lengths over the collection and scores BM25 with
ragkit's parameters (k1 = 1.5, b = 0.75).

Example:
    >>> spelled("▁wat ▁wat er").split()[0] == spelled("▁wat").strip()
    True
    >>> len(spelled("▁wat").split()[0])
    14
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Iterable

__all__ = ["spelled", "spelled_query"]


@functools.lru_cache(maxsize=200_000)
def _word(term: str) -> str:
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return "t" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def spelled(terms: str) -> str:
    """Space-joined terms (as stored for a chunk) spelled for the analyzer."""
    return " ".join(_word(term) for term in terms.split())


def spelled_query(terms: Iterable[str]) -> str:
    """A query's terms spelled for the analyzer (a repeated term counts again, as in BM25
    over the folder)."""
    return " ".join(_word(term) for term in terms)
