"""Maximal marginal relevance (Carbonell & Goldstein, 1998): k hits picked from a ranking's
candidates one at a time, each the best trade between its relevance and its likeness to the
hits already picked, so near-duplicates of a hit give way to passages that say something else.

``mmr(d) = λ · relevance(d) − (1 − λ) · max cos(d, picked)``: relevance is the candidate's
score scaled to [0, 1] over the candidates (min-max, so any score — a cosine, a fused score, a
reranker's — weighs alike against cosines), likeness the cosine of the stored vectors (unit
length). ``λ = 1`` keeps the ranking's order; ``λ = 0`` picks the first hit, then always the
candidate least like those picked. This is LangChain's ``lambda_mult``.

Example:
    >>> import numpy as np
    >>> ranking = [(1, 0.9), (2, 0.88), (3, 0.5)]
    >>> vectors = {1: np.array([1.0, 0.0]), 2: np.array([1.0, 0.0]), 3: np.array([0.0, 1.0])}
    >>> [i for i, _ in maximal_marginal_relevance(ranking, vectors, 2, 1.0)]
    [1, 2]
    >>> [i for i, _ in maximal_marginal_relevance(ranking, vectors, 2, 0.5)]
    [1, 3]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ragkit.search.fusion import Ranking, minmax

__all__ = ["maximal_marginal_relevance", "mmr_order"]


def mmr_order(scores: np.ndarray, vectors: np.ndarray, k: int, lambda_mult: float) -> list[int]:
    """The positions of the ``k`` candidates MMR picks, in the order picked, from their
    ``scores`` and their ``vectors`` (one row each, unit length; a row of zeros is like no
    other). Ties go to the earlier candidate.

    Example:
        >>> rows = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
        >>> mmr_order(np.array([3.0, 2.0, 1.0]), rows, 3, 0.0)
        [0, 2, 1]
    """
    relevance = minmax(np.asarray(scores, dtype=np.float64))
    likeness = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    closest = np.full(len(relevance), -np.inf)  # the largest cosine to a picked hit
    remaining = np.ones(len(relevance), dtype=bool)
    picked: list[int] = []
    for _ in range(min(k, len(relevance))):
        redundancy = np.where(np.isfinite(closest), closest, 0.0)
        marginal = lambda_mult * relevance - (1.0 - lambda_mult) * redundancy
        best = int(np.argmax(np.where(remaining, marginal, -np.inf)))
        picked.append(best)
        remaining[best] = False
        closest = np.maximum(closest, likeness[best])
    return picked


def maximal_marginal_relevance(
    ranking: Ranking, vectors: Mapping[int, np.ndarray], k: int, lambda_mult: float
) -> Ranking:
    """``k`` of ``ranking``'s candidates (best first) in the order MMR picks them, with their
    scores unchanged; ``vectors``: the candidates' stored vectors (one missing counts as like
    no other)."""
    if not ranking:
        return []
    width = len(next(iter(vectors.values()))) if vectors else 1
    rows = np.stack([vectors.get(i, np.zeros(width, dtype=np.float32)) for i, _ in ranking])
    order = mmr_order(np.array([s for _, s in ranking]), rows, k, lambda_mult)
    return [ranking[position] for position in order]
