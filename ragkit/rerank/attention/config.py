"""What the interaction layers' attention is told: its kind and DHSA's budget.

Tensors are ``(batch, heads, tokens, head_dim)``; ``segments`` is ``(batch, tokens)`` with
``0`` for the query's tokens, ``1..K`` for candidate slot ``k`` and ``-1`` for padding.

Example:
    >>> AttentionConfig(kind="dhsa", budget=256).block_size
    64
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch

AttentionKind = Literal["dense", "dhsa"]
AttentionFunction = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, "AttentionConfig"], torch.Tensor
]
"""``(q, k, v, segments, config) → output``, the signature every attention kind has."""


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
