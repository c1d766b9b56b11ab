"""Per-candidate input signals of the reranker, computed from text and backbone states.

* ``cosine``: the backbone's own sentence similarity (mean-pooled states, normalized) — the
  pointwise bi-encoder signal;
* ``overlap``: the share of the query's sparse terms (:func:`ragkit.sparse.analyze`: stopwords
  out, stems where a stemmer exists) found in the candidate — the lexical signal.

:func:`ragkit.rerank.model.group_features` adds their z-scores within each group.

Example:
    >>> term_overlap(["wing", "flutter"], ["the", "wing", "span"])
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ragkit.normalize import detect_language
from ragkit.sparse import analyze


def term_overlap(query_terms: Sequence[str], doc_terms: Sequence[str]) -> float:
    """Share of distinct query terms present in the document (0 for an empty query)."""
    wanted = set(query_terms)
    return len(wanted & set(doc_terms)) / len(wanted) if wanted else 0.0


def overlaps(query: str, documents: Sequence[str], language: str | None = None) -> torch.Tensor:
    """``(n,)`` term overlap of ``query`` with each document (language detected from the query)."""
    language = language or detect_language(query)
    wanted = analyze(query, language)
    return torch.tensor(
        [term_overlap(wanted, analyze(d, language)) for d in documents], dtype=torch.float32
    )
