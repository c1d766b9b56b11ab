"""A pre-norm transformer encoder block whose attention goes through :func:`attend`.

The reranker's interaction layers and the DHSA benchmark both use :class:`InteractionLayer`,
so switching ``AttentionConfig.kind`` between ``dense`` and ``dhsa`` changes nothing else.

Example:
    >>> import torch
    >>> layer = InteractionLayer(hidden=32, heads=4, ffn=64)
    >>> x = torch.randn(2, 7, 32)
    >>> segments = torch.tensor([[0, 0, 1, 1, 2, 2, -1], [0, 1, 1, 1, 2, -1, -1]])
    >>> layer(x, segments).shape
    torch.Size([2, 7, 32])
"""

from __future__ import annotations

import torch
from torch import nn

from ragkit.errors import RagkitError
from ragkit.rerank.attention import AttentionConfig, attend


class InteractionLayer(nn.Module):
    """``x + attn(norm(x))`` then ``x + ffn(norm(x))``, bidirectional over the whole group."""

    def __init__(
        self,
        hidden: int,
        heads: int,
        ffn: int,
        attention: AttentionConfig | None = None,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if hidden % heads:
            raise RagkitError(f"interaction layer: hidden {hidden} is not divisible by {heads}")
        self.heads = heads
        self.attention = attention or AttentionConfig()
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(), nn.Linear(ffn, hidden))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        x = x + self.dropout(self.out(self._mix(self.norm1(x), segments)))
        return x + self.dropout(self.ffn(self.norm2(x)))

    def _mix(self, normed: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        """Attention output ``(B, T, H)``; q/k/v are freed on return, before the FFN runs."""
        batch, tokens, hidden = normed.shape
        q, k, v = (
            self.qkv(normed)
            .view(batch, tokens, 3, self.heads, hidden // self.heads)
            .permute(2, 0, 3, 1, 4)
        )
        mixed = attend(q, k, v, segments, self.attention)
        return mixed.transpose(1, 2).reshape(batch, tokens, hidden)
