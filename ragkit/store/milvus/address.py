"""Where a Milvus index lives: ``milvus://HOST:PORT/COLLECTION`` (a server: Milvus
Standalone, Distributed, or ``milvus-lite server``; ``?shards=N`` for the chunk collection
ragkit creates, ``?replicas=N`` for the in-memory replicas it loads) or
``milvus-lite:///ABSOLUTE/PATH.db`` with an optional ``?collection=NAME`` (embedded Milvus Lite;
default collection ``ragkit``).

A server's token comes from ``MILVUS_TOKEN`` (``user:password`` or an API key) and never
appears in :attr:`MilvusAddress.display`, so messages and logs cannot show it.

Example:
    >>> address = parse_milvus("milvus://127.0.0.1:19530/docs", token="root:Milvus")
    >>> address.uri, address.collection, address.display
    ('http://127.0.0.1:19530', 'docs', 'milvus://127.0.0.1:19530/docs')
    >>> parse_milvus("milvus-lite:///data/ragkit.db?collection=notes").uri
    '/data/ragkit.db'
    >>> parse_milvus("milvus://db:19530/docs?shards=8&replicas=2").shards
    8
    >>> is_milvus("docs/index"), is_milvus("milvus://h:1/c")
    (False, True)
    >>> parse_milvus("milvus://root:secret@h:1/c")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragkit.errors.InvalidArgumentError: milvus://h:1/c: give the credentials in MILVUS_TOKEN ...
    >>> parse_milvus("milvus://db:99999/docs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragkit.errors.InvalidArgumentError: milvus://db:99999/docs: port '99999': give a number from 1 to 65535; ...
    >>> parse_milvus("milvus://[::1]:19530/docs").uri
    'http://[::1]:19530'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from ragkit.errors import InvalidArgumentError

__all__ = ["DEFAULT_COLLECTION", "SCHEMES", "MilvusAddress", "is_milvus", "parse_milvus"]

SCHEMES = ("milvus://", "milvus-lite://")
DEFAULT_COLLECTION = "ragkit"
_COLLECTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")  # Milvus allows 255; suffixes added
TOKEN_VARIABLE = "MILVUS_TOKEN"


@dataclass(frozen=True)
class MilvusAddress:
    """A parsed Milvus location: what :class:`pymilvus.MilvusClient` takes (``uri``,
    ``token``), the collection, and the location as messages show it."""

    uri: str
    collection: str
    display: str
    token: str = field(default="", repr=False)
    shards: int = 1  # of the chunk collection, when ragkit creates it
    replicas: int = 1  # in-memory replicas when ragkit loads the collections

    @property
    def embedded(self) -> bool:
        """Whether this is an embedded Milvus Lite file (one process at a time)."""
        return not self.uri.startswith("http")


def is_milvus(location: object) -> bool:
    """Whether ``location`` (a string or path) names a Milvus index rather than a folder."""
    return isinstance(location, str) and location.startswith(SCHEMES)


def parse_milvus(location: str, token: str | None = None) -> MilvusAddress:
    """``location`` parsed; the token defaults to ``$MILVUS_TOKEN``. A malformed location is
    a :class:`RagkitError` that shows the accepted forms."""
    token = os.environ.get(TOKEN_VARIABLE, "") if token is None else token
    forms = "use milvus://HOST:PORT/COLLECTION or milvus-lite:///ABSOLUTE/PATH.db[?collection=NAME]"
    try:
        parts = urlsplit(location)
    except ValueError as error:  # an unclosed [IPv6 address
        raise InvalidArgumentError(f"{_without_secret(location)}: {error}; {forms}") from error
    if location.startswith("milvus-lite://"):
        path = parts.path
        if parts.netloc or not path.startswith("/") or not path.endswith(".db"):
            raise InvalidArgumentError(
                f"{location}: an embedded Milvus Lite file is an absolute .db path; {forms}"
            )
        collection = parse_qs(parts.query).get("collection", [DEFAULT_COLLECTION])[-1]
        display = location
        uri = path
    else:
        if "@" in parts.netloc:  # the address is printed in messages and logs; a token is not
            raise InvalidArgumentError(
                f"{_without_secret(location)}: give the credentials in {TOKEN_VARIABLE} "
                "(user:password or an API key), not in the address"
            )
        port = _port(location, parts.netloc, forms)
        if not parts.hostname or port is None:
            raise InvalidArgumentError(f"{location}: no HOST:PORT; {forms}")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        collection = parts.path.strip("/") or DEFAULT_COLLECTION
        display = f"milvus://{host}:{port}/{collection}"
        uri = f"http://{host}:{port}"
        counts = _counts(location, parse_qs(parts.query))
    if not _COLLECTION.fullmatch(collection):
        raise InvalidArgumentError(
            f"{display}: collection name {collection!r}: use letters, digits and '_' (starting "
            "with a letter or '_', at most 200 characters)"
        )
    if location.startswith("milvus-lite://"):
        return MilvusAddress(uri, collection, display, token)
    return MilvusAddress(uri, collection, display, token, **counts)


def _port(location: str, netloc: str, forms: str) -> int | None:
    """The port of a server address (None when none is given); one that is not a number from
    1 to 65535 is a :class:`RagkitError`."""
    given = netloc.rpartition("]")[2].rpartition(":")[2] if ":" in netloc else ""
    if not given:
        return None
    if not given.isascii() or not given.isdigit() or not 1 <= int(given) <= 65_535:
        raise InvalidArgumentError(
            f"{location}: port {given!r}: give a number from 1 to 65535; {forms}"
        )
    return int(given)


def _counts(location: str, query: dict[str, list[str]]) -> dict[str, int]:
    """``shards`` and ``replicas`` of a server address (whole numbers ≥ 1); other query
    parameters are refused."""
    unknown = sorted(set(query) - {"shards", "replicas"})
    if unknown:
        raise InvalidArgumentError(
            f"{location}: unknown parameter {', '.join(unknown)}; a server address takes "
            "?shards=N (when ragkit creates the collection) and ?replicas=N (when it loads it)"
        )
    counts = {}
    for name, values in query.items():
        if not values[-1].isdigit() or int(values[-1]) < 1:
            raise InvalidArgumentError(
                f"{location}: {name}={values[-1]!r}: give a whole number ≥ 1"
            )
        counts[name] = int(values[-1])
    return counts


def _without_secret(location: str) -> str:
    """``location`` with any ``user:password@`` removed, for messages."""
    return re.sub(r"//[^/@]*@", "//", location)
