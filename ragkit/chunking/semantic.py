"""``semantic``: cut where neighbouring sentences stop resembling each other.

For each gap between sentence units ``k`` and ``k + 1`` the similarity is the cosine between
the mean vector of the ``window`` units before the gap and of the ``window`` units after it.
Gaps whose similarity falls below the ``percentile``-th percentile of the document's gaps are
breakpoints. Then the hard maximum: a segment over ``max_tokens`` is split again at its least
similar gap, recursively; and the minimum: a segment under ``min_tokens`` joins the neighbour
it is more similar to, when the sum fits. A document within ``max_tokens`` stays one chunk
(no embeddings needed). Embeddings come from the injected ``embed`` callable
(the document context caches them, so the metrics reuse the same vectors).

Example:
    >>> import numpy as np
    >>> def embed(texts):  # two topics: "cat…" sentences and "tax…" sentences
    ...     return np.array([[1.0, 0.0] if t.startswith("cat") else [0.0, 1.0] for t in texts])
    >>> chunker = SemanticChunker(embed, max_tokens=30, min_tokens=1, counter=len)
    >>> text = "cats purr. cats nap. taxes rise. taxes hurt."
    >>> [c.text for c in chunker.chunk(text)]
    ['cats purr. cats nap. ', 'taxes rise. taxes hurt.']
"""

from __future__ import annotations

import itertools

import numpy as np

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext, Embed
from ragkit.chunking.types import Span, TokenCounter


def gap_similarities(vectors: np.ndarray, window: int = 2) -> np.ndarray:
    """Cosine between the mean of ``window`` vectors before each gap and ``window`` after.

    Example:
        >>> gap_similarities(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), window=1).tolist()
        [1.0, 0.0]
    """
    count = len(vectors)
    if count < 2:
        return np.zeros(0, dtype=np.float32)
    cumulative = np.vstack([np.zeros((1, vectors.shape[1])), np.cumsum(vectors, axis=0)])
    gaps = np.arange(1, count)
    left = cumulative[gaps] - cumulative[np.maximum(gaps - window, 0)]
    right = cumulative[np.minimum(gaps + window, count)] - cumulative[gaps]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    return np.einsum("ij,ij->i", left, right) / np.maximum(norms, 1e-12)


class SemanticChunker(Chunker):
    """Embedding-similarity breakpoints under a hard maximum and a minimum size."""

    name = "semantic"

    def __init__(
        self,
        embed: Embed | None = None,
        max_tokens: int = 256,
        min_tokens: int | None = None,
        counter: TokenCounter | None = None,
        percentile: float = 25.0,
        window: int = 2,
    ) -> None:
        super().__init__(max_tokens, min_tokens, counter)
        self.embed = embed
        self.percentile = percentile
        self.window = window

    def _embed(self) -> Embed | None:
        return self.embed

    def spans(self, context: DocumentContext) -> list[Span]:
        units = context.units
        if len(units) < 2 or sum(context.unit_tokens) <= self.max_tokens:
            return [(units[0][0], units[-1][1])] if units else []
        sims = gap_similarities(context.unit_vectors, self.window)
        threshold = float(np.percentile(sims, self.percentile))
        prefix = np.concatenate([[0], np.cumsum(context.unit_tokens)])
        cuts = [0, *(int(g) + 1 for g in np.flatnonzero(sims < threshold)), len(units)]
        segments: list[tuple[int, int]] = []
        for i, j in itertools.pairwise(cuts):
            segments.extend(self._fit(i, j, sims, prefix))
        segments = self._merge_small(segments, sims, prefix)
        return [(units[i][0], units[j - 1][1]) for i, j in segments]

    def _fit(self, i: int, j: int, sims: np.ndarray, prefix: np.ndarray) -> list[tuple[int, int]]:
        """Split units ``[i, j)`` at their least similar gap until each part fits."""
        if j - i < 2 or prefix[j] - prefix[i] <= self.max_tokens:
            return [(i, j)]
        gap = i + int(np.argmin(sims[i : j - 1]))  # gap between units gap and gap + 1
        return self._fit(i, gap + 1, sims, prefix) + self._fit(gap + 1, j, sims, prefix)

    def _merge_small(
        self, segments: list[tuple[int, int]], sims: np.ndarray, prefix: np.ndarray
    ) -> list[tuple[int, int]]:
        def size(s: tuple[int, int]) -> int:
            return int(prefix[s[1]] - prefix[s[0]])

        k = 0
        while k < len(segments) and len(segments) > 1:
            if size(segments[k]) >= self.min_tokens:
                k += 1
                continue
            options = []
            if k > 0 and size(segments[k - 1]) + size(segments[k]) <= self.max_tokens:
                options.append((float(sims[segments[k][0] - 1]), k - 1))
            if (
                k + 1 < len(segments)
                and size(segments[k + 1]) + size(segments[k]) <= self.max_tokens
            ):
                options.append((float(sims[segments[k][1] - 1]), k + 1))
            if not options:
                k += 1
                continue
            n = max(options)[1]
            a, b = min(k, n), max(k, n)
            segments[a : b + 1] = [(segments[a][0], segments[b][1])]
            k = a
        return segments
