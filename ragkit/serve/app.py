"""The HTTP API of ``ragkit serve`` (FastAPI): search served indexes, list them, health.

Endpoints: ``POST /search``, ``GET /indexes``, ``GET /health``; OpenAPI docs at ``/docs``
(Swagger UI) and ``/redoc``, their JavaScript and CSS served by the app itself from the
fastapi-offline package (no CDN: the pages work on a machine without internet).
Errors are JSON ``{"detail": ...}``: an unknown index is 404, a request that does not fit the
schema (an empty query, an unknown ``mode`` or ``language``) 422, a search ragkit refuses 422
with its message.

Example:
    >>> from fastapi.testclient import TestClient  # doctest: +SKIP
    >>> served = ServedIndexes(parse_locations(["my-index"]))  # doctest: +SKIP
    >>> client = TestClient(create_app(served))  # doctest: +SKIP
    >>> found = client.post("/search", json={"query": "boiling point of water"})  # doctest: +SKIP
    >>> found.json()["hits"][0]["source"]  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline

from ragkit.errors import RagkitError
from ragkit.serve.indexes import ServedIndexes, UnknownIndexError
from ragkit.serve.schemas import Health, IndexSummary, SearchRequest, SearchResponse


def create_app(served: ServedIndexes, version: str = "") -> FastAPI:
    """A FastAPI app answering for ``served``. Handlers are plain functions, so FastAPI runs
    concurrent searches on its thread pool. ``/docs`` and ``/redoc`` load their assets from
    the app (FastAPI's ``get_swagger_ui_html`` and ``get_redoc_html`` with local URLs)."""
    app = FastAPIOffline(
        title="ragkit",
        version=version or "0",
        description="Search ragkit index folders: hybrid (dense + BM25), dense or sparse, "
        "optionally reranked. Read-only; new generations committed by `ragkit ingest` are "
        "served as soon as they are committed.",
    )

    @app.exception_handler(RagkitError)
    def _refused(_: Request, error: RagkitError) -> JSONResponse:
        status = 404 if isinstance(error, UnknownIndexError) else 422
        return JSONResponse({"detail": str(error)}, status_code=status)

    @app.post("/search", response_model=SearchResponse)
    def search(request: SearchRequest) -> SearchResponse:
        """The best ``k`` chunks for ``query``: the hits of ``ragkit.Index.search``."""
        return served.search(request)

    @app.get("/indexes", response_model=list[IndexSummary])
    def indexes() -> list[IndexSummary]:
        """The served indexes with their current generation, model and counts."""
        return served.summaries()

    @app.get("/health", response_model=Health)
    def health() -> Health:
        """The server is up and its indexes are open."""
        return Health(indexes=len(served.names))

    return app
