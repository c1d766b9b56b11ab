"""The HTTP API of ``ragkit serve`` (FastAPI): search served indexes, list them, health, and
look inside them; the inspection page at ``/``.

Endpoints: ``POST /search``, ``GET /indexes``, ``GET /health``; for inspection
``GET /indexes/{name}`` (details), ``/indexes/{name}/doctor``, ``/indexes/{name}/documents``,
``/indexes/{name}/document?key=KEY`` and ``GET /languages``; OpenAPI docs at ``/docs``
(Swagger UI) and ``/redoc``, their JavaScript and CSS served by the app itself from the
fastapi-offline package (no CDN: the pages work on a machine without internet). The page at
``/`` is plain HTML, CSS and JavaScript shipped in ``ragkit/serve/page`` (served under
``/page/``) that reads only through these endpoints.
Errors are JSON ``{"detail": ...}``: an unknown index or document is 404, a request that does
not fit the schema (an empty query, an unknown ``mode`` or ``language``) 422, a search ragkit
refuses 422 with its message, and an index whose backend cannot answer now (a Milvus server
down or restarting) 503 — the next request tries again, and a restarted Milvus's released
collections are loaded again. ``/health`` says each index's state, 503 while one cannot
answer.

Example:
    >>> from fastapi.testclient import TestClient  # doctest: +SKIP
    >>> served = ServedIndexes(parse_locations(["my-index"]))  # doctest: +SKIP
    >>> client = TestClient(create_app(served))  # doctest: +SKIP
    >>> found = client.post("/search", json={"query": "boiling point of water"})  # doctest: +SKIP
    >>> found.json()["hits"][0]["source"]  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from ragkit.errors import RagkitError
from ragkit.normalize.detect import known_languages
from ragkit.paths import package_folder
from ragkit.serve import inspection
from ragkit.serve.indexes import ServedIndexes
from ragkit.serve.limits import BodyLimit, Limits, validation_failed
from ragkit.serve.schemas import Health, IndexSummary, SearchRequest, SearchResponse
from ragkit.serve.views import DoctorReport, DocumentList, DocumentView, IndexDetails

# The page runs only its own files: no inline script or style, no other origin, no plugins.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def create_app(served: ServedIndexes, version: str = "", limits: Limits | None = None) -> FastAPI:
    """A FastAPI app answering for ``served``. Handlers are plain functions, so FastAPI runs
    concurrent searches on its thread pool. ``/docs`` and ``/redoc`` load their assets from
    the app (FastAPI's ``get_swagger_ui_html`` and ``get_redoc_html`` with local URLs).
    ``limits``: the largest body and query accepted (:mod:`ragkit.serve.limits`)."""
    limits = limits or Limits()
    app = FastAPIOffline(
        title="ragkit",
        version=version or "0",
        description="Search ragkit index folders: hybrid (dense + BM25), dense or sparse, "
        "optionally reranked. Read-only; new generations committed by `ragkit ingest` are "
        "served as soon as they are committed.",
    )

    app.add_middleware(BodyLimit, limit=limits.max_body_bytes)
    app.add_exception_handler(RequestValidationError, validation_failed)
    _state_limits(app, limits)

    @app.exception_handler(RagkitError)
    def _refused(_: Request, error: RagkitError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=error.http_status)

    @app.post("/search", response_model=SearchResponse)
    def search(request: SearchRequest) -> SearchResponse:
        """The best ``k`` chunks for ``query``: the hits of ``ragkit.Index.search``."""
        if len(request.query) > limits.max_query_chars:
            raise RagkitError(
                f"query of {len(request.query):,} characters: over the server's limit of "
                f"{limits.max_query_chars:,} (ragkit serve --max-query-chars)"
            )
        return served.search(request)

    @app.get("/indexes", response_model=list[IndexSummary])
    def indexes() -> list[IndexSummary]:
        """The served indexes with their current generation, model and counts."""
        return served.summaries()

    @app.get("/health", response_model=Health, responses={503: {"model": Health}})
    def health() -> JSONResponse:
        """The server is up, and whether each index's backend answers (``ok``) or cannot now
        (``unavailable``: 503, with why)."""
        states = served.health()
        ready = all(each.state == "ok" for each in states)
        found = Health(status="ok" if ready else "unavailable", indexes=len(states), states=states)
        return JSONResponse(found.model_dump(), status_code=200 if ready else 503)

    @app.get("/indexes/{name}", response_model=IndexDetails)
    def index_details(name: str) -> IndexDetails:
        """The index's model, generation, counts, languages and effective settings (what
        ``ragkit info`` prints)."""
        name, index = served.get(name)
        return inspection.index_details(name, served.paths[name], index)

    @app.get("/indexes/{name}/doctor", response_model=DoctorReport)
    def doctor(name: str) -> DoctorReport:
        """``ragkit doctor``'s checks of the index (nothing is repaired)."""
        name, _ = served.get(name)
        return inspection.doctor_report(served.paths[name])

    @app.get("/indexes/{name}/documents", response_model=DocumentList)
    def documents(
        name: str,
        glob: str | None = Query(None, description="A key, source or glob (as `ragkit ls`)."),
        limit: int = Query(100, ge=1, le=10_000, description="At most this many documents."),
    ) -> DocumentList:
        """The documents the index holds, by key (what ``ragkit ls`` lists)."""
        name, index = served.get(name)
        return inspection.document_list(index, glob, limit)

    @app.get("/indexes/{name}/document", response_model=DocumentView)
    def document(
        name: str, key: str = Query(description="The document's key (GET .../documents).")
    ) -> DocumentView:
        """One document: its original text, chunks, chunker choice with every candidate's
        scores, matching key with what normalization changed, and how its language was
        decided."""
        name, index = served.get(name)
        return inspection.document_view(name, index, key)

    @app.get("/languages", response_model=list[str])
    def languages() -> list[str]:
        """The ISO 639 codes a search's ``language`` may name."""
        return sorted(known_languages())

    page = package_folder("ragkit.serve", "page")

    @app.get("/", include_in_schema=False)
    def page_html() -> FileResponse:
        return FileResponse(page / "index.html", media_type="text/html", headers=PAGE_HEADERS)

    app.mount("/page", StaticFiles(directory=page), name="page")
    return app


def _state_limits(app: FastAPI, limits: Limits) -> None:
    """Say the limits in the OpenAPI schema: the query's ``maxLength`` and the body's size."""
    build = app.openapi

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = build()
            request = document["components"]["schemas"]["SearchRequest"]["properties"]
            request["query"]["maxLength"] = limits.max_query_chars
            document["info"]["description"] += (
                f" Request bodies over {limits.max_body_bytes:,} bytes are refused (413); "
                "numbers must be finite (NaN and Infinity are 422)."
            )
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = schema  # type: ignore[method-assign]
