"""The Milvus collections of one ragkit index, and the client that reaches them.

An index called ``C`` is four collections:

- ``C`` — one row per chunk: ``id`` (primary key, see :func:`row_id`), ``document_id`` and
  ``version`` (of the document and of its content), ``position``, offsets, token count,
  chunker, text, matching key, ``terms`` (ragkit's sparse terms, space-joined),
  ``bm25_text`` (the same terms spelled for Milvus's analyzer: :mod:`~ragkit.store.milvus.terms`),
  ``sparse`` (Milvus's BM25 function of ``bm25_text``) and ``vector`` (HNSW, inner product);
- ``C_documents`` — one row per document: key, source, title, language, metadata (JSON),
  chunking record, content hash and version. Writing it is the document's commit point: a
  chunk is visible only while its ``version`` is the one its document row holds;
- ``C_texts`` — each document's original text in parts of at most :data:`TEXT_PART_CHARS`;
- ``C_state`` — settings, dimension, schema version, generation, language-rules version,
  tokenizer fingerprints and the run log.

Milvus needs a vector field in every collection; the last three carry a two-float
``placeholder``. Every collection is created with ``Strong`` consistency, so a search sees
every write acknowledged before it. Expressions built here hold numbers only (ids and
versions); a search filter's values are bound as template parameters or escaped
(:mod:`ragkit.store.filters.milvus`).

Example:
    >>> row_id("chunk", "/docs/a.txt", "9f2c", "0") == row_id("chunk", "/docs/a.txt", "9f2c", "0")
    True
    >>> 0 <= row_id("document", "/docs/a.txt") < 2**63
    True
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
from pymilvus import DataType, Function, FunctionType, MilvusClient, MilvusException
from pymilvus.exceptions import (
    ConnectError,
    ConnectionNotExistException,
    MilvusUnavailableException,
)

from ragkit.errors import BackendUnavailableError, RagkitError
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.records import FIELD_BYTES

SCHEMA_VERSION = 1
VARCHAR_BYTES = FIELD_BYTES  # Milvus's longest VARCHAR, in bytes (both backends' limit)
TEXT_PART_CHARS = 16_000  # ≤ 64,000 bytes even at four bytes per character
PLACEHOLDER = [0.0, 0.0]
CONNECT_SECONDS = 10.0
# pymilvus pings every 10 s even when idle; gRPC servers with default settings (Milvus Lite's)
# answer that with GOAWAY "too_many_pings" lines on standard error. Once in 5 minutes is what
# they accept, and still finds a dead connection.
GRPC_OPTIONS = {"grpc.keepalive_time_ms": 300_000}
PAGE = 1000  # rows per query page
NOT_LOADED = 101  # Milvus's error code of a released collection (after a restart)
UNAVAILABLE = (ConnectError, ConnectionNotExistException, MilvusUnavailableException)
GONE = (
    "unavailable",
    "connection refused",
    "failed to connect",
    "deadline exceeded",
    "socket closed",
)
HNSW = {"M": 16, "efConstruction": 200}
BM25 = {"bm25_k1": 1.5, "bm25_b": 0.75}  # bm25s's Lucene BM25, as the folder store scores
# Milvus multiplies each term's score by (k1 + 1), bm25s's Lucene variant does not: dividing
# gives the folder store's scores, so fusion weighs both backends' lists alike.
BM25_SCALE = 1.0 + BM25["bm25_k1"]

T = TypeVar("T")
log = logging.getLogger(__name__)

# pymilvus logs every failed call and the iterator's timestamp fallback itself; ragkit turns
# failures into one RagkitError line (guarded), so its own log would say each one twice.
logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
logging.getLogger("milvus_lite.server_manager").setLevel(logging.CRITICAL)  # likewise


def row_id(*parts: str) -> int:
    """A stable 63-bit id of ``parts`` (the same document, content and position give the
    same chunk id, so writing a batch again replaces rather than duplicates)."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big") >> 1


def names(collection: str) -> dict[str, str]:
    """The four collection names of the index ``collection``."""
    return {
        "chunks": collection,
        "documents": f"{collection}_documents",
        "texts": f"{collection}_texts",
        "state": f"{collection}_state",
    }


