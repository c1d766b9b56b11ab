"""BM25 statistics of the chunks a Milvus index shows, and BM25 scores computed with them.

Milvus scores its BM25 function with statistics of its own: the number of rows, their average
length and each term's document frequency, counted over every row a segment holds — rows
deleted since (removed documents, replaced versions) included until Milvus compacts the
segment, and per segment (Milvus Lite) or per shard (a server) rather than over the whole
collection. After ``rm``, ``--prune``, a rename or a new version of a document its scores
would still be those of the old collection. ragkit therefore keeps the statistics of the
visible chunks itself — the chunks whose version is the one their document row holds, exactly
the chunks the folder store's BM25 index is built from — and scores candidates with them as
bm25s's Lucene BM25 does (k1 = 1.5, b = 0.75; a query term repeated counts again).

:class:`TermStatistics` follows the document rows of each generation: a document new or changed
since the last generation has its chunks' terms read once, a document gone has its share taken
out, so only what a commit changed is read again.

Example:
    >>> stats = TermStatistics()
    >>> stats.follow({1: 7, 2: 7}, lambda wanted: [(1, 7, "water boil"), (2, 7, "ice melt")])
    >>> stats.chunks, stats.length, stats.df["water"]
    (2, 4, 1)
    >>> round(stats.score(["water"], "water boil"), 4)  # idf ln 2, tf part 1 / 2.5
    0.2773
    >>> stats.follow({2: 7}, lambda wanted: [])  # document 1 removed
    >>> stats.chunks, stats.df["water"], stats.score(["water"], "water boil") > 0
    (1, 0, False)
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["K1", "B", "ChunkTerms", "TermStatistics"]

K1 = 1.5
B = 0.75
ChunkTerms = Callable[[list[tuple[int, int]]], Iterable[tuple[int, int, str]]]
"""Reads ``(document id, version, space-joined terms)`` of every chunk of the wanted
``(document id, version)`` pairs."""


@dataclass
class _Share:
    """One document's part of the statistics: its version, chunks, terms and, per term, how
    many of its chunks hold it."""

    version: int
    chunks: int = 0
    length: int = 0
    df: Counter[str] = field(default_factory=Counter)


class TermStatistics:
    """The number of visible chunks, their total length in terms and each term's document
    frequency (chunks holding it), followed generation by generation."""

    def __init__(self) -> None:
        self.chunks = 0
        self.length = 0
        self.df: Counter[str] = Counter()
        self._shares: dict[int, _Share] = {}
        self._lock = threading.Lock()

    def follow(self, visible: Mapping[int, int], read: ChunkTerms) -> None:
        """Make the statistics those of ``visible`` (document id → version of its row):
        documents gone or of another version leave, new ones are read with ``read``."""
        with self._lock:
            for doc in [d for d, share in self._shares.items() if visible.get(d) != share.version]:
                self._drop(self._shares.pop(doc))
            wanted = [(doc, ver) for doc, ver in visible.items() if doc not in self._shares]
            if not wanted:
                return
            shares = {doc: _Share(ver) for doc, ver in wanted}
            for doc, ver, terms in read(wanted):
                share = shares.get(doc)
                if share is None or share.version != ver:
                    continue  # a row of another version: hidden, not counted
                split = terms.split()
                share.chunks += 1
                share.length += len(split)
                share.df.update(set(split))
            for doc, share in shares.items():
                self._shares[doc] = share
                self.chunks += share.chunks
                self.length += share.length
                self.df.update(share.df)

    def _drop(self, share: _Share) -> None:
        self.chunks -= share.chunks
        self.length -= share.length
        self.df.subtract(share.df)
        for term in [term for term in share.df if self.df[term] <= 0]:
            del self.df[term]

    def matching(self, query: Iterable[str]) -> int:
        """How many chunks hold some term of ``query``, at most (the sum of the terms' document
        frequencies): a search that takes this many candidates misses none."""
        with self._lock:
            return sum(self.df.get(term, 0) for term in set(query))

    def idf(self, terms: list[str]) -> list[float]:
        """The IDF of each of ``terms`` as :meth:`score` weighs it (a term no visible chunk
        holds: the largest, df 0)."""
        with self._lock:
            return [_idf(self.chunks, self.df.get(term, 0)) for term in terms]

    def score(self, query: list[str], terms: str) -> float:
        """The BM25 score of a chunk whose terms are ``terms`` for the query terms ``query``
        (0.0 when none is held)."""
        counts = Counter(terms.split())
        length = sum(counts.values())
        total = 0.0
        with self._lock:  # a search in one thread, the next generation followed in another
            average = self.length / self.chunks if self.chunks and self.length else 1.0
            for term in query:
                held, df = counts.get(term, 0), self.df.get(term, 0)
                if not held or not df:
                    continue
                total += (
                    _idf(self.chunks, df) * held / (held + K1 * (1.0 - B + B * length / average))
                )
        return total


def _idf(chunks: int, df: int) -> float:
    """Lucene's BM25 IDF of a term ``df`` of ``chunks`` chunks hold (bm25s's ``lucene``)."""
    return math.log(1.0 + (chunks - df + 0.5) / (df + 0.5))
