"""The JSON bodies of ``ragkit serve``: one pydantic model per request and response.

Example:
    >>> SearchRequest(query="boiling point of water").mode
    'hybrid'
    >>> SearchRequest.model_validate({"query": "water", "mode": "fuzzy"})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for SearchRequest
    ...
    >>> SearchRequest.model_validate({"query": "water", "language": "xx"})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for SearchRequest
    language
      Value error, language 'xx': not a language ragkit knows; use an ISO 639 code such as en, ar, fa, ur, ckb, am, ti [...]
    ...
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from ragkit.errors import RagkitError
from ragkit.index import Hit
from ragkit.normalize.detect import check_language
from ragkit.search.evidence import DocumentEvidence
from ragkit.search.feedback import Feedback
from ragkit.search.fusion import FusionMethod, SearchMode
from ragkit.search.phrase import PhraseEvidence
from ragkit.serve.limits import finite
from ragkit.serve.views import HitExplanation


class SearchRequest(BaseModel):
    """``POST /search``: the arguments of :meth:`ragkit.Index.search`, plus the index name."""

    query: str = Field(description="The query; it needs at least one letter or digit.")
    index: str | None = Field(
        None, description="Name of a served index (GET /indexes); may be left out when one is."
    )
    k: int = Field(10, ge=1, le=1000, description="Number of hits.")
    mode: SearchMode = "hybrid"
    filters: dict[str, str | int | float] | None = Field(
        None, description="language, source (a glob) or a metadata key, each to match exactly."
    )
    fusion: FusionMethod | None = Field(None, description="Hybrid fusion; default: the index's.")
    language: str | None = Field(
        None, description="Analyze the query as this ISO 639 code (e.g. en, ar; one ragkit knows)."
    )
    rerank: bool = Field(False, description="Rerank the first stage with the groupwise reranker.")
    collapse: bool | None = Field(
        None,
        description="Fold hits whose text a better hit shows into it (listed in its "
        "'duplicates'), so k hits are k distinct passages; default: the index's setting (on).",
    )
    feedback: Feedback | None = Field(
        None,
        description="off | sparse | dense | both | auto: a second pass with the query expanded "
        "from the first pass's top chunks; default: the index's setting.",
    )
    document_evidence: DocumentEvidence | None = Field(
        None,
        description="on | off | auto: lift a chunk whose document matches in other chunks "
        "too; default: the index's setting.",
    )
    phrase_evidence: PhraseEvidence | None = Field(
        None,
        description="on | off | auto: chunks holding the query's words side by side and in "
        "order come first; default: the index's setting (off).",
    )
    explain: bool = Field(
        False,
        description="Also return 'explanations': each hit's dense and sparse parts of its "
        "first-stage score and the original text around its span (the same hits either way).",
    )

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        finite(data)
        return data

    @field_validator("query")
    @classmethod
    def _has_words(cls, query: str) -> str:
        if not any(character.isalnum() for character in query):
            raise ValueError("empty query: give words to search for")
        return query

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str | None) -> str | None:
        if language is not None:
            try:
                return check_language(language, "language")
            except RagkitError as error:
                raise ValueError(str(error)) from None
        return language


class SearchResponse(BaseModel):
    """The hits of one search (:class:`ragkit.Hit`, offsets into each document's original
    text) and the index generation they come from."""

    index: str
    generation: int
    hits: list[Hit]
    explanations: list[HitExplanation] | None = Field(
        default=None, description="With 'explain': explanations[i] explains hits[i]."
    )


class IndexSummary(BaseModel):
    """One served index (``GET /indexes``)."""

    name: str
    path: str
    generation: int
    embedding_model: str
    documents: int
    chunks: int


class IndexHealth(BaseModel):
    """One served index's state: ``ok`` when its backend answers, ``unavailable`` (with why)
    when it cannot now — a Milvus server down or restarting — and ``error`` when the index is
    gone (a folder deleted since the server started)."""

    name: str
    state: str = "ok"
    detail: str = ""


class Health(BaseModel):
    """``GET /health``: the server answers, how many indexes it serves and each one's state
    (``status`` ``unavailable`` while one cannot answer)."""

    status: str = "ok"
    indexes: int
    states: list[IndexHealth] = Field(default_factory=list)