def connect(address: MilvusAddress) -> MilvusClient:
    """A client of ``address``; an unreachable server is a :class:`RagkitError`."""
    try:
        return MilvusClient(
            uri=address.uri,
            token=address.token,
            timeout=CONNECT_SECONDS,
            grpc_options=GRPC_OPTIONS,
        )
    except MilvusException as error:
        raise unreachable(address, error) from error
    except Exception as error:  # grpc's own errors on a dead address
        raise unreachable(address, error) from error


def unreachable(address: MilvusAddress, error: BaseException) -> RagkitError:
    """The error for a Milvus that cannot be reached: a
    :class:`~ragkit.errors.BackendUnavailableError` (an embedded file another process holds
    says so instead)."""
    if address.embedded and _locked(Path(address.uri) / "LOCK"):
        return RagkitError(
            f"{address.display}: in use by another process (an embedded Milvus Lite file "
            "serves one process at a time); to share it, run `milvus-lite server --data-dir "
            f"{address.uri} --port 19530` and use milvus://127.0.0.1:19530/{address.collection}"
        )
    reason = getattr(error, "message", None) or str(error) or type(error).__name__
    reason = reason.replace(address.token, "***") if address.token else reason
    hint = (
        "check the file path"
        if address.embedded
        else "start Milvus there (e.g. the Milvus Standalone container) or fix HOST:PORT"
    )
    return BackendUnavailableError(f"{address.display}: Milvus unreachable ({reason}); {hint}")


