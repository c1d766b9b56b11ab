"""Near-duplicate signatures and groups of a Milvus index, kept in its state collection.

One state row per document: name ``minhash:<first 40 hex digits of the SHA-256 of its key>``
(a name of ragkit's own making, so expressions hold no user text), value the JSON object
``{"key", "signature" (base64), "group" (a key, or null)}`` — the same data as the folder's
``near_duplicates`` table (:mod:`ragkit.store.folder.near_duplicates`). Derived data, written
after an ingest's commits; an index written before it existed has no such rows until its next
ingest.

Example:
    >>> row_name("/docs/a.txt")
    'minhash:f238fe284c35edf8147efd7e6f0916910d5e3831'
    >>> entry(value("/docs/a.txt", b"\\x01\\x02", None))
    ('/docs/a.txt', b'\\x01\\x02', None)
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping

from pymilvus import MilvusClient

from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import guarded, scan
from ragkit.store.milvus.lifecycle import state_row

PREFIX = "minhash:"
BATCH = 256  # rows per upsert, names per lookup or delete


def row_name(key: str) -> str:
    """The state row name of document ``key``'s entry."""
    return PREFIX + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def value(key: str, signature: bytes, group: str | None) -> str:
    """The state row value of an entry."""
    encoded = base64.b64encode(signature).decode("ascii")
    return json.dumps({"key": key, "signature": encoded, "group": group}, ensure_ascii=False)


def entry(text: str) -> tuple[str, bytes, str | None]:
    """``(key, signature, group)`` of a state row value."""
    found = json.loads(text)
    return found["key"], base64.b64decode(found["signature"]), found.get("group")


class NearDuplicateRows:
    """The entries of one index's state collection ``state``."""

    def __init__(self, address: MilvusAddress, client: MilvusClient, state: str) -> None:
        self.address = address
        self.client = client
        self.state = state

    def _all(self) -> Iterable[tuple[str, bytes, str | None]]:
        rows = scan(
            self.address, self.client, self.state, ["name", "value"], f'name like "{PREFIX}%"'
        )
        return (entry(row["value"]) for row in rows)

    def signatures(self) -> dict[str, bytes]:
        return {key: signature for key, signature, _ in self._all()}

    def groups(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        if keys is None:
            return {key: group for key, _, group in self._all() if group is not None}
        names = list(dict.fromkeys(row_name(key) for key in keys))
        found: dict[str, str] = {}
        for start in range(0, len(names), BATCH):
            rows = guarded(
                self.address,
                "reading near-duplicate groups",
                self.client.query,
                self.state,
                filter=f"name in {json.dumps(names[start : start + BATCH])}",
                output_fields=["name", "value"],
            )
            for row in rows:
                key, _, group = entry(row["value"])
                if group is not None:
                    found[key] = group
        return found

    def write(self, rows: Mapping[str, tuple[bytes, str | None]], removed: Iterable[str]) -> None:
        gone = [row_name(key) for key in removed]
        for start in range(0, len(gone), BATCH):
            guarded(
                self.address,
                "removing near-duplicate entries",
                self.client.delete,
                self.state,
                filter=f"name in {json.dumps(gone[start : start + BATCH])}",
            )
        written = [
            state_row(row_name(key), value(key, signature, group))
            for key, (signature, group) in rows.items()
        ]
        for start in range(0, len(written), BATCH):
            guarded(
                self.address,
                "writing near-duplicate entries",
                self.client.upsert,
                self.state,
                written[start : start + BATCH],
            )
