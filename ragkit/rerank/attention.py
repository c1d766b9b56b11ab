"""The one attention call of the reranker's interaction layers: dense (reference) or DHSA.

Every interaction layer calls :func:`attend`; the ``kind`` in :class:`AttentionConfig` picks the
implementation. Tensors are ``(batch, heads, tokens, head_dim)``; ``segments`` is
``(batch, tokens)`` with ``0`` for the query's tokens, ``1..K`` for candidate slot ``k`` and
``-1`` for padding. Padding keys are never attended to; padding rows come out as zeros.

Example:
    >>> import torch
    >>> q = k = v = torch.randn(1, 2, 5, 4)
    >>> segments = torch.tensor([[0, 0, 1, 1, -1]])
    >>> attend(q, k, v, segments, AttentionConfig()).shape
    torch.Size([1, 2, 5, 4])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from ragkit.errors import RagkitError

AttentionKind = Literal["dense", "dhsa"]
AttentionFunction = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, "AttentionConfig"], torch.Tensor
]


@dataclass(frozen=True)
class AttentionConfig:
    """Which attention the interaction layers run, and DHSA's budget.

    ``budget``: keys each query block keeps (DHSA); ``block_size``: query tokens per block;
    ``local_window``: keys on each side of a block always kept; ``chunk_size``: mean length of
    the key chunks DHSA cuts where adjacent keys' similarity drops; ``max_chunk``: longest chunk.
    """

    kind: AttentionKind = "dense"
    budget: int = 1024
    block_size: int = 64
    local_window: int = 64
    chunk_size: int = 16
    max_chunk: int = 64


def dense_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    segments: torch.Tensor,
    config: AttentionConfig,
) -> torch.Tensor:
    """Full bidirectional attention over the non-padding keys (the reference implementation)."""
    valid = segments >= 0
    mask = valid[:, None, None, :]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return out * valid[:, None, :, None].to(out.dtype)


_KINDS: dict[str, AttentionFunction] = {"dense": dense_attention}


def register_attention(kind: str, function: AttentionFunction) -> None:
    """Make ``function`` the implementation of ``AttentionConfig(kind=kind)``."""
    _KINDS[kind] = function


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    segments: torch.Tensor,
    config: AttentionConfig,
) -> torch.Tensor:
    """Attention of ``config.kind`` over ``q, k, v`` with the group's ``segments``."""
    if config.kind == "dhsa" and "dhsa" not in _KINDS:
        import ragkit.rerank.dhsa  # noqa: F401  (registers itself)
    function = _KINDS.get(config.kind)
    if function is None:
        raise RagkitError(f"attention {config.kind!r}: use one of {sorted(_KINDS)}")
    return function(q, k, v, segments, config)
