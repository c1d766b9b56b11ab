"""Dynamic hierarchical sparse attention (DHSA): each query block attends to a chosen key subset.

Non-causal, for the reranker's interaction layers (any encoder layer calling
:func:`~ragkit.rerank.attention.attend` with ``AttentionConfig(kind="dhsa")``):

1. **Key chunks.** The key sequence is cut into variable-length chunks. Segment boundaries
   (query / candidate slot / padding) always cut; inside a segment a chunk ends where the cosine
   of adjacent keys (all heads together) is among the segment's lowest, about one cut per
   ``chunk_size`` keys, and no chunk is longer than ``max_chunk``.
2. **Representations.** A chunk is the mean of its keys times √length (that is, their sum
   divided by √length), so long chunks are neither drowned nor inflated; query blocks of
   ``block_size`` tokens are represented the same way (padding excluded).
3. **Selection.** Per head, each query block scores every chunk (dot product of the two
   vectors; a key inherits its chunk's score). The block attends to its window (itself and
   ``local_window`` keys on each side), then to the keys of its best chunks, the query segment
   (``0``) always first, until ``budget`` keys in all (the last chunk may be cut); padding
   never. The kept keys and values are gathered and attended with SDPA.

Blocks are processed a few at a time so the gathered keys and values stay under about
:data:`STEP_ELEMENTS` floats. When the budget covers every valid key, DHSA *is* dense attention.

Example:
    >>> import torch
    >>> from ragkit.rerank.attention import AttentionConfig, attend, dense_attention
    >>> q, k, v = torch.randn(3, 1, 2, 300, 16).unbind(0)
    >>> segments = torch.tensor([[0] * 20 + [1] * 140 + [2] * 140])
    >>> config = AttentionConfig(kind="dhsa", budget=96, block_size=32, local_window=16)
    >>> attend(q, k, v, segments, config).shape
    torch.Size([1, 2, 300, 16])
    >>> wide = AttentionConfig(kind="dhsa", budget=300)
    >>> torch.equal(attend(q, k, v, segments, wide), dense_attention(q, k, v, segments, wide))
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ragkit.errors import RagkitError
from ragkit.rerank.attention.config import AttentionConfig
from ragkit.rerank.attention.dense import dense_attention

STEP_ELEMENTS = 1 << 21
"""Floats of gathered keys and values held at once (8 MiB in float32)."""


@dataclass(frozen=True)
class KeyChunks:
    """Key chunks of each row: ``reps`` ``(batch, heads, chunks, dim)``; the rest ``(batch, chunks)``.

    ``start``/``size``: first key and length (``0`` for the missing chunks of shorter rows);
    ``segment``: the chunk's segment (``-1`` for padding and missing chunks).
    """

    reps: torch.Tensor
    start: torch.Tensor
    size: torch.Tensor
    segment: torch.Tensor


def chunk_keys(k: torch.Tensor, segments: torch.Tensor, config: AttentionConfig) -> KeyChunks:
    """Cut the keys into chunks (segment changes, similarity drops, ``max_chunk``) and sum them.

    Example:
        >>> import torch
        >>> k = torch.cat([torch.ones(1, 1, 4, 2), -torch.ones(1, 1, 4, 2)], dim=2)
        >>> segments = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1]])
        >>> chunks = chunk_keys(k, segments, AttentionConfig(chunk_size=4))
        >>> chunks.start.tolist(), chunks.size.tolist(), chunks.segment.tolist()
        ([[0, 2, 4]], [[2, 2, 4]], [[0, 1, 1]])
    """
    batch, heads, tokens, dim = k.shape
    norms = torch.linalg.vector_norm(k, dim=(1, 3))
    dots = k.new_empty(batch, tokens - 1)
    span = max(1, STEP_ELEMENTS // (4 * batch * heads * dim))  # bounds vecdot's temporary
    for lo in range(0, tokens - 1, span):
        hi = min(lo + span, tokens - 1)
        dots[:, lo:hi] = torch.linalg.vecdot(k[:, :, lo + 1 : hi + 1], k[:, :, lo:hi]).sum(1)
    similarity = dots / (norms[:, 1:] * norms[:, :-1]).clamp_min(1e-12)
    same = (segments[:, 1:] == segments[:, :-1]) & (segments[:, 1:] >= 0)
    boundary = torch.ones(batch, tokens, dtype=torch.bool, device=k.device)
    boundary[:, 1:] = ~same | _similarity_cuts(similarity, same, segments, config.chunk_size)
    position = torch.arange(tokens, device=k.device).expand(batch, tokens)
    start = torch.where(boundary, position, 0).cummax(dim=1).values
    boundary |= (position - start) % config.max_chunk == 0
    ids = boundary.cumsum(dim=1) - 1
    count = int(ids[:, -1].max()) + 1
    sums = k.new_zeros(batch, heads, count, dim)
    sums.scatter_add_(2, ids[:, None, :, None].expand_as(k), k)
    size = torch.zeros(batch, count, dtype=torch.long, device=k.device)
    size.scatter_add_(1, ids, torch.ones_like(ids))
    start = torch.full_like(size, tokens).scatter_reduce_(1, ids, position, "amin")
    segment = torch.full_like(size, -1).scatter_reduce_(1, ids, segments.long(), "amax")
    reps = sums / size.clamp_min(1).to(k.dtype).sqrt()[:, None, :, None]
    return KeyChunks(reps, start, size, segment)


def _similarity_cuts(
    similarity: torch.Tensor, same: torch.Tensor, segments: torch.Tensor, chunk_size: int
) -> torch.Tensor:
    """``(batch, tokens - 1)``: cut between keys ``i`` and ``i + 1`` where their similarity is
    among the ``pairs // chunk_size`` lowest of the pairs inside their segment.

    Ranking within each segment (not the whole row) keeps one noisy segment from taking every
    cut and ending up in shreds.
    """
    group = torch.where(same, segments[:, 1:].long(), int(segments.max()) + 1)
    by_similarity = similarity.argsort(dim=1, stable=True)
    order = by_similarity.gather(1, group.gather(1, by_similarity).argsort(dim=1, stable=True))
    grouped = group.gather(1, order)  # pairs sorted by (segment, similarity)
    index = torch.arange(grouped.shape[1], device=similarity.device).expand_as(grouped)
    first = torch.ones_like(same)
    first[:, 1:] = grouped[:, 1:] != grouped[:, :-1]
    rank_sorted = index - torch.where(first, index, 0).cummax(dim=1).values
    rank = torch.empty_like(rank_sorted).scatter_(1, order, rank_sorted)
    pairs = torch.zeros(group.shape[0], int(group.max()) + 1, dtype=torch.long, device=group.device)
    pairs.scatter_add_(1, group, torch.ones_like(group))
    return same & (rank < pairs.gather(1, group) // chunk_size)


def _check(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    segments: torch.Tensor,
    config: AttentionConfig,
) -> None:
    if q.dim() != 4 or k.shape != q.shape or v.shape != q.shape:
        raise RagkitError(
            f"DHSA needs q, k, v of one shape (batch, heads, tokens, head_dim); got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if segments.shape != (q.shape[0], q.shape[2]):
        raise RagkitError(
            f"DHSA: segments {tuple(segments.shape)} must be (batch, tokens) = "
            f"{(q.shape[0], q.shape[2])}"
        )
    for name in ("budget", "block_size", "chunk_size", "max_chunk"):
        if getattr(config, name) < 1:
            raise RagkitError(f"AttentionConfig.{name} = {getattr(config, name)}: must be ≥ 1")
    if config.local_window < 0:
        raise RagkitError(f"AttentionConfig.local_window = {config.local_window}: must be ≥ 0")


def dhsa_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    segments: torch.Tensor,
    config: AttentionConfig,
) -> torch.Tensor:
    """DHSA over ``q, k, v`` ``(batch, heads, tokens, head_dim)``; see the module docstring."""
    _check(q, k, v, segments, config)
    batch, heads, tokens, dim = q.shape
    valid = segments >= 0
    if config.budget >= int(valid.sum(1).max()):
        return dense_attention(q, k, v, segments, config)
    size, reach = config.block_size, config.local_window
    slots = min(max(config.budget - size - 2 * reach, int((segments == 0).sum(1).max()), 1), tokens)
    width = size + 2 * reach + slots
    chunks = chunk_keys(k, segments, config)
    scores = _block_chunk_scores(q, valid, chunks, size)
    blocks = scores.shape[2]
    step = max(1, STEP_ELEMENTS // (batch * heads * width * 2 * dim))
    # Without autograd, one buffer serves every step (fresh large allocations page-fault) and
    # keys and values are read in place from their storage.
    training = torch.is_grad_enabled() and (k.requires_grad or v.requires_grad)
    gathered = None if training else k.new_empty(2, min(step, blocks) * batch * heads * width, dim)
    key_rows, value_rows = _rows(k, copy=training), _rows(v, copy=training)
    out = torch.empty_like(q)
    for first in range(0, blocks, step):
        last = min(first + step, blocks)
        group = last - first
        lo, hi = first * size, min(last * size, tokens)
        position, bias = _block_keys(
            scores[:, :, first:last], chunks, segments, first, slots, config
        )
        rows = (1, group * batch * heads, width, dim)  # SDPA's fused CPU kernel wants 4-D inputs
        keys = _gather(key_rows, position, None if gathered is None else gathered[0])
        values = _gather(value_rows, position, None if gathered is None else gathered[1])
        query = q[:, :, lo:hi]
        if hi - lo < group * size:
            query = F.pad(query, (0, 0, 0, group * size - (hi - lo)))
        query = (
            query.unflatten(2, (group, size)).permute(2, 0, 1, 3, 4).reshape(rows[:2] + (size, dim))
        )
        mixed = F.scaled_dot_product_attention(
            query, keys.view(rows), values.view(rows), attn_mask=bias.view(1, -1, 1, width)
        )
        out[:, :, lo:hi] = (
            mixed.view(group, batch, heads, size, dim)
            .permute(1, 2, 0, 3, 4)
            .reshape(batch, heads, group * size, dim)[:, :, : hi - lo]
        )
    if not bool(valid.all()):
        out.masked_fill_(~valid[:, None, :, None], 0.0)
    return out


def _rows(t: torch.Tensor, copy: bool) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``t`` ``(batch, heads, tokens, dim)`` as a table of ``dim``-vectors: vector
    ``(b, h, n)`` is row ``base[b, h] + n * stride``, with ``base`` shaped ``(1, batch, heads, 1)``.

    When every stride is a multiple of ``dim`` (contiguous tensors, and the q/k/v views of one
    fused projection), the table is a view of ``t``'s storage; otherwise, or with ``copy``, a
    contiguous copy.
    """
    batch, heads, tokens, dim = t.shape
    strides = (*t.stride()[:3], t.storage_offset())
    if copy or t.stride(3) != 1 or any(stride % dim for stride in strides):
        table, strides = t.reshape(-1, dim), (heads * tokens * dim, tokens * dim, dim, 0)
    else:
        size = t.untyped_storage().nbytes() // t.element_size() // dim
        table = t.as_strided((size, dim), (dim, 1), 0)
    b, h, n, offset = (stride // dim for stride in strides)
    index = (
        torch.arange(batch, device=t.device)[:, None] * b + torch.arange(heads, device=t.device) * h
    )
    return table, (index + offset).view(1, batch, heads, 1), n


def _gather(
    rows: tuple[torch.Tensor, torch.Tensor, int], position: torch.Tensor, out: torch.Tensor | None
) -> torch.Tensor:
    """The vectors at key ``position`` ``(blocks, batch, heads, width)`` from a :func:`_rows` table."""
    table, base, stride = rows
    index = (base + position * stride).view(-1)
    if out is None:
        return table.index_select(0, index)
    return torch.index_select(table, 0, index, out=out[: index.numel()])


def _block_keys(
    scores: torch.Tensor,
    chunks: KeyChunks,
    segments: torch.Tensor,
    first: int,
    slots: int,
    config: AttentionConfig,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keys of blocks ``first…`` (``scores`` ``(batch, heads, blocks, chunks)``): positions and
    additive mask ``(blocks, batch, heads, width)``.

    The first ``block_size + 2 * local_window`` entries are the block's window, the rest the keys
    of its best chunks (query segment first) up to ``budget`` in all. Unused entries (off the ends,
    padding, chunk keys already in the window, an unfilled budget) point at key 0 and are
    masked with ``-inf``.
    """
    batch, heads, blocks, _ = scores.shape
    tokens = segments.shape[1]
    size, reach = config.block_size, config.local_window
    window = (
        (first + torch.arange(blocks, device=scores.device))[:, None] * size
        - reach
        + torch.arange(size + 2 * reach, device=scores.device)
    )
    # A chunk lying inside a block's window is not chosen: its keys are window keys already.
    inside = (chunks.start[:, None, :] >= window[:, :1]) & (
        (chunks.start + chunks.size)[:, None, :] <= window[:, -1:] + 1
    )
    scores = scores.masked_fill(inside[:, None], -math.inf)
    chosen = _chosen_keys(scores, chunks, min(slots, scores.shape[-1]), slots)
    outside = (chosen < window[:, :1]) | (chosen > window[:, -1:])
    window_keys = window.clamp(0, tokens - 1)
    window_use = (window >= 0) & (window < tokens) & (segments[:, window_keys] >= 0)
    position = torch.cat([window_keys.expand(batch, heads, -1, -1), chosen.clamp_min(0)], -1)
    use = torch.cat([window_use[:, None].expand(-1, heads, -1, -1), (chosen >= 0) & outside], -1)
    bias = scores.new_zeros(use.shape).masked_fill_(~use, -math.inf)
    return position.permute(2, 0, 1, 3).contiguous(), bias.permute(2, 0, 1, 3).contiguous()


def _block_chunk_scores(
    q: torch.Tensor, valid: torch.Tensor, chunks: KeyChunks, size: int
) -> torch.Tensor:
    """``(batch, heads, blocks, chunks)`` dot products of query-block and key-chunk vectors.

    The query segment's chunks score ``+inf`` (always chosen); padding and missing chunks
    ``-inf`` (never chosen). Padding queries are left out of their block's vector.
    """
    batch, heads, tokens, dim = q.shape
    blocks = -(-tokens // size)
    position = torch.arange(tokens, device=q.device)
    block_of = torch.where(valid, position // size, blocks)  # padding rows go to a dropped block
    sums = q.new_zeros(batch, heads, blocks + 1, dim)
    sums.scatter_add_(2, block_of[:, None, :, None].expand_as(q), q)
    counts = torch.zeros(batch, blocks + 1, dtype=q.dtype, device=q.device)
    counts.scatter_add_(1, block_of, torch.ones_like(block_of, dtype=q.dtype))
    reps = sums[:, :, :blocks] / counts[:, :blocks].clamp_min(1.0).sqrt()[:, None, :, None]
    scores = reps @ chunks.reps.transpose(-1, -2)
    scores.masked_fill_((chunks.segment == 0)[:, None, None, :], math.inf)
    return scores.masked_fill_((chunks.segment < 0)[:, None, None, :], -math.inf)


def _chosen_keys(scores: torch.Tensor, chunks: KeyChunks, picks: int, slots: int) -> torch.Tensor:
    """Keys of the best chunks, in score order, cut at ``slots`` per block; ``-1`` marks unused.

    ``scores`` is ``(batch, heads, blocks, chunks)``; the result ``(batch, heads, blocks, slots)``.
    Chunks are contiguous runs, so slot ``j`` lies in the first chunk whose cumulative length
    exceeds ``j``, at offset ``j`` minus the lengths before it.
    """
    batch = scores.shape[0]
    top = scores.topk(picks, dim=-1)
    flat = top.indices.view(batch, -1)
    length = chunks.size.gather(1, flat).view(top.indices.shape)
    length = length.masked_fill(top.values == -math.inf, 0)
    ends = length.cumsum(-1)
    slot = torch.arange(slots, device=scores.device).expand(*top.indices.shape[:-1], slots)
    rank = torch.searchsorted(ends, slot.contiguous(), right=True)
    unused = rank >= picks
    rank.clamp_max_(picks - 1)
    chunk = top.indices.gather(-1, rank)
    before = ends.gather(-1, rank) - length.gather(-1, rank)
    start = chunks.start.gather(1, chunk.view(batch, -1)).view(chunk.shape)
    return (start + slot - before).masked_fill_(unused, -1)
