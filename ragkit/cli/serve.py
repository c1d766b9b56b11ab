"""``ragkit serve``: an HTTP API (FastAPI + uvicorn) over one or more index folders.

Example:
    $ ragkit serve my-index
    $ ragkit serve docs=indexes/docs wiki=indexes/wiki --port 8080
    $ curl -s localhost:8000/search -H 'content-type: application/json' \\
        -d '{"query": "boiling point of water", "k": 3}'
"""

from __future__ import annotations

import ipaddress

import typer

from ragkit.cli.output import console, errors, fail
from ragkit.errors import RagkitError

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def serve(
    indexes: list[str] = typer.Argument(
        ...,
        help="Index folders, each PATH or NAME=PATH (the name requests use; default: the "
        "folder's name).",
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on; 0.0.0.0 serves other machines too."
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    log_level: str = typer.Option(
        "info", "--log-level", help="critical | error | warning | info (one line per request)."
    ),
    max_body_bytes: int | None = typer.Option(
        None,
        "--max-body-bytes",
        min=1024,
        help="Refuse (413) a request body larger than this (default 1,048,576).",
    ),
    max_query_chars: int | None = typer.Option(
        None,
        "--max-query-chars",
        min=1,
        help="Refuse (422) a query longer than this many characters (default 10,000).",
    ),
) -> None:
    """Serve searches over HTTP, keeping each model loaded: POST /search, GET /indexes,
    GET /health, API docs at /docs, an inspection page at /. Read-only; new generations from
    `ragkit ingest` are served without a restart."""
    import uvicorn

    from ragkit import __version__
    from ragkit.serve import ServedIndexes, create_app, parse_locations
    from ragkit.serve.limits import Limits

    try:
        if log_level not in LOG_LEVELS:
            raise RagkitError(f"--log-level {log_level!r}: use one of {', '.join(LOG_LEVELS)}")
        served = ServedIndexes(parse_locations(indexes))
    except RagkitError as error:
        fail(error)
    if not _loopback(host):
        errors.print(
            f"[yellow]note:[/] listening on {host}: other machines can search these indexes "
            "(no authentication)",
            soft_wrap=True,
        )
    shown = host if ":" not in host else f"[{host}]"
    console.print(
        f"serving {', '.join(served.names)} at http://{shown}:{port} (inspection page: /, "
        "API docs: /docs)",
        soft_wrap=True,
        markup=False,
    )
    try:
        given = {"max_body_bytes": max_body_bytes, "max_query_chars": max_query_chars}
        limits = Limits(**{name: value for name, value in given.items() if value is not None})
        app = create_app(served, __version__, limits)
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        served.close()


def _loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only.

    Example:
        >>> _loopback("127.0.0.1"), _loopback("localhost"), _loopback("0.0.0.0")
        (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        return False
