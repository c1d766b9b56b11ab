"""The metadata keys of a Milvus index and the kinds of value each ever held, kept in its state
collection: what filters need to know without reading every document.

One state row per key and kind (:func:`ragkit.store.filters.json_kind`: null, bool, number,
text, list, object): name ``metadata:<first 40 hex digits of the SHA-256 of key and kind>``
(a name of ragkit's own making, so expressions hold no user text), value ``{"key", "kind"}``.
A row, once written, is never rewritten: writers at once upsert the same rows, and none can
undo another's (no read-modify-write of one shared row). A commit writes the rows of its
documents' keys and kinds before their document rows, and counts a generation when it wrote
any, so a reader re-reads the record before a document with a new kind is visible. The row
``metadata-recorded`` says the record covers every document: an index created before records
were kept gets it at its next commit, which reads every document's metadata once.

Rows stay when documents go: a key every document of which was removed is still known (a
filter on it finds nothing instead of calling it mistyped), and a kind stays possible (a
filter's Milvus expression stays as wide as it was).

Example:
    >>> row_name("year", "number")
    'metadata:08abb1307809c1d63d34339c96cb3e78c1a72e1d'
    >>> sorted(kinds_of([{"year": 2020, "tags": ["x"]}, {"year": "2021"}]))
    [('tags', 'list'), ('year', 'number'), ('year', 'text')]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pymilvus import MilvusClient

from ragkit.store.filters import json_kind
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import guarded, scan
from ragkit.store.milvus.lifecycle import state_row

__all__ = ["MetadataKinds", "kinds_of", "row_name"]

PREFIX = "metadata:"
RECORDED = "metadata-recorded"
BATCH = 256  # rows per upsert

Kinds = dict[str, set[str]]


def row_name(key: str, kind: str) -> str:
    """The state row name of ``key`` holding a value of ``kind``."""
    joined = f"{key}\x1f{kind}".encode("utf-8", "surrogatepass")
    return PREFIX + hashlib.sha256(joined).hexdigest()[:40]


def kinds_of(metadata: Iterable[Mapping[str, Any] | None]) -> set[tuple[str, str]]:
    """Every ``(key, kind)`` the metadata dicts hold."""
    return {(key, json_kind(value)) for held in metadata for key, value in (held or {}).items()}


class MetadataKinds:
    """The record in one index's state collection ``state``."""

    def __init__(self, address: MilvusAddress, client: MilvusClient, state: str) -> None:
        self.address = address
        self.client = client
        self.state = state

    def read(self) -> Kinds | None:
        """Each key and the kinds its values held; None when the record does not cover every
        document (an index created before records were kept, not committed to since)."""
        marker = guarded(self.address, "reading the metadata record", self.client.query,
                         self.state, filter=f'name == "{RECORDED}"', output_fields=["name"])  # fmt: skip
        if not marker:
            return None
        found: Kinds = {}
        for row in scan(self.address, self.client, self.state, ["value"], f'name like "{PREFIX}%"'):
            entry = json.loads(row["value"])
            found.setdefault(entry["key"], set()).add(entry["kind"])
        return found

    def record(
        self,
        metadata: Iterable[Mapping[str, Any] | None],
        everything: Callable[[], Iterable[Mapping[str, Any] | None]],
    ) -> bool:
        """Record the keys and kinds of ``metadata`` (every stored document's too, read by
        ``everything``, when the record does not cover them yet); whether any row was new."""
        known = self.read()
        held = kinds_of(metadata)
        if known is None:
            held |= kinds_of(everything())
        else:
            held = {(key, kind) for key, kind in held if kind not in known.get(key, ())}
        rows = [state_row(row_name(key, kind), json.dumps({"key": key, "kind": kind}))
                for key, kind in sorted(held)]  # fmt: skip
        if known is None:
            rows.append(state_row(RECORDED, "1"))
        for start in range(0, len(rows), BATCH):
            guarded(self.address, "recording metadata keys", self.client.upsert, self.state,
                    rows[start : start + BATCH])  # fmt: skip
        return bool(rows)

    def start(self) -> None:
        """Mark the record of a new, empty index as covering every document."""
        guarded(self.address, "recording metadata keys", self.client.upsert, self.state,
                [state_row(RECORDED, "1")])  # fmt: skip
