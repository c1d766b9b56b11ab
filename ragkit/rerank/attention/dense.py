"""Dense attention over the non-padding keys: the reference every other kind is measured by.

Example:
    >>> import torch
    >>> q = k = v = torch.randn(1, 2, 5, 4)
    >>> segments = torch.tensor([[0, 0, 1, 1, -1]])
    >>> out = dense_attention(q, k, v, segments, AttentionConfig())
    >>> out.shape, bool(out[0, :, 4].abs().sum() == 0)
    (torch.Size([1, 2, 5, 4]), True)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ragkit.rerank.attention.config import AttentionConfig


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
