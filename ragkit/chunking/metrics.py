"""Intrinsic chunking metrics SC, BI, ICC and DCC (RC lives in :mod:`.references`).

Each returns a score in [0, 1] (1 is best) for one document's chunks; an empty chunking scores 1.

- **SC** size compliance: ``|{c : min ≤ tokens(c) ≤ max}| / |C|``; a document's only chunk
  also complies when the whole document is shorter than ``min``.
- **BI** block integrity: ``|{u ∈ U : no boundary inside u}| / |U|``, where ``U`` are the
  document's structural units — its blocks (paragraph, list, table, code), with a heading and the
  block after it fused into one unit — leaving out units longer than ``max`` tokens (no chunking
  could keep them whole; a heading whose fused unit is too long is paired with its body's first
  sentence instead). A boundary is a chunk start ``b`` (not 0); it is *inside* ``u`` when
  ``u.start + t < b < u.end - t`` with tolerance ``t = tolerance × len(u)`` characters.
- **ICC** intrachunk cohesion: ``mean_c Σ_u w_u · max(0, cos(v_u, v_c)) / Σ_u w_u`` over the
  sentence units ``u`` a chunk overlaps, with ``w_u`` the tokens of ``u`` inside ``c`` and ``v_c``
  the chunk vector (token-weighted mean of its unit vectors).
- **DCC** document contextual coherence: ``mean_c max(0, cos(v_c, v_N(c)))`` where ``N(c)`` are
  the neighbouring chunks on both sides up to ``window_tokens / 2`` tokens each way (3,000 in
  all) and ``v_N`` their token-weighted mean vector; documents with one chunk score 1.

Example:
    >>> from ragkit.chunking.types import Chunk
    >>> chunks = [Chunk("ab", 0, 2, 2, "x"), Chunk("cdefgh", 2, 8, 6, "x")]
    >>> size_compliance(chunks, min_tokens=3, max_tokens=8)
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragkit.chunking.context import DocumentContext
from ragkit.chunking.types import Chunk, Span


def size_compliance(chunks: Sequence[Chunk], min_tokens: int, max_tokens: int) -> float:
    """SC: share of chunks whose token count lies in ``[min_tokens, max_tokens]``."""
    if not chunks:
        return 1.0
    if len(chunks) == 1 and chunks[0].token_count < min_tokens:
        return 1.0
    inside = sum(min_tokens <= c.token_count <= max_tokens for c in chunks)
    return inside / len(chunks)


def structural_units(context: DocumentContext, max_tokens: int) -> list[Span]:
    """The spans BI checks: blocks, each heading fused with the block after it."""
    blocks = context.blocks
    units: list[Span] = []
    k = 0
    while k < len(blocks):
        block = blocks[k]
        if block.kind == "heading" and k + 1 < len(blocks):
            body = blocks[k + 1]
            if context.tokens_between(block.start, body.end) <= max_tokens:
                units.append((block.start, body.end))
            else:
                i, _ = context.unit_range(body.start, body.end)
                first_end = context.units[i][1] if i < len(context.units) else body.end
                units.append((block.start, min(first_end, body.end)))
                units.append((body.start, body.end))
            k += 2
            continue
        units.append((block.start, block.end))
        k += 1
    return [u for u in units if context.tokens_between(*u) <= max_tokens]


def block_integrity(
    chunks: Sequence[Chunk], context: DocumentContext, max_tokens: int, tolerance: float = 0.02
) -> float:
    """BI: share of structural units that no chunk boundary cuts."""
    units = structural_units(context, max_tokens)
    if not units or not chunks:
        return 1.0
    boundaries = np.array(sorted({c.start for c in chunks if c.start > 0}), dtype=np.int64)
    whole = 0
    for start, end in units:
        slack = tolerance * (end - start)
        lo, hi = np.searchsorted(boundaries, [start + slack, end - slack], side="right")
        inside = boundaries[lo:hi]
        whole += not np.any((inside > start + slack) & (inside < end - slack))
    return whole / len(units)


def _chunk_vectors(chunks: Sequence[Chunk], context: DocumentContext) -> list[np.ndarray | None]:
    return [context.span_vector(c.start, c.end) for c in chunks]


def intrachunk_cohesion(chunks: Sequence[Chunk], context: DocumentContext) -> float:
    """ICC: mean (over chunks) token-weighted cosine of each unit to its chunk's vector."""
    vectors = context.unit_vectors
    scores: list[float] = []
    for chunk, chunk_vector in zip(chunks, _chunk_vectors(chunks, context), strict=True):
        i, j = context.unit_range(chunk.start, chunk.end)
        if chunk_vector is None or j <= i:
            continue
        weights = np.array(
            [context.unit_tokens[k] * context.share(k, chunk.start, chunk.end) for k in range(i, j)]
        )
        cosines = np.clip(vectors[i:j] @ chunk_vector, 0.0, 1.0)
        scores.append(float(weights @ cosines / max(weights.sum(), 1e-12)))
    return float(np.mean(scores)) if scores else 1.0


def contextual_coherence(
    chunks: Sequence[Chunk], context: DocumentContext, window_tokens: int = 3000
) -> float:
    """DCC: mean cosine of each chunk to the weighted mean of its neighbours' vectors."""
    vectors = {k: v for k, v in enumerate(_chunk_vectors(chunks, context)) if v is not None}
    present = list(vectors)
    if len(present) < 2:
        return 1.0
    side = window_tokens / 2
    scores: list[float] = []
    for position, k in enumerate(present):
        total = np.zeros_like(vectors[k])
        for direction in (-1, 1):
            budget, step = side, position + direction
            while 0 <= step < len(present) and budget > 0:
                n = present[step]
                weight = min(chunks[n].token_count, budget)
                total += weight * vectors[n]
                budget -= chunks[n].token_count
                step += direction
        norm = float(np.linalg.norm(total))
        if norm > 0:
            scores.append(max(0.0, float(total @ vectors[k]) / norm))
    return float(np.mean(scores)) if scores else 1.0
