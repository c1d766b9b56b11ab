"""The groupwise reranker: the query and K candidates attend to each other jointly.

Input: the backbone's token states of the query ``(B, Tq, Hb)`` and of K candidates
``(B, K, Td, Hb)`` (averaged over windows of ``pool_stride`` tokens), plus per-candidate
features ``(B, K, F)`` (:func:`group_features`). They become one sequence ``[query | doc₁ | … |
doc_K]`` with segment ids (0 = query, k = slot k, −1 = padding) that runs
through :class:`~ragkit.rerank.layers.InteractionLayer` s — every token sees the query and every
other candidate, so each score is made in view of the rest of the group. Each candidate's
tokens are pooled and a head emits logits over relevance levels ``0..L-1``: the **policy**
(a categorical distribution GRPO samples from) and, through its mean, an **expected score** in
[0, 1] used at inference.

With ``tuned_layers`` > 0 the inputs are the backbone's states *below* its top layers, and the
model first runs its own trained copy of those layers (:class:`~ragkit.rerank.backbone.UpperLayers`,
passed in as ``upper``) over the query and each candidate separately.

Permutation: candidates carry no slot-position embedding (a token knows its own document
through the document's summary vector added to its tokens, and attention masks nothing
between documents), so reordering the candidates reorders the scores and changes nothing else.

Example:
    >>> import torch
    >>> config = RerankerConfig(hidden=32, heads=4, ffn=64, layers=1, backbone_dim=16)
    >>> model = GroupwiseReranker(config).eval()
    >>> query = torch.randn(2, 5, 16); query_mask = torch.ones(2, 5, dtype=torch.bool)
    >>> docs = torch.randn(2, 3, 7, 16); doc_mask = torch.ones(2, 3, 7, dtype=torch.bool)
    >>> features = torch.randn(2, 3, FEATURES)
    >>> logits = model(query, query_mask, docs, doc_mask, features)
    >>> logits.shape, expected_score(logits).shape
    (torch.Size([2, 3, 11]), torch.Size([2, 3]))
"""

from __future__ import annotations

import torch
from torch import nn

from ragkit.rerank.backbone import UpperLayers
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.layers import InteractionLayer

SIGNALS = 5  # cosine, overlap, prior, maxsim, centroid (ragkit.rerank.features)
FEATURES = 2 * SIGNALS  # each raw and z-scored within the group


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over its second-to-last axis where ``mask`` is True (0 where none)."""
    weights = mask.unsqueeze(-1).to(x.dtype)
    return (x * weights).sum(-2) / weights.sum(-2).clamp(min=1.0)


def pool_tokens(
    states: torch.Tensor, mask: torch.Tensor, stride: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Average ``(..., T, H)`` states over windows of ``stride`` tokens (padding excluded).

    Example:
        >>> x = torch.arange(6.0).view(1, 6, 1); m = torch.tensor([[True] * 5 + [False]])
        >>> pooled, kept = pool_tokens(x, m, 4)
        >>> pooled[0, :, 0].tolist(), kept.tolist()
        ([1.5, 4.0], [[True, True]])
    """
    if stride == 1:
        return states, mask
    *lead, tokens, hidden = states.shape
    extra = -tokens % stride
    states = nn.functional.pad(states, (0, 0, 0, extra))
    mask = nn.functional.pad(mask, (0, extra))
    windows = (tokens + extra) // stride
    pooled = masked_mean(
        states.reshape(*lead, windows, stride, hidden), mask.reshape(*lead, windows, stride)
    )
    return pooled, mask.reshape(*lead, windows, stride).any(-1)


