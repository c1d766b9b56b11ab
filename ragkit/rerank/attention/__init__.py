"""The one attention call of the reranker's interaction layers: dense (reference) or DHSA.

Every interaction layer calls :func:`attend`; the ``kind`` in :class:`AttentionConfig` picks the
implementation (:data:`KINDS`). Tensors are ``(batch, heads, tokens, head_dim)``; ``segments``
is ``(batch, tokens)`` with ``0`` for the query's tokens, ``1..K`` for candidate slot ``k`` and
``-1`` for padding. Padding keys are never attended to; padding rows come out as zeros.

- :mod:`~ragkit.rerank.attention.config`: :class:`AttentionConfig`;
- :mod:`~ragkit.rerank.attention.dense`: full attention over the valid keys;
- :mod:`~ragkit.rerank.attention.dhsa`: dynamic hierarchical sparse attention.

Example:
    >>> import torch
    >>> q = k = v = torch.randn(1, 2, 5, 4)
    >>> segments = torch.tensor([[0, 0, 1, 1, -1]])
    >>> attend(q, k, v, segments, AttentionConfig()).shape
    torch.Size([1, 2, 5, 4])
"""

from __future__ import annotations

import torch

from ragkit.errors import RagkitError
from ragkit.rerank.attention.config import AttentionConfig, AttentionFunction, AttentionKind
from ragkit.rerank.attention.dense import dense_attention
from ragkit.rerank.attention.dhsa import dhsa_attention

KINDS: dict[str, AttentionFunction] = {"dense": dense_attention, "dhsa": dhsa_attention}
"""The implementation of each :data:`AttentionKind`."""

__all__ = ["KINDS", "AttentionConfig", "AttentionKind", "attend", "dense_attention"]


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    segments: torch.Tensor,
    config: AttentionConfig,
) -> torch.Tensor:
    """Attention of ``config.kind`` over ``q, k, v`` with the group's ``segments``."""
    function = KINDS.get(config.kind)
    if function is None:
        raise RagkitError(f"attention {config.kind!r}: use one of {sorted(KINDS)}")
    return function(q, k, v, segments, config)
