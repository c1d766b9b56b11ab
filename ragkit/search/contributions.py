"""Why a hit scored what it did: each ranked list's share of the fused score.

:func:`contributions` takes the same lists, method and weights as
:func:`ragkit.search.fusion.fuse` and returns, per chunk id, the dense list's and the sparse
list's part of the fused score, adding them in the order ``fuse`` does, so that
``dense + sparse`` is the fused score to the last bit. It changes no ranking: it reads the
lists a search already made.

* **RRF**: a list's part is ``1 / (rrf_k + rank)``, 0 where the chunk is not in the list.
* **Weighted**: a list's part is ``weight · minmax(score)`` within the list.
* **One list** (``dense`` or ``sparse`` mode): that list's score is the whole score; the
  other list was not searched (``None``).

Example:
    >>> dense = [(1, 0.9), (2, 0.85)]
    >>> sparse = [(2, 12.0), (3, 5.0)]
    >>> parts = contributions(dense, sparse, "rrf", 60, (0.5, 0.5))
    >>> parts[2].dense + parts[2].sparse == dict(fuse([dense, sparse], "rrf", 60))[2]
    True
    >>> parts[3].dense, parts[3].dense_rank, parts[3].sparse_rank
    (0.0, None, 2)
    >>> single_list(dense, "dense")[1].sparse is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragkit.search.fusion import FusionMethod, Ranking, fuse, minmax
from ragkit.search.per_query import FusionChoice

__all__ = ["Contribution", "contributions", "single_list"]


@dataclass(frozen=True)
class Contribution:
    """One chunk's first-stage score taken apart.

    ``dense`` / ``sparse``: the part of the fused score each list gave (``None``: that list
    was not searched); ``dense_score`` / ``sparse_score``: the list's own score (inner
    product, BM25; ``None``: not in the list); ``dense_rank`` / ``sparse_rank``: its place in
    the list, from 1 (by score); ``fusion``: ``rrf``, ``weighted``, or the one list searched;
    ``evidence``: what other chunks of its document added (:mod:`ragkit.search.evidence`);
    ``phrase``: the lift of a chunk holding the query as a phrase (:mod:`ragkit.search.phrase`);
    ``listing``: with ``per-query`` fusion, what a table of contents lost of its fused score
    (:mod:`ragkit.search.listing`; 0 or below); ``score`` is the fused score plus ``listing``,
    ``evidence`` and ``phrase``; ``choice``: with ``per-query`` fusion, the fusion the query got
    and the evidence behind it (:mod:`ragkit.search.per_query`).
    """

    fusion: str
    score: float
    dense: float | None = None
    sparse: float | None = None
    dense_score: float | None = None
    sparse_score: float | None = None
    dense_rank: int | None = None
    sparse_rank: int | None = None
    evidence: float = 0.0
    phrase: float = 0.0
    listing: float = 0.0
    choice: FusionChoice | None = None


def _ranked(ranking: Ranking) -> dict[int, tuple[int, float]]:
    """Chunk id → (rank by score from 1, score); ties keep the list's order."""
    ordered = sorted(enumerate(ranking), key=lambda item: (-item[1][1], item[0]))
    return {chunk: (rank, score) for rank, (_, (chunk, score)) in enumerate(ordered, start=1)}


def _parts(ranking: Ranking, method: FusionMethod, rrf_k: int, weight: float) -> dict[int, float]:
    """Each chunk's part of the fused score from this one list, as :func:`fuse` adds it."""
    if method == "rrf":
        return {chunk: 1.0 / (rrf_k + rank) for rank, (chunk, _) in enumerate(ranking, start=1)}
    if not ranking:
        return {}
    scaled = minmax([score for _, score in ranking])
    return {chunk: weight * float(s) for (chunk, _), s in zip(ranking, scaled, strict=True)}


def contributions(
    dense: Ranking,
    sparse: Ranking,
    method: FusionMethod,
    rrf_k: int,
    weights: Sequence[float],
) -> dict[int, Contribution]:
    """Every fused chunk's contribution from ``dense`` and ``sparse`` (the lists and arguments
    given to :func:`ragkit.search.fusion.fuse`)."""
    fused = dict(fuse([dense, sparse], method, rrf_k, weights))
    dense_parts = _parts(dense, method, rrf_k, weights[0])
    sparse_parts = _parts(sparse, method, rrf_k, weights[1])
    dense_ranks, sparse_ranks = _ranked(dense), _ranked(sparse)
    found: dict[int, Contribution] = {}
    for chunk, score in fused.items():
        dense_rank, dense_score = dense_ranks.get(chunk, (None, None))
        sparse_rank, sparse_score = sparse_ranks.get(chunk, (None, None))
        found[chunk] = Contribution(
            fusion=method,
            score=score,
            dense=dense_parts.get(chunk, 0.0),
            sparse=sparse_parts.get(chunk, 0.0),
            dense_score=dense_score,
            sparse_score=sparse_score,
            dense_rank=dense_rank,
            sparse_rank=sparse_rank,
        )
    return found


def single_list(ranking: Ranking, which: Literal["dense", "sparse"]) -> dict[int, Contribution]:
    """Contributions in ``dense`` or ``sparse`` mode: the one list's score is the whole score."""
    found: dict[int, Contribution] = {}
    for chunk, (rank, score) in _ranked(ranking).items():
        if which == "dense":
            found[chunk] = Contribution(
                which, score, dense=score, dense_score=score, dense_rank=rank
            )
        else:
            found[chunk] = Contribution(
                which, score, sparse=score, sparse_score=score, sparse_rank=rank
            )
    return found