def _locked(path: Path) -> bool:
    """Whether another open file holds an exclusive ``flock`` on ``path``."""
    if not path.exists():
        return False
    with path.open("a") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def guarded(
    address: MilvusAddress, doing: str, call: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """``call(*args, **kwargs)``, with a Milvus error turned into one :class:`RagkitError`
    line that says what was being done where (:func:`failed`). A client call on a collection
    Milvus released — it restarted since the collection was loaded — loads the collection
    and runs once more, so a long-running reader (``ragkit serve``) recovers by itself."""
    try:
        return call(*args, **kwargs)
    except MilvusException as error:
        client = getattr(call, "__self__", None)
        if not _released(error) or not isinstance(client, MilvusClient) or not args:
            raise failed(address, doing, error) from error
        log.info("%s: %s released (Milvus restarted?); loading it again", address.display, args[0])
        try:
            load(address, client, str(args[0]))
            return call(*args, **kwargs)
        except MilvusException as again:
            raise failed(address, doing, again) from again
    except grpc.RpcError as error:  # the connection itself, below pymilvus's own errors
        raise failed(address, doing, error) from error


def _released(error: MilvusException) -> bool:
    return NOT_LOADED in (error.code, error.compatible_code) or "not loaded" in error.message


def load(address: MilvusAddress, client: MilvusClient, collection: str) -> None:
    """Load ``collection`` into memory unless it is (a restarted Milvus, or one whose
    collections were released, answers nothing until they are)."""
    state = guarded(address, "loading", client.get_load_state, collection)
    if "Loaded" not in str(state.get("state")):
        replicas = {"replica_number": address.replicas} if address.replicas > 1 else {}
        guarded(address, f"loading {collection}", client.load_collection, collection, **replicas)


def failed(address: MilvusAddress, doing: str, error: Exception) -> RagkitError:
    """The one-line error for a Milvus call that failed (the token never shown): a
    :class:`~ragkit.errors.BackendUnavailableError` when Milvus could not be reached."""
    message = error.message if isinstance(error, MilvusException) else str(error)
    if isinstance(error, grpc.RpcError) and callable(getattr(error, "details", None)):
        message = str(error.details())
    message = message.replace(address.token, "***") if address.token else message
    gone = isinstance(error, (*UNAVAILABLE, grpc.RpcError)) or any(
        word in message.lower() for word in GONE
    )
    if gone:
        return BackendUnavailableError(
            f"{address.display}: {doing} failed: Milvus unreachable ({message}); retry when it "
            "is back (start it, or check HOST:PORT)"
        )
    return RagkitError(f"{address.display}: {doing} failed ({message})")


def create(client: MilvusClient, collection: str, dimension: int, shards: int = 1) -> None:
    """Create the chunk (in ``shards`` shards), document and text collections (the state
    collection, which makes the index exist, is created by the caller once these are
    there)."""
    known = names(collection)
    chunks = client.create_schema(auto_id=False, enable_dynamic_field=False)
    chunks.add_field("id", DataType.INT64, is_primary=True)
    for name in ("document_id", "version", "position", "start", "end", "token_count"):
        chunks.add_field(name, DataType.INT64)
    chunks.add_field("chunker", DataType.VARCHAR, max_length=256)
    for name in ("text", "match_text", "terms"):
        chunks.add_field(name, DataType.VARCHAR, max_length=VARCHAR_BYTES)
    chunks.add_field(
        "bm25_text",
        DataType.VARCHAR,
        max_length=VARCHAR_BYTES,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "standard"},
    )
    chunks.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    chunks.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
    chunks.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["bm25_text"],
            output_field_names=["sparse"],
        )
    )
    indexes = client.prepare_index_params()
    indexes.add_index("vector", index_type="HNSW", metric_type="IP", params=HNSW)
    indexes.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=BM25)
    sharded = {"num_shards": shards} if shards > 1 else {}
    client.create_collection(
        known["chunks"],
        schema=chunks,
        index_params=indexes,
        consistency_level="Strong",
        **sharded,
    )

    documents = client.create_schema(auto_id=False, enable_dynamic_field=False)
    documents.add_field("id", DataType.INT64, is_primary=True)
    documents.add_field("version", DataType.INT64)
    for name in ("key", "source", "external_id", "title", "chunking"):
        documents.add_field(name, DataType.VARCHAR, max_length=VARCHAR_BYTES)
    for name in ("content_hash", "script", "language", "language_method"):
        documents.add_field(name, DataType.VARCHAR, max_length=256)
    documents.add_field("language_confidence", DataType.DOUBLE)
    for name in ("characters", "chunk_count", "text_parts"):
        documents.add_field(name, DataType.INT64)
    documents.add_field("metadata", DataType.JSON)
    _create_with_placeholder(client, known["documents"], documents)

    texts = client.create_schema(auto_id=False, enable_dynamic_field=False)
    texts.add_field("id", DataType.INT64, is_primary=True)
    for name in ("document_id", "version", "part"):
        texts.add_field(name, DataType.INT64)
    texts.add_field("text", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    _create_with_placeholder(client, known["texts"], texts)


def create_state(client: MilvusClient, collection: str) -> None:
    """Create the state collection (empty)."""
    state = client.create_schema(auto_id=False, enable_dynamic_field=False)
    state.add_field("name", DataType.VARCHAR, is_primary=True, max_length=256)
    state.add_field("value", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    _create_with_placeholder(client, names(collection)["state"], state)


def _create_with_placeholder(client: MilvusClient, name: str, schema: Any) -> None:
    schema.add_field("placeholder", DataType.FLOAT_VECTOR, dim=len(PLACEHOLDER))
    indexes = client.prepare_index_params()
    indexes.add_index("placeholder", index_type="FLAT", metric_type="L2")
    client.create_collection(name, schema=schema, index_params=indexes, consistency_level="Strong")


def scan(
    address: MilvusAddress,
    client: MilvusClient,
    collection: str,
    fields: list[str],
    expression: str = "",
    params: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Every row of ``collection`` matching ``expression`` (with its template ``params``),
    ``PAGE`` rows at a time (Milvus's query iterator: pages follow the primary key); errors as
    :func:`guarded` gives them."""
    bound = {"expr_params": params} if params else {}  # the iterator's name for filter_params
    pages = guarded(address, f"reading {collection}", client.query_iterator, collection,
                    batch_size=PAGE, filter=expression or "id >= 0", output_fields=fields,
                    **bound)  # fmt: skip
    try:
        while rows := guarded(address, f"reading {collection}", pages.next):
            yield from rows
    finally:
        pages.close()


def id_list(ids: Any) -> str:
    """A Milvus list literal of integer ids (numbers only: nothing a user typed).

    Example:
        >>> id_list([3, 1])
        '[3, 1]'
    """
    return "[" + ", ".join(str(int(i)) for i in ids) + "]"
