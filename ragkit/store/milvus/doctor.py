"""``ragkit doctor`` for a Milvus index: hidden rows of unfinished writes, documents missing
chunks or text, and the notes the folder store gives (tokenizers, language rules).

A writer killed between writing a document's chunks and its document row, or between deleting
a document row and its chunks, leaves rows that searches never show (their version is not
their document's). They are reported as a note — nothing reads them — and ``--repair``
deletes them. A document whose row counts more chunks or text parts than are stored lost rows
(a write rejected by Milvus, or rows deleted by hand): that is a problem, and only ingesting
its file again restores it.

Example:
    >>> found = _diagnosis("milvus://db:19530/notes", generation=3)
    >>> found.healthy, found.hint
    (True, 'run `ragkit doctor --index milvus://db:19530/notes --repair` to delete hidden rows')
"""

from __future__ import annotations

from collections import Counter

from ragkit.normalize.detect import RULES_VERSION
from ragkit.store import language_rules
from ragkit.store.diagnosis import Diagnosis
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import id_list, scan
from ragkit.store.milvus.store import MilvusStore
from ragkit.store.tokenizers import stale_message

__all__ = ["diagnose", "repair"]

Hidden = dict[str, list[int]]  # kind → ids of hidden rows
MILVUS_CHECKS = (
    "Milvus document ↔ chunk ↔ text rows agree (every document has the rows of its version it "
    "counts; Milvus checks its own files)"
)


def _diagnosis(location: str, generation: int) -> Diagnosis:
    return Diagnosis(
        location, generation=generation, repair="delete hidden rows", checked=MILVUS_CHECKS
    )


def diagnose(address: MilvusAddress) -> Diagnosis:
    """Check the index at ``address`` without changing it."""
    store = MilvusStore.open(address)
    try:
        return _diagnose(store)[0]
    finally:
        store.close()


def _diagnose(store: MilvusStore) -> tuple[Diagnosis, Hidden]:
    found = _diagnosis(store.location, store.committed_generation())
    hidden_rows: Hidden = {}
    documents = {
        int(row["id"]): row
        for row in scan(store.address, store.client, store.collections["documents"], ["key", "version",
                                                                       "chunk_count", "text_parts"])
    }  # fmt: skip
    stored: dict[str, Counter[int]] = {}
    for kind in ("chunks", "texts"):
        counted: Counter[int] = Counter()
        hidden = []
        for row in scan(
            store.address, store.client, store.collections[kind], ["document_id", "version"]
        ):
            owner = documents.get(int(row["document_id"]))
            if owner is None or owner["version"] != row["version"]:
                hidden.append(int(row["id"]))
            else:
                counted[int(row["document_id"])] += 1
        stored[kind] = counted
        if hidden:
            hidden_rows[kind] = hidden
            found.notes.append(
                f"{len(hidden)} {kind} rows of unfinished writes or removed documents "
                "(never shown by searches); --repair deletes them"
            )
    for kind, expected in (("chunks", "chunk_count"), ("texts", "text_parts")):
        short = [row["key"] for i, row in documents.items() if stored[kind][i] < row[expected]]
        if short:
            found.problems.append(
                f"{len(short)} documents miss {kind} rows ({', '.join(short[:3])}…); ingest "
                "their files again (rm them first) to restore them"
            )
    found.counts = {"documents": len(documents), "chunks": sum(stored["chunks"].values())}
    if stale := store.stale_tokenizers():
        found.notes.append(stale_message(store.location, stale))
    recorded = store.state_values(language_rules.STATE_KEY).get(language_rules.STATE_KEY)
    held = {language for _, language in store.languages()}
    if language_rules.outdated(int(recorded or RULES_VERSION), held):
        found.notes.append(
            f"{store.location}: some languages were decided by older rules; run `ragkit "
            f"doctor --index {store.location} --reanalyze` once to decide them again"
        )
    return found, hidden_rows


def repair(address: MilvusAddress) -> Diagnosis:
    """Delete hidden rows; then diagnose again. Documents missing rows stay problems."""
    store = MilvusStore.open(address)
    try:
        hidden = _diagnose(store)[1]
        for kind, ids in hidden.items():
            for start in range(0, len(ids), 1000):
                store.delete_rows(kind, f"id in {id_list(ids[start : start + 1000])}")
        after = _diagnose(store)[0]
    finally:
        store.close()
    after.repaired = [f"deleted {len(ids)} hidden {kind} rows" for kind, ids in hidden.items()]
    return after
