"""Settings of the groupwise reranker: backbone, token budgets, interaction layers, attention.

Stored next to the weights (``config.json``) so a shipped model always loads with the shape it
was trained with.

Example:
    >>> config = RerankerConfig()
    >>> (config.backbone, config.doc_tokens, config.levels)
    ('all-minilm-l6-v2', 128, 11)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragkit.rerank.attention import AttentionConfig


class RerankerConfig(BaseModel):
    """Shape of a :class:`~ragkit.rerank.model.GroupwiseReranker` and how it reads text.

    ``tuned_layers``: the backbone's top layers trained with the reranker (0 = frozen backbone;
    see :mod:`ragkit.rerank.backbone`); ``doc_tokens`` / ``query_tokens``: backbone truncation
    budgets; ``pool_stride``: each
    candidate's backbone states are averaged over windows of this many tokens before the
    interaction layers (128 tokens → 32 interaction tokens at 4); ``group_size``: candidates
    scored jointly (larger candidate lists are split into groups); ``levels``: relevance levels
    ``0..levels-1`` of the policy; ``attention``: ``dense`` or ``dhsa`` (and its budget).
    """

    backbone: str = "all-minilm-l6-v2"
    backbone_dim: int = Field(default=384, ge=1)
    tuned_layers: int = Field(default=0, ge=0, le=24)
    query_tokens: int = Field(default=32, ge=4, le=512)
    doc_tokens: int = Field(default=128, ge=8, le=512)
    pool_stride: int = Field(default=4, ge=1)
    group_size: int = Field(default=8, ge=1)
    hidden: int = Field(default=192, ge=8)
    heads: int = Field(default=4, ge=1)
    ffn: int = Field(default=384, ge=8)
    layers: int = Field(default=2, ge=1)
    levels: int = Field(default=11, ge=2)
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0)
    attention: Literal["dense", "dhsa"] = "dense"
    attention_budget: int = Field(default=1024, ge=1)
    attention_block: int = Field(default=64, ge=1)
    attention_window: int = Field(default=64, ge=0)

    def attention_config(self) -> AttentionConfig:
        return AttentionConfig(
            kind=self.attention,
            budget=self.attention_budget,
            block_size=self.attention_block,
            local_window=self.attention_window,
        )
