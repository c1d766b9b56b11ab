"""Settings: one pydantic model, read from ``ragkit.toml`` in the index folder plus env overrides."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

DEFAULT_MODEL = "multilingual-e5-small"


def cache_dir() -> Path:
    """Folder for converted models and other derived files (``RAGKIT_CACHE`` overrides).

    Example:
        >>> cache_dir().name in {"ragkit", os.environ.get("RAGKIT_CACHE", "ragkit").rsplit("/", 1)[-1]}
        True
    """
    override = os.environ.get("RAGKIT_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "ragkit"


class Settings(BaseModel):
    """Settings an index is built with; stored in the index so queries use the same model.

    Example:
        >>> Settings().chunk_tokens
        256
    """

    embedding_model: str = Field(
        default_factory=lambda: os.environ.get("RAGKIT_MODEL", DEFAULT_MODEL)
    )
    chunk_tokens: int = Field(default=256, ge=8, le=8192)
    embed_batch_size: int = Field(default=32, ge=1)
    commit_every_documents: int = Field(default=500, ge=1)
    hnsw_threshold: int = Field(default=50_000, ge=1)
    hnsw_m: int = Field(default=32, ge=4)
    hnsw_ef_search: int = Field(default=128, ge=1)
    ivf_threshold: int = Field(default=2_000_000, ge=1)
    ivf_nprobe: int = Field(default=32, ge=1)
    ivf_pq_m: int = Field(default=48, ge=1)
    rescore_factor: int = Field(default=10, ge=1)
    rrf_k: int = Field(default=60, ge=1)
    # Sparse terms (ragkit.sparse): stems where a stemmer exists, else SentencePiece pieces.
    sparse_terms: Literal["auto", "pieces", "stems"] = "auto"
    fusion_depth: int = Field(default=100, ge=1)  # candidates taken from each list
    dense_weight: float = Field(default=0.5, ge=0.0, le=1.0)  # weighted fusion only
    # Where normalization applies (see ragkit.normalize): matching keys only, or embeddings too.
    normalization: Literal["post-inference", "pre-index", "off"] = "post-inference"
    geez_mode: Literal["homophones", "homophones+labialized"] = "homophones"
    lexical_normalization: bool = False