def group_features(signals: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """``(B, K, 2S)``: the ``S`` raw signals ``(B, K, S)`` and their z-scores within the group.

    z-scores use the group's valid candidates only (padding gets 0), so each candidate's
    features say how it compares with its rivals — the groupwise view of a pointwise signal.

    Example:
        >>> f = group_features(torch.tensor([[[0.2, 1.0, 0.5], [0.4, 0.0, 0.5]]]),
        ...                    torch.tensor([[True, True]]))
        >>> f.shape, [round(v, 4) for v in f[0, :, 3].tolist()]
        (torch.Size([1, 2, 6]), [-1.0, 1.0])
    """
    weights = valid.unsqueeze(-1).to(signals.dtype)
    count = weights.sum(1, keepdim=True).clamp(min=1.0)
    mean = (signals * weights).sum(1, keepdim=True) / count
    std = (((signals - mean) ** 2 * weights).sum(1, keepdim=True) / count).sqrt()
    z = (signals - mean) / std.clamp(min=1e-3) * weights
    return torch.cat([signals, z], dim=-1)


def expected_score(logits: torch.Tensor) -> torch.Tensor:
    """The policy's mean level scaled to [0, 1]: ``Σ_l p(l) · l / (L − 1)``."""
    levels = torch.linspace(0.0, 1.0, logits.shape[-1], dtype=logits.dtype)
    return (logits.softmax(-1) * levels).sum(-1)


class GroupwiseReranker(nn.Module):
    """Interaction layers over ``[query | doc₁ | … | doc_K]`` and a per-document level head."""

    def __init__(self, config: RerankerConfig, upper: UpperLayers | None = None) -> None:
        super().__init__()
        if (upper is None) != (config.tuned_layers == 0):
            raise ValueError(
                f"tuned_layers={config.tuned_layers} needs exactly that many upper layers"
            )
        self.config = config
        self.upper = upper
        hidden = config.hidden
        self.input_norm = nn.LayerNorm(config.backbone_dim)
        self.input = nn.Linear(config.backbone_dim, hidden)
        self.kind = nn.Embedding(2, hidden)  # 0 = query token, 1 = candidate token
        self.summary = nn.Linear(hidden, hidden)
        attention = config.attention_config()
        self.layers = nn.ModuleList(
            InteractionLayer(hidden, config.heads, config.ffn, attention, config.dropout)
            for _ in range(config.layers)
        )
        self.output_norm = nn.LayerNorm(hidden)
        self.features = nn.Linear(FEATURES, hidden)
        self.head = nn.Sequential(
            nn.Linear(3 * hidden, hidden), nn.GELU(), nn.Linear(hidden, config.levels)
        )

    def forward(
        self,
        query: torch.Tensor,
        query_mask: torch.Tensor,
        docs: torch.Tensor,
        doc_mask: torch.Tensor,
        features: torch.Tensor,
    ) -> torch.Tensor:
        """Level logits ``(B, K, L)`` for each candidate of each group."""
        if self.upper is not None:
            query = self.upper(query, query_mask)
            batch, slots, tokens, width = docs.shape
            flat_mask = doc_mask.reshape(batch * slots, tokens)
            docs = self.upper(docs.reshape(batch * slots, tokens, width), flat_mask).reshape(
                docs.shape
            )
        return self.interact(query, query_mask, docs, doc_mask, features)

    def interact(
        self,
        query: torch.Tensor,
        query_mask: torch.Tensor,
        docs: torch.Tensor,
        doc_mask: torch.Tensor,
        features: torch.Tensor,
    ) -> torch.Tensor:
        """:meth:`forward` after the tuned upper layers: ``query`` and ``docs`` are backbone
        top-layer states (inference runs the upper layers once per candidate, not once per
        group it lands in)."""
        docs, doc_mask = pool_tokens(docs, doc_mask, self.config.pool_stride)
        batch, slots, tokens, _ = docs.shape
        q = self.input(self.input_norm(query)) + self.kind.weight[0]
        d = self.input(self.input_norm(docs)) + self.kind.weight[1]
        d = d + self.summary(masked_mean(d, doc_mask)).unsqueeze(2)
        slot_ids = torch.arange(1, slots + 1).view(1, slots, 1).expand(batch, slots, tokens)
        segments = torch.cat(
            [
                torch.where(query_mask, 0, -1),
                torch.where(doc_mask, slot_ids, -1).reshape(batch, slots * tokens),
            ],
            dim=1,
        )
        x = torch.cat([q, d.reshape(batch, slots * tokens, -1)], dim=1)
        for layer in self.layers:
            x = layer(x, segments)
        x = self.output_norm(x)
        q_len = query.shape[1]
        pooled_query = masked_mean(x[:, :q_len], query_mask)
        pooled_docs = masked_mean(x[:, q_len:].reshape(batch, slots, tokens, -1), doc_mask)
        combined = torch.cat(
            [pooled_docs, pooled_docs * pooled_query.unsqueeze(1), self.features(features)], -1
        )
        return self.head(combined)
