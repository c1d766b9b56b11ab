"""The JSON bodies of the inspection endpoints of ``ragkit serve`` (what the page at ``/``
reads): a hit's score taken apart, an index's details, doctor's findings, a document with its
chunks, chunker choice, matching key and language decision.

Example:
    >>> HitExplanation(fusion="rrf", first_stage=0.03, dense=0.016, sparse=0.014).reranked
    False
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class HitExplanation(BaseModel):
    """Why a hit scored what it did, and where it sits in its document (``POST /search``
    with ``explain``; ``explanations[i]`` explains ``hits[i]``)."""

    fusion: str = Field(
        description="rrf, weighted or per-query (hybrid), or the one list searched."
    )
    fusion_choice: str | None = Field(
        default=None,
        description="per-query fusion: the fusion this query got (dense weight, phrase lift).",
    )
    dense_weight: float | None = Field(
        default=None, description="per-query fusion: the dense list's weight chosen."
    )
    fusion_feedback: bool | None = Field(
        default=None,
        description="per-query fusion: whether the query got dense feedback (a second pass "
        "with its vector moved towards the first pass's top chunks; dense is that pass's).",
    )
    fusion_evidence: dict[str, float] | None = Field(
        default=None,
        description="per-query fusion: the query's first-pass evidence the choice was made "
        "from (words, phrase, overlap, agreement, gaps, sparse_per_word, arabic).",
    )
    first_stage: float = Field(
        description="The score before reranking: dense + sparse + listing + evidence + phrase (the "
        "hit's score unless reranked)."
    )
    dense: float | None = Field(
        default=None, description="The dense list's part of first_stage; null: not searched."
    )
    sparse: float | None = Field(
        default=None,
        description="The sparse (BM25) list's part of first_stage; null: not searched.",
    )
    dense_score: float | None = Field(
        default=None, description="Inner product; null: not in the list."
    )
    sparse_score: float | None = Field(
        default=None, description="BM25 score; null: not in the list."
    )
    dense_rank: int | None = Field(default=None, description="Place in the dense list, from 1.")
    sparse_rank: int | None = Field(default=None, description="Place in the sparse list, from 1.")
    evidence: float = Field(
        default=0.0,
        description="What other chunks of the hit's document added (document evidence).",
    )
    phrase: float = Field(
        default=0.0,
        description="The lift for holding the query's words side by side and in order "
        "(phrase evidence).",
    )
    listing: float = Field(
        default=0.0,
        description="per-query fusion: what the hit lost for being a table of contents "
        "(0 or below).",
    )
    reranked: bool = False
    cosine: float | None = Field(
        default=None,
        description="The relevance's evidence: the cosine of the query's vector and the "
        "chunk's; null: the query was not embedded (sparse mode).",
    )
    coverage: float | None = Field(
        default=None,
        description="The relevance's evidence: the share of the query terms' IDF the chunk "
        "holds; null: no terms (dense mode).",
    )
    before: str = Field("", description="Original text just before the hit's span.")
    after: str = Field("", description="Original text just after the hit's span.")


class LanguageCount(BaseModel):
    script: str
    language: str
    characters: int


class Setting(BaseModel):
    name: str
    value: str


class IndexDetails(BaseModel):
    """``GET /indexes/{name}``: what ``ragkit info`` prints, plus the languages held."""

    name: str
    path: str
    generation: int
    embedding_model: str
    dimension: int
    chunker: str
    documents: int
    chunks: int
    vectors: int
    chunkers_chosen: dict[str, int]
    languages: list[LanguageCount] = Field(description="Characters per script and language.")
    settings: list[Setting] = Field(description="The effective settings that shape results.")


class DoctorReport(BaseModel):
    """``GET /indexes/{name}/doctor``: ``ragkit doctor``'s checks (nothing repaired)."""

    healthy: bool
    generation: int
    counts: dict[str, int]
    problems: list[str]
    notes: list[str]
    hint: str = Field(description="What to run when there are problems.")
    checked: str = Field("", description="What the checks verify on this index's backend.")


class DocumentSummary(BaseModel):
    """One document as ``ragkit ls`` lists it."""

    key: str
    source: str
    title: str
    language: str
    chunks: int
    characters: int
    metadata: dict[str, Any]


class DocumentList(BaseModel):
    """``GET /indexes/{name}/documents``: the first ``limit`` matches, and how many matched."""

    total: int
    documents: list[DocumentSummary]


class LanguageDecision(BaseModel):
    """How the document's language was decided (``ragkit info --document``)."""

    language: str
    script: str
    confidence: float
    method: str
    reason: str = Field(description="The method in words.")


class ChunkSpan(BaseModel):
    start: int
    end: int
    tokens: int
    chunker: str


class CandidateScores(BaseModel):
    """One candidate chunker's metric scores (null: not computed) and weighted score."""

    chunker: str
    metrics: dict[str, float | None]
    score: float | None


class ChunkingView(BaseModel):
    """The chunker chosen and, for adaptive chunking, every candidate's scores, best first
    (``ragkit chunk --explain``)."""

    chosen: str = Field(description="Empty: indexed before ragkit recorded the choice.")
    adaptive: bool
    metrics: list[str]
    candidates: list[CandidateScores]
    weights: dict[str, float]
    seconds: float
    skipped: list[str]


class NormalizationChange(BaseModel):
    """One edit: original ``[start, end)`` became matching key ``[key_start, key_end)``."""

    start: int
    end: int
    key_start: int
    key_end: int
    before: str
    after: str


class NormalizationView(BaseModel):
    """The document's matching key as this index normalizes (``ragkit normalize --explain``)."""

    language: str
    enabled: bool = Field(description="False: the index's normalization setting is off.")
    key: str
    changes: list[NormalizationChange]


class DocumentView(BaseModel):
    """``GET /indexes/{name}/document``: one document's original text and what ragkit made of
    it. Chunk offsets point into ``text``."""

    index: str
    generation: int
    key: str
    source: str
    document_id: str
    title: str
    metadata: dict[str, Any]
    text: str
    language: LanguageDecision
    chunks: list[ChunkSpan]
    chunking: ChunkingView
    normalization: NormalizationView
