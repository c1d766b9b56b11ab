"""Storage: one index folder, committed by generation.

- :mod:`~ragkit.store.store`: :class:`Store`, SQLite rows + FAISS + BM25 with atomic commits;
- :mod:`~ragkit.store.schema`: the SQLite tables, connection settings and migrations;
- :mod:`~ragkit.store.manifest`: ``MANIFEST.json`` (generation, counts, checksums);
- :mod:`~ragkit.store.lock`: the single-writer lock;
- :mod:`~ragkit.store.doctor`: checks an index folder and repairs what can be derived again.

Example:
    >>> from ragkit.store import DB_NAME
    >>> DB_NAME
    'ragkit.sqlite'
"""

from ragkit.store.schema import DB_NAME
from ragkit.store.store import IndexExistsError, PendingDocument, Store, StoredChunk

__all__ = ["DB_NAME", "IndexExistsError", "PendingDocument", "Store", "StoredChunk"]
