"""What a request to ``ragkit serve`` may be: its body's size, its query's length, and only
finite numbers.

- A body over :attr:`Limits.max_body_bytes` is answered 413 without being read past the
  limit (:class:`BodyLimit`, an ASGI middleware counting what arrives); a ``query`` over
  :attr:`Limits.max_query_chars` characters is 422. A 50 MB query would otherwise be
  normalized, tokenized and embedded (tens of seconds, gigabytes).
- ``NaN`` and ``Infinity`` (which Python's JSON parser accepts) are 422: the request model
  refuses them wherever they are (pydantic, ``allow_inf_nan=False``), and validation errors are
  answered without echoing the input, whose non-finite numbers JSON cannot carry (they used to
  make the error response itself fail with a 500).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.requests import Request
from fastapi.responses import JSONResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Limits:
    """The largest request body (bytes) and query (characters) the server accepts
    (``ragkit serve --max-body-bytes/--max-query-chars``)."""

    max_body_bytes: int = 1_048_576
    max_query_chars: int = 10_000


async def validation_failed(_: Request, error: Exception) -> JSONResponse:
    """422 with each problem's location, message and type — not its input, which may hold
    values JSON cannot carry."""
    problems = error.errors() if isinstance(error, RequestValidationError) else []
    detail = [
        {
            "loc": list(each.get("loc", ())),
            "msg": str(each.get("msg", "")),
            "type": each.get("type"),
        }
        for each in problems
    ]
    return JSONResponse({"detail": detail}, status_code=422)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 — at once when its
    ``Content-Length`` says so, else as soon as the bytes received pass the limit (the body
    is gathered here, at most ``limit`` bytes, and handed on whole)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        parts: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            parts.append(message.get("body", b""))
            received += len(parts[-1])
            if received > self.limit:
                await self._refuse(send)
                return
            if not message.get("more_body"):
                break
        whole: Message | None = {"type": "http.request", "body": b"".join(parts)}

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = (
            b'{"detail": "request body over the server\'s limit of '
            + f"{self.limit:,}".encode()
            + b' bytes (ragkit serve --max-body-bytes)"}'
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
