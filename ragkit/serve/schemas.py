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

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from ragkit.index import Hit
from ragkit.query import SearchOptions
from ragkit.serve.views import HitExplanation


class SearchRequest(SearchOptions):
    """``POST /search``: the query, the index name and the search options
    (:class:`ragkit.query.SearchOptions`, every field of it), plus ``explain``. A number must be
    finite wherever it is (``allow_inf_nan=False``; filter values are finite by their type)."""

    model_config = ConfigDict(allow_inf_nan=False)

    query: str = Field(description="The query; it needs at least one letter or digit.")
    index: str | None = Field(
        None, description="Name of a served index (GET /indexes); may be left out when one is."
    )
    k: StrictInt = Field(10, ge=1, le=1000, description="Number of hits.")
    explain: bool = Field(
        False,
        description="Also return 'explanations': each hit's dense and sparse parts of its "
        "first-stage score and the original text around its span (the same hits either way).",
    )

    @field_validator("query")
    @classmethod
    def _has_words(cls, query: str) -> str:
        if not any(character.isalnum() for character in query):
            raise ValueError("empty query: give words to search for")
        return query

    def options(self) -> SearchOptions:
        """The search options of this request."""
        return SearchOptions.model_validate(
            self.model_dump(include=set(SearchOptions.model_fields))
        )


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
