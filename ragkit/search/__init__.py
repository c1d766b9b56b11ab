"""Search structures: the dense FAISS index, the sparse BM25 index, and their fusion.

- :mod:`~ragkit.search.dense`: FAISS by collection size (Flat, HNSW, IVF-PQ + exact re-score);
- :mod:`~ragkit.search.sparse`: the BM25 analyzer (stopwords, stemmers or SentencePiece
  pieces) and :class:`SparseIndex` over bm25s;
- :mod:`~ragkit.search.fusion`: weighted and reciprocal-rank fusion of ranked lists.

Example:
    >>> from ragkit.search import fuse
    >>> fuse([[(1, 0.9), (2, 0.1)], [(2, 3.0)]], "rrf", 60, (0.5, 0.5))[0][0]
    2
"""

from ragkit.search.fusion import SEARCH_MODES, FusionMethod, SearchMode, fuse

__all__ = ["SEARCH_MODES", "FusionMethod", "SearchMode", "fuse"]
